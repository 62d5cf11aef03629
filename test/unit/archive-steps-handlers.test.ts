import { archiveBatchHandler } from '../../functions/archive-batch';
import {
  boundError,
  ERROR_MESSAGE_MAX,
  ERROR_STACK_MAX,
  withBoundedErrors,
} from '../../functions/bounded-errors';
import { lambdaWiring } from '../../functions/deps';
import { planHandler } from '../../functions/plan';
import { powertoolsSink } from '../../functions/powertools';
import { reportHandler } from '../../functions/report';
import { tallyHandler } from '../../functions/tally';
import { capturingSink } from '../../infra/local/capture';
import { InvalidInputError } from '../../shared/errors';

/**
 * The handlers are thin: a malformed event is a named InvalidInputError and no request is sent. Their
 * factories take the deps and the log/metric sink; Lambda wires both from its environment once.
 */
const LAMBDA_ENV = { ECOM_JOB_DETAILS_BUCKET: 'unit-bucket', ECOM_JOBS_TABLE: 'unit-table' };
const wired = lambdaWiring(LAMBDA_ENV);
const deps = () => wired.deps;
let sink = capturingSink();
const logged = () => sink.logs;
beforeEach(() => {
  sink = capturingSink();
});
afterAll(() => wired.deps.s3.destroy());

test.each([
  ['plan', { state: { dryRun: 'yes' }, execution: 'e', startTime: '2026-01-01T00:00:00Z' }, 'state.dryRun'],
  ['plan', { state: {}, startTime: '2026-01-01T00:00:00Z' }, 'execution'],
  ['archive-batch', { batch: {} }, 'run'],
  ['archive-batch', null, 'event'],
  ['tally', { run: {}, page: 0 }, 'run.runId'],
  ['report', 'x', 'event'],
] as const)('%s rejects a malformed event naming %s, before any request', async (step, event, field) => {
  const factories = {
    plan: planHandler,
    'archive-batch': archiveBatchHandler,
    tally: tallyHandler,
    report: reportHandler,
  };
  const h = factories[step](deps, sink) as (e: unknown) => Promise<unknown>;
  const err = await h(event).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  expect((err as InvalidInputError).field).toBe(field);
  expect(wired.deps.meter.total).toEqual({ s3: 0, dynamodb: 0, byType: {} });
});

test('the Lambda wiring reads the environment it is given: names, settings, a missing bucket', () => {
  expect(wired.deps).toMatchObject({ bucket: 'unit-bucket', table: 'unit-table' });
  const other = lambdaWiring({ ...LAMBDA_ENV, ECOM_JOB_DETAILS_BUCKET: 'other', JDA_READ_CONCURRENCY: '3' });
  expect(other.deps).toMatchObject({ bucket: 'other', settings: { readConcurrency: 3 } });
  other.deps.s3.destroy();
  expect(() => lambdaWiring({ ECOM_JOBS_TABLE: 'unit-table' })).toThrow(/ECOM_JOB_DETAILS_BUCKET/);
});

test('the Lambda sink is Powertools: one JSON log line with the invocation keys, EMF metrics with the service', () => {
  const lines: string[] = [];
  const take = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  // Powertools writes through a Console of its own over stdout and stderr (warnings go to stderr).
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(take);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(take);
  try {
    const s = powertoolsSink({ serviceName: 'svc-unit', namespace: 'NsUnit' });
    s.logger({ runId: 'run-7', shopId: 'shop-a' }).warn('group failed', { month: '2026-03' });
    s.publish([{ name: 'JobsArchived', unit: 'Count', value: 4 }]);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  const docs = lines
    .join('')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(docs).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        level: 'WARN',
        message: 'group failed',
        service: 'svc-unit',
        runId: 'run-7',
        shopId: 'shop-a',
        month: '2026-03',
      }),
      expect.objectContaining({
        JobsArchived: 4,
        service: 'svc-unit',
        _aws: expect.objectContaining({
          CloudWatchMetrics: [expect.objectContaining({ Namespace: 'NsUnit', Dimensions: [['service']] })],
        }),
      }),
    ]),
  );
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
    const h = withBoundedErrors(sink, async () => {
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
    expect(logged()).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        runId: 'run-1',
        shopId: 'shop-a',
        month: '2026-03',
        error: { name: 'AccessDenied', message: expect.any(String), stack: fullStack },
      }),
    ]);
    expect((logged()[0]?.error as { message?: string } | undefined)?.message).toHaveLength(2016);
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
    await expect(withBoundedErrors(sink, async () => 42)({ execution: 'exec-9' })).resolves.toBe(42);
    expect(logged()).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'step done', runId: 'exec-9' }),
    ]);
  });
});
