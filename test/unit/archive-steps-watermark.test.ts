import { retryNotDue, uniqueRetry } from '../../shared/archive/steps/plan/watermark';

const at = new Date('2026-03-10T12:00:00.000Z');

describe('retry entries of the plan watermark', () => {
  it('an entry waiting for grace is due once the planning run’s own graceHours have passed since', () => {
    const r = { shopId: 's', jobId: 'j', graceFrom: '2026-03-10T11:30:00.000Z' };
    expect(retryNotDue(r, at, 1)).toBe(true); // 30 min of a 1 h grace
    expect(retryNotDue(r, at, 0.5)).toBe(false);
    expect(retryNotDue(r, at, 0)).toBe(false); // a run with no grace deletes at once
  });

  it('notBefore is a fixed time, whatever the grace', () => {
    const r = { shopId: 's', jobId: 'j', notBefore: '2026-03-10T13:00:00.000Z' };
    expect(retryNotDue(r, at, 0)).toBe(true);
    expect(retryNotDue({ shopId: 's', jobId: 'j' }, at, 24)).toBe(false);
  });

  it('keeps one entry per job, the later wait, and a revisit from either', () => {
    const out = uniqueRetry([
      { shopId: 's', jobId: 'j', graceFrom: '2026-03-10T11:00:00.000Z' },
      { shopId: 's', jobId: 'j', notBefore: '2026-03-10T13:00:00.000Z', revisit: true },
      { shopId: 's', jobId: 'k' },
    ]);
    expect(out).toEqual([
      { shopId: 's', jobId: 'j', notBefore: '2026-03-10T13:00:00.000Z', revisit: true },
      { shopId: 's', jobId: 'k' },
    ]);
  });
});
