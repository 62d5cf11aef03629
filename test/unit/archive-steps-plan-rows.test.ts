import {
  classifyPlanRow,
  PlanPage,
  type RowVerdict,
  startKeyOf,
} from '../../shared/archive/steps/plan/plan-rows';

const row = (over: Record<string, unknown> = {}) => ({
  pk: 'SHOP#shop-a',
  sk: 'JOB#job1',
  job_id: 'job1',
  job_status: 'FAILED',
  status_created_at: '2026-03-31T23:59:59.000Z',
  completed_at: '2026-03-31T23:59:59.000Z',
  created_at: '2026-03-31T22:00:00.000Z',
  job_type: 'full_sync',
  platform: 'shopify',
  retry_count: 2,
  is_internal: false,
  ...over,
});

const CUTOFF = '2027-01-01T00:00:00.000Z';

describe('classifyPlanRow', () => {
  test('a good row is planned in the UTC month of completed_at, with its projected attributes', () => {
    const v = classifyPlanRow(row(), 'FAILED', CUTOFF);
    expect(v).toEqual({
      kind: 'plan',
      shopId: 'shop-a',
      month: '2026-03',
      job: expect.objectContaining({
        job_id: 'job1',
        status: 'FAILED',
        completed_at: '2026-03-31T23:59:59.000Z',
        job_type: 'full_sync',
        retry_count: 2,
        is_internal: false,
        error_message: null,
        started_at: null,
      }),
    });
  });

  test('eligibility is completed_at < cutoff, whatever status_created_at says', () => {
    // Python indexer: status_created_at is the IN_PROGRESS transition, months before completion.
    const py = row({
      status_created_at: '2026-01-02T00:00:00.000000+00:00',
      completed_at: '2026-12-30T09:00:00+00:00',
    });
    expect(classifyPlanRow(py, 'FAILED', CUTOFF)).toMatchObject({ kind: 'plan', month: '2026-12' });
    expect(classifyPlanRow(py, 'FAILED', '2026-12-30T09:00:00.000Z')).toEqual({ kind: 'later' });
    expect(classifyPlanRow(py, 'FAILED', '2026-12-30T09:00:00.001Z')).toMatchObject({ kind: 'plan' });
  });

  test('Python isoformat timestamps are normalized to UTC; the month is the UTC month', () => {
    const v = classifyPlanRow(row({ completed_at: '2026-04-01T01:30:00.123456+02:00' }), 'FAILED', CUTOFF);
    expect(v).toMatchObject({
      kind: 'plan',
      month: '2026-03',
      job: { completed_at: '2026-03-31T23:30:00.123Z' },
    });
  });

  test('a terminal row without completed_at is reported, not guessed from status_created_at', () => {
    const v = classifyPlanRow(row({ completed_at: undefined }), 'FAILED', CUTOFF);
    expect(v).toMatchObject({
      kind: 'quarantine',
      entry: { reason: expect.stringContaining('has no completed_at') },
    });
  });

  test.each([
    ['pk not SHOP#', { pk: 'TENANT#x' }, 'pk is not SHOP#{shop_id}'],
    ['sk not JOB#', { sk: 'CHUNK#1' }, 'sk is not JOB#{job_id}'],
    ['shop id with a slash', { pk: 'SHOP#a/b' }, /invalid shop id/],
    ['job id with ..', { sk: 'JOB#a..b', job_id: 'a..b' }, /invalid job id/],
    ['job id with a control character', { sk: 'JOB#a\u0001', job_id: 'a\u0001' }, /control character/],
    ['job_id attribute mismatch', { job_id: 'other' }, 'job_id attribute does not match sk'],
    ['wrong status', { job_status: 'IN_PROGRESS' }, /not the terminal status queried/],
    [
      'no timestamp',
      { completed_at: 'soon', status_created_at: 'later' },
      'completed_at: "soon" is not an ISO-8601 timestamp with a UTC offset',
    ],
    [
      'a time without an offset',
      { completed_at: '2026-03-31T23:59:59.123456' },
      'completed_at: "2026-03-31T23:59:59.123456" has no UTC offset (expected Z or ±HH:MM)',
    ],
    ['a number', { completed_at: 1712345678 }, /completed_at: .*1712345678/],
  ])('%s is quarantined with a reason', (_what, over, reason) => {
    const v = classifyPlanRow(row(over), 'FAILED', CUTOFF);
    expect(v.kind).toBe('quarantine');
    if (v.kind === 'quarantine')
      expect(v.entry.reason).toEqual(typeof reason === 'string' ? reason : expect.stringMatching(reason));
  });

  test('quarantined unsafe ids are reported quoted-as-is but never longer than 100 characters', () => {
    const v = classifyPlanRow(row({ sk: `JOB#${'x/'.repeat(200)}`, job_id: undefined }), 'FAILED', CUTOFF);
    if (v.kind !== 'quarantine') throw new Error('expected quarantine');
    expect(v.entry.jobId.length).toBeLessThanOrEqual(100);
    expect(v.entry.shopId).toBe('shop-a');
  });

  test('startKeyOf gives the GSI key Plan resumes after', () => {
    expect(startKeyOf(row())).toEqual({
      pk: 'SHOP#shop-a',
      sk: 'JOB#job1',
      job_status: 'FAILED',
      status_created_at: '2026-03-31T23:59:59.000Z',
    });
  });
});

