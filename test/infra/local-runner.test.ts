import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { ArchiverStep } from '../../infra/construct/step-functions';
import { LocalStackError, UnsupportedLocallyError } from '../../infra/local/errors';
import {
  assertNodeForLocalRuns,
  type RunArchiverLocallyOptions,
  runArchiverLocally,
  type StateMachineDefinition,
  type StepHandler,
  synthesizedDefinition,
} from '../../infra/local/runner';
import { ConcurrentModificationError, InvalidInputError, VerificationError } from '../../shared/errors';
import { freshBucket, testS3 } from '../support/local';

/**
 * The REAL synthesized archiver definition, executed by the local runner with canned handlers. The
 * Distributed Map's ItemReader and ResultWriter are emulated against s3rver, so the canned Plan
 * writes a real plan file and the canned Tally reads the real results.
 * (The end-to-end run with the real handlers and emulators is the archiver's test.)
 */
let definition: StateMachineDefinition;
let bucket: string;
const s3 = testS3();
beforeAll(async () => {
  definition = synthesizedDefinition();
  bucket = await freshBucket();
});

// biome-ignore lint/suspicious/noExplicitAny: events are asserted field by field
type Ev = any;
const group = (shopId: string) => ({ shopId, month: '2026-01', jobCount: 2 });
const G1 = group('shop-a');
const G2 = group('shop-b'); // its archive stage writes no part
const G3 = group('shop-c');

const putText = (key: string, body: string) =>
  s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
const getJson = async (key: string): Promise<Ev> => {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return JSON.parse((await out.Body?.transformToString()) ?? 'null');
};

/**
 * Two pages: page 0 plans two batches ([G1, G2], [G3]), page 1 plans nothing. Records every event
 * each step received; Tally returns the Map run's results it read through the ResultWriter manifest.
 */
const cannedHandlers = (overrides: Partial<Record<ArchiverStep, StepHandler>> = {}) => {
  const events: Record<string, Ev[]> = {};
  const tallied: Ev[][] = [];
  const record =
    (step: ArchiverStep, fn: (e: Ev) => unknown): StepHandler =>
    async (e) => {
      events[step] = [...(events[step] ?? []), e];
      const override = overrides[step];
      return override ? override(e, undefined as never) : fn(e);
    };
  const handlers: Record<ArchiverStep, StepHandler> = {
    plan: record('plan', async (e) => {
      const first = e.state.run === undefined;
      const run = first ? { runId: e.execution, startedAt: e.startTime } : e.state.run;
      const page = first ? 0 : e.state.page;
      const batchesKey = `job-details-runs/${run.runId}/plan/${page}/batches.jsonl`;
      const batches = first
        ? [
            { page, batch: 0, groups: [G1, G2] },
            { page, batch: 1, groups: [G3] },
          ]
        : [];
      await putText(batchesKey, batches.map((b) => `${JSON.stringify(b)}\n`).join(''));
      return {
        run,
        // A page without batches is complete (Plan's contract): the state machine skips Tally.
        page: first ? page : page + 1,
        cursor: first ? 'more' : null,
        batches: batches.length,
        groups: first ? 3 : 0,
        batchesKey,
        resultsPrefix: `job-details-runs/${run.runId}/results/${page}`,
        totals: first ? { groups: 0 } : e.state.totals,
      };
    }),
    'archive-batch': record('archive-batch', (e) => ({
      results: e.batch.groups.map((g: Ev) => ({
        group: { shopId: g.shopId, month: g.month },
        archived: g.shopId === G2.shopId ? 0 : 2,
      })),
    })),
    tally: record('tally', async (e) => {
      const results: Ev[] = [];
      if (e.mapRun) {
        const manifest = await getJson(e.mapRun.ResultWriterDetails.Key);
        for (const f of manifest.ResultFiles.SUCCEEDED) {
          for (const child of await getJson(f.Key)) results.push(...JSON.parse(child.Output).results);
        }
        for (const f of manifest.ResultFiles.FAILED) {
          for (const child of await getJson(f.Key))
            results.push({
              failedBatch: JSON.parse(child.Input).batch.batch,
              error: child.Error,
              cause: child.Cause,
            });
        }
      }
      tallied.push(results);
      return {
        run: e.run,
        page: e.page + 1,
        cursor: e.cursor,
        totals: { groups: e.totals.groups + results.length },
      };
    }),
    // Report always says how many redactions wait (RunComplete compares it): none here.
    report: record('report', (e) => ({
      report: `${e.totals.groups} groups`,
      run: e.run.runId,
      erasurePendingRedactions: 0,
    })),
    forget: record('forget', (e) => ({ forgot: e.forget.shopId })),
    redact: record('redact', (e) => ({ redacted: e.redact.shopId })),
  };
  return { handlers, events, tallied };
};

