import { handler as archiveBatch } from '../../functions/archive-batch';
import {
  boundError,
  ERROR_MESSAGE_MAX,
  ERROR_STACK_MAX,
  withBoundedErrors,
} from '../../functions/bounded-errors';
import { getDeps, resetDeps } from '../../functions/deps';
import { resetObservability } from '../../functions/observability';
import { handler as plan } from '../../functions/plan';
import { handler as report } from '../../functions/report';
import { handler as tally } from '../../functions/tally';
import { InvalidInputError } from '../../shared/errors';

/** The handlers are thin: a malformed event is a named InvalidInputError and no request is sent. */
const saved = { ...process.env };
let logged: Record<string, unknown>[] = [];
beforeEach(() => {
  process.env.ECOM_JOB_DETAILS_BUCKET = 'unit-bucket';
  process.env.ECOM_JOBS_TABLE = 'unit-table';
  resetDeps();
  // Powertools in dev mode writes to the global console, where the test reads its JSON lines.
  process.env.POWERTOOLS_DEV = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  resetObservability();
  logged = [];
  const take = (...args: unknown[]) => {
    logged.push(JSON.parse(String(args[0])) as Record<string, unknown>);
  };
  jest.spyOn(console, 'error').mockImplementation(take);
  jest.spyOn(console, 'info').mockImplementation(take);
});
afterEach(() => {
  jest.restoreAllMocks();
  process.env = { ...saved, ECOM_JOB_DETAILS_BUCKET: 'unit-bucket', ECOM_JOBS_TABLE: 'unit-table' };
  resetObservability();
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
  ['archive-batch', archiveBatch, { batch: {} }, 'run'],
  ['archive-batch', archiveBatch, null, 'event'],
  ['tally', tally, { run: {}, page: 0 }, 'run.runId'],
  ['report', report, 'x', 'event'],
])('%s rejects a malformed event naming %s, before any request', async (_step, h, event, field) => {
  const err = await (h as (e: unknown) => Promise<unknown>)(event).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  expect((err as InvalidInputError).field).toBe(field);
  expect(getDeps().meter.total).toEqual({ s3: 0, dynamodb: 0, byType: {} });
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

describe('what a handler error leaves behind (the Task Cause lands in the 256 KB state)', () => {
  const longError = () => {
    const err = new Error(`not authorized: ${'x'.repeat(2000)}`);
    err.name = 'AccessDenied';
    return err;
  };

  test('message and stack are cut, the name (Retry/Catch match on it) is kept, the full error is logged', async () => {
    const thrown = longError();
    const fullStack = thrown.stack;
    const h = withBoundedErrors(async () => {
      throw thrown;
    });
    const event = { run: { runId: 'run-1' }, group: { shopId: 'shop-a', month: '2026-03' } };
    const err = (await h(event).catch((e: unknown) => e)) as Error;
    expect(err).toBe(thrown);
    expect(err.name).toBe('AccessDenied');
    expect(err.message).toHaveLength(ERROR_MESSAGE_MAX);
    expect(err.message.startsWith('not authorized: xxx')).toBe(true);
    expect(err.stack).toHaveLength(ERROR_STACK_MAX);
    expect(err.stack?.split('\n')).toHaveLength(1);
    // As Lambda builds the Cause from it: well under 1 KB.
    const cause = JSON.stringify({
      errorType: err.name,
      errorMessage: err.message,
      trace: err.stack?.split('\n'),
    });
    expect(cause.length).toBeLessThan(ERROR_MESSAGE_MAX + ERROR_STACK_MAX + 100);
    // One structured line, with the run and group keys, carrying the whole error.
    expect(logged).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        runId: 'run-1',
        shopId: 'shop-a',
        month: '2026-03',
        error: { name: 'AccessDenied', message: expect.any(String), stack: fullStack },
      }),
    ]);
    expect((logged[0]?.error as { message?: string } | undefined)?.message).toHaveLength(2016);
  });

  test('typed fields survive (InvalidInputError keeps `field`); a short, one-line error is left alone', () => {
    const e = new InvalidInputError('state.now', 'too late');
    expect(boundError(e)).toBe(true); // its stack had frames
    expect(e).toBeInstanceOf(InvalidInputError);
    expect(e.field).toBe('state.now');
    expect(e.stack).toBe('InvalidInputError: invalid state.now: too late');
    expect(boundError(e)).toBe(false);
  });

  test('a successful handler is untouched (one INFO line with its run)', async () => {
    await expect(withBoundedErrors(async () => 42)({ execution: 'exec-9' })).resolves.toBe(42);
    expect(logged).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'step done', runId: 'exec-9' }),
    ]);
  });
});
