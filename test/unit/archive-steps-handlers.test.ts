import { handler as archiveGroup } from '../../functions/archive-group';
import { handler as commitPart } from '../../functions/commit-part';
import { handler as deleteSources } from '../../functions/delete-sources';
import { getDeps, resetDeps } from '../../functions/deps';
import { handler as plan } from '../../functions/plan';
import { handler as report } from '../../functions/report';
import { handler as tally } from '../../functions/tally';
import { handler as verifyPart } from '../../functions/verify-part';
import { InvalidInputError } from '../../shared/errors';

/** The handlers are thin: a malformed event is a named InvalidInputError and no request is sent. */
const saved = { ...process.env };
beforeEach(() => {
  process.env.ECOM_JOB_DETAILS_BUCKET = 'unit-bucket';
  process.env.ECOM_JOBS_TABLE = 'unit-table';
  resetDeps();
});
afterAll(() => {
  process.env = saved;
  resetDeps();
});

test.each([
  [
    'plan',
    plan,
    { state: { dryRun: 'yes' }, execution: 'e', startTime: '2026-01-01T00:00:00Z' },
    'state.dryRun',
  ],
  ['plan', plan, { state: {}, startTime: '2026-01-01T00:00:00Z' }, 'execution'],
  ['archive-group', archiveGroup, { group: {} }, 'run'],
  ['verify-part', verifyPart, {}, 'run'],
  ['commit-part', commitPart, null, 'event'],
  ['delete-sources', deleteSources, [], 'event'],
  ['tally', tally, { run: {}, page: 0 }, 'run.runId'],
  ['report', report, 'x', 'event'],
])('%s rejects a malformed event naming %s, before any request', async (_step, h, event, field) => {
  const err = await (h as (e: unknown) => Promise<unknown>)(event).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  expect((err as InvalidInputError).field).toBe(field);
  expect(getDeps().meter.total).toEqual({ s3: 0, dynamodb: 0 });
});

test('getDeps builds once from the environment; resetDeps re-reads it', () => {
  const a = getDeps();
  expect(getDeps()).toBe(a);
  expect(a).toMatchObject({ bucket: 'unit-bucket', table: 'unit-table' });
  process.env.ECOM_JOB_DETAILS_BUCKET = 'other-bucket';
  process.env.JDA_READ_CONCURRENCY = '3';
  resetDeps();
  expect(getDeps()).toMatchObject({ bucket: 'other-bucket', settings: { readConcurrency: 3 } });
  delete process.env.ECOM_JOB_DETAILS_BUCKET;
  resetDeps();
  expect(() => getDeps()).toThrow(/ECOM_JOB_DETAILS_BUCKET/);
});