describe('PlanPage', () => {
  const plan = (
    shop: string,
    month: string,
    id: string,
    completedAt = `${month}-10T00:00:00.000Z`,
  ): RowVerdict =>
    classifyPlanRow(
      row({ pk: `SHOP#${shop}`, sk: `JOB#${id}`, job_id: id, completed_at: completedAt }),
      'FAILED',
      CUTOFF,
    );

  test('stops opening groups at the limit but keeps adding to open groups and quarantines', () => {
    const page = new PlanPage(2);
    for (const v of [plan('a', '2026-01', 'j1'), plan('b', '2026-01', 'j2')]) page.add(v);
    expect(page.fits(plan('c', '2026-01', 'j3'))).toBe(false);
    expect(page.fits(plan('a', '2026-01', 'j4'))).toBe(true);
    expect(page.fits(classifyPlanRow(row({ pk: 'bad' }), 'FAILED', CUTOFF))).toBe(true);
  });

  test('groups come out sorted by shop then month, jobs by id', () => {
    const page = new PlanPage(10);
    for (const v of [
      plan('b', '2026-02', 'z'),
      plan('a', '2026-03', 'y'),
      plan('a', '2026-01', 'x'),
      plan('b', '2026-02', 'a'),
    ]) {
      page.add(v);
    }
    const groups = page.result();
    expect(groups.map((g) => [g.shopId, g.month, g.jobs.length])).toEqual([
      ['a', '2026-01', 1],
      ['a', '2026-03', 1],
      ['b', '2026-02', 2],
    ]);
    expect(groups[2]?.jobs.map((j) => j.job_id)).toEqual(['a', 'z']);
    expect(page.jobsPlanned).toBe(4);
  });

  test('a job seen twice (status changed while reading) is planned once, with its latest completion', () => {
    const page = new PlanPage(10);
    page.add(plan('a', '2026-01', 'j', '2026-01-05T00:00:00.000Z'));
    page.add(plan('a', '2026-01', 'j', '2026-01-09T00:00:00.000Z'));
    page.add(plan('a', '2026-01', 'j', '2026-01-07T00:00:00.000Z'));
    const [g] = page.result();
    expect(g?.jobs).toHaveLength(1);
    expect(g?.jobs[0]?.completed_at).toBe('2026-01-09T00:00:00.000Z');
    expect(page.jobsPlanned).toBe(1);
  });

  test('every quarantine is kept (for the page findings) and none takes a group slot', () => {
    const page = new PlanPage(1);
    for (let i = 0; i < 5; i++) page.add(classifyPlanRow(row({ pk: `bad${i}` }), 'FAILED', CUTOFF));
    expect(page.quarantined.map((q) => q.shopId)).toEqual(['bad0', 'bad1', 'bad2', 'bad3', 'bad4']);
    expect(page.fits(plan('a', '2026-01', 'x'))).toBe(true);
  });
});