/** A local run of `handlers` (default: the canned ones), the Distributed Map on this file's bucket. */
const runCanned = (
  opts: Omit<RunArchiverLocallyOptions, 'handlers' | 'bucket' | 'mapS3'> & {
    handlers?: Record<ArchiverStep, StepHandler>;
  },
) =>
  runArchiverLocally({
    ...opts,
    handlers: () => opts.handlers ?? cannedHandlers().handlers,
    bucket,
    mapS3: testS3,
  });

describe('runArchiverLocally (synthesized definition, canned handlers, emulated Distributed Map)', () => {
  it('routes an input with `forget` to the Forget Task alone (docs/erasure.md)', async () => {
    const { handlers, events } = cannedHandlers();
    const result = await runCanned({
      definition,
      handlers,
      input: { forget: { shopId: 'shop-a' } },
      executionName: 'forget-1',
    });
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({ forgot: 'shop-a' });
    expect(result.taskInvocations).toEqual({
      Plan: 0,
      ArchiveBatch: 0,
      Tally: 0,
      Report: 0,
      Forget: 1,
      Redact: 0,
      RedactPending: 0,
    });
    expect(events.forget).toEqual([
      { forget: { shopId: 'shop-a' }, execution: 'forget-1', runTimeoutSeconds: expect.any(Number) },
    ]);
  });

  it('routes an input with `redact` to the Redact Task alone', async () => {
    const { handlers, events } = cannedHandlers();
    const input = { redact: { shopId: 'shop-a', docId: 'gid://shopify/Customer/1' } };
    const result = await runCanned({ definition, handlers, input, executionName: 'redact-1' });
    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({ redacted: 'shop-a' });
    expect(result.taskInvocations).toEqual({
      Plan: 0,
      ArchiveBatch: 0,
      Tally: 0,
      Report: 0,
      Forget: 0,
      Redact: 1,
      RedactPending: 0,
    });
    expect(events.redact).toEqual([{ ...input, execution: 'redact-1' }]);
  });

  it('runs every page through Plan → batches → Tally until the cursor is null, then Report', async () => {
    const { handlers, events, tallied } = cannedHandlers();
    const before = JSON.stringify(definition);
    const result = await runCanned({
      definition,
      handlers,
      input: { dryRun: true },
      executionName: 'nightly-1',
    });

    expect(result.status).toBe('SUCCEEDED');
    // The caller's definition is left as it was (the interpreter rewrites what it is given; a rewritten
    // definition had new JSON on every run and was validated again each time).
    expect(JSON.stringify(definition)).toBe(before);
    // CPU inside the handlers is measured, split between steps without counting anything twice.
    const stepCpu = Object.values(result.steps).reduce((a, v) => a + v.cpuSeconds, 0);
    expect(result.handlerCpuSeconds).toBeGreaterThan(0);
    expect(stepCpu).toBeCloseTo(result.handlerCpuSeconds, 6);
    expect(result.handlerCpuSeconds).toBeLessThanOrEqual(result.cpuSeconds);
    expect(result.output).toEqual({ report: '3 groups', run: 'nightly-1', erasurePendingRedactions: 0 });
    // One invocation per batch; page 1 had no batches (HasBatches skipped the Map and Tally).
    expect(result.taskInvocations).toEqual({
      Plan: 2,
      ArchiveBatch: 2,
      Tally: 1,
      Report: 1,
      Forget: 0,
      Redact: 0,
      RedactPending: 0,
    });
    expect(result.childExecutions).toBe(2);
    expect(result.handlerErrors).toEqual([]);
    expect(result.unexpectedErrors).toEqual([]);

    // $$.Execution.Name / StartTime resolve; the first Plan sees the execution input as its state.
    const [first, second] = events.plan ?? [];
    expect(first).toEqual({ state: { dryRun: true }, execution: 'nightly-1', startTime: expect.any(String) });
    expect(second.state).toMatchObject({
      run: { runId: 'nightly-1' },
      page: 1,
      cursor: 'more',
      totals: { groups: 3 },
    });

    // ItemSelector: each child gets {run, batch} with the batch line read from the plan file.
    expect(events['archive-batch']?.map((e: Ev) => e.batch.groups.map((g: Ev) => g.shopId)).sort()).toEqual([
      ['shop-a', 'shop-b'],
      ['shop-c'],
    ]);
    expect(events['archive-batch']?.[0].run).toEqual({ runId: 'nightly-1', startedAt: first.startTime });
    expect(Object.keys(events['archive-batch']?.[0]).sort()).toEqual(['batch', 'run']);

    // Tally found every child's output through the ResultWriter manifest; page 1 ran no Map.
    expect(tallied[0]?.map((r: Ev) => [r.group.shopId, r.archived]).sort()).toEqual([
      ['shop-a', 2],
      ['shop-b', 0],
      ['shop-c', 2],
    ]);
    expect(tallied).toHaveLength(1);
    // The Map's own S3 requests: one GET of the plan, the result file and the manifest.
    expect(result.mapRequests.byType).toEqual({ 's3.GetObject': 1, 's3.PutObject': 2 });
  });

  it('writes a child that fails after its retries to FAILED_0.json; the run goes on (ToleratedFailurePercentage 100)', async () => {
    const { handlers, tallied } = cannedHandlers({
      'archive-batch': async (e: Ev) => {
        if (e.batch.batch === 1) throw new VerificationError('part-1', 'checksum mismatch');
        return { results: [] };
      },
    });
    const result = await runCanned({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    expect(tallied[0]).toEqual(
      expect.arrayContaining([
        {
          failedBatch: 1,
          error: 'VerificationError',
          cause: 'verification of part-1 failed: checksum mismatch',
        },
      ]),
    );
    expect(result.taskInvocations.ArchiveBatch).toBe(2); // not retried: ours, not transient
    expect(result.handlerErrors).toEqual([
      {
        state: 'ArchiveBatch',
        step: 'archive-batch',
        name: 'VerificationError',
        message: expect.any(String),
      },
    ]);
    expect(result.unexpectedErrors).toEqual([]); // one of ours: a reported failure, not a crash
  });

  it('retries transient errors in a child: a throttled call succeeds on retry, a lasting race exhausts its retries', async () => {
    let throttled = false;
    const { handlers, tallied } = cannedHandlers({
      'archive-batch': async (e: Ev) => {
        if (e.batch.batch === 0 && !throttled) {
          throttled = true;
          throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
        }
        if (e.batch.batch === 1) throw new ConcurrentModificationError('index.json');
        return { results: [] };
      },
    });
    const result = await runCanned({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    // Batch 0: throttled once, then through; batch 1: first try + 5 retries.
    expect(result.taskInvocations.ArchiveBatch).toBe(2 + 6);
    expect(tallied[0]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ failedBatch: 1, error: 'ConcurrentModificationError' }),
      ]),
    );
    expect(result.unexpectedErrors).toEqual([]);
  });

  it('surfaces a crash inside a child (the run still says SUCCEEDED; the child is a failed result)', async () => {
    const { handlers } = cannedHandlers({
      'archive-batch': async (e: Ev) => e.batch.nothing.here, // TypeError
    });
    const result = await runCanned({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    expect(result.unexpectedErrors).toHaveLength(2);
    expect(result.unexpectedErrors[0]).toEqual(
      expect.objectContaining({ state: 'ArchiveBatch', step: 'archive-batch', name: 'TypeError' }),
    );
  });

  it('fails the run through RunFailed with the error and cause when Plan throws', async () => {
    const { handlers } = cannedHandlers({
      plan: async () => {
        throw new InvalidInputError('dryrun', 'unknown field');
      },
    });
    const result = await runCanned({ definition, handlers });

    expect(result.status).toBe('FAILED');
    expect(result.error).toEqual({ error: 'InvalidInputError', cause: 'invalid dryrun: unknown field' });
    expect(result.output).toBeNull();
    expect(result.taskInvocations).toEqual(
      expect.objectContaining({ Plan: 1, ArchiveBatch: 0, Tally: 0, Report: 0 }),
    );
  });

  it('fails the run when the ItemReader cannot read the plan (States.ItemReaderFailed → RunFailed)', async () => {
    const { handlers } = cannedHandlers({
      plan: async (e: Ev) => ({
        run: { runId: e.execution },
        page: 0,
        cursor: null,
        batches: 1,
        groups: 1,
        batchesKey: 'job-details-runs/nowhere/batches.jsonl',
        resultsPrefix: 'job-details-runs/nowhere/results/0',
        totals: {},
      }),
    });
    const result = await runCanned({ definition, handlers });
    expect(result.status).toBe('FAILED');
    expect(result.error?.error).toBe('States.ItemReaderFailed');
  });

  it('refuses a definition the interpreter would not run like AWS', async () => {
    const bad = JSON.parse(JSON.stringify(definition));
    bad.States.ProcessBatches.ItemBatcher = { MaxItemsPerBatch: 10 };
    await expect(runCanned({ definition: bad })).rejects.toThrow(/ItemBatcher on a Distributed Map/);
    const csv = JSON.parse(JSON.stringify(definition));
    csv.States.ProcessBatches.ItemReader.ReaderConfig = { InputType: 'CSV' };
    await expect(runCanned({ definition: csv })).rejects.toThrow(UnsupportedLocallyError);
    const express = JSON.parse(JSON.stringify(definition));
    express.States.ProcessBatches.ItemProcessor.ProcessorConfig.ExecutionType = 'EXPRESS';
    await expect(runCanned({ definition: express })).rejects.toThrow(/EXPRESS/);
  });
});

describe('assertNodeForLocalRuns', () => {
  it('refuses an older Node loudly (the interpreter would crash inside every Task)', () => {
    expect(() => assertNodeForLocalRuns('20.20.2')).toThrow(LocalStackError);
    expect(() => assertNodeForLocalRuns('20.20.2')).toThrow(/Node >= 22/);
    expect(() => assertNodeForLocalRuns(process.versions.node)).not.toThrow();
  });
});
