import { LAMBDA_SERVICE_ERRORS, STATE, TRANSIENT_ERRORS } from '../../infra/construct/archiver-state-machine';
import { LOCAL_BUCKET_PLACEHOLDER, localFunctionArn } from '../../infra/local/asl-resolve';
import { synthesizedDefinition } from '../../infra/local/runner';

/**
 * The synthesized ASL (function ARNs resolved as the local runner does), read state by state.
 * Synthesized once for the file, without bundling.
 */
// biome-ignore lint/suspicious/noExplicitAny: parsed ASL JSON, read field by field
type State = Record<string, any>;
let top: { StartAt: string; TimeoutSeconds?: number; States: Record<string, State> };
let processor: { StartAt: string; States: Record<string, State>; ProcessorConfig?: unknown };

beforeAll(() => {
  top = synthesizedDefinition() as unknown as typeof top;
  processor = top.States[STATE.processBatches]?.ItemProcessor;
});

const TASKS_TOP = [STATE.plan, STATE.tally, STATE.report, STATE.forget, STATE.redact];
const TASKS_BATCH = [STATE.archiveBatch];

describe('archiver definition: shape', () => {
  it('has exactly the designed states with their types', () => {
    expect(top.StartAt).toBe(STATE.route);
    expect(top.TimeoutSeconds).toBe(12 * 3600);
    expect(Object.fromEntries(Object.entries(top.States).map(([n, s]) => [n, s.Type]))).toEqual({
      Route: 'Choice',
      Forget: 'Task',
      Forgotten: 'Succeed',
      Redact: 'Task',
      Redacted: 'Succeed',
      Plan: 'Task',
      HasBatches: 'Choice',
      ProcessBatches: 'Map',
      Tally: 'Task',
      MorePages: 'Choice',
      Report: 'Task',
      RedactPending: 'Task',
      AfterRedactions: 'Choice',
      RunComplete: 'Choice',
      RunIncomplete: 'Fail',
      ErasureOverdue: 'Fail',
      Done: 'Succeed',
      RunFailed: 'Fail',
    });
    expect(processor.StartAt).toBe(STATE.archiveBatch);
    expect(Object.fromEntries(Object.entries(processor.States).map(([n, s]) => [n, s.Type]))).toEqual({
      ArchiveBatch: 'Task',
    });
  });

  it('is JSONPath only: no QueryLanguage, Assign, Arguments, Output anywhere', () => {
    const text = JSON.stringify(top);
    for (const field of ['QueryLanguage', 'Assign', 'Arguments', '"Output"', 'JSONata']) {
      expect(text).not.toContain(field.startsWith('"') ? field : `"${field}"`);
    }
  });

  it('routes an input with `forget` to Forget → Forgotten, `redact` to Redact → Redacted, anything else to Plan', () => {
    expect(top.States.Route).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.forget', IsPresent: true, Next: STATE.forget },
        { Variable: '$.redact', IsPresent: true, Next: STATE.redact },
      ],
      Default: STATE.plan,
    });
    expect(top.States.Redact?.Next).toBe(STATE.redacted);
    expect(top.States.Redact?.Parameters).toEqual({
      'redact.$': '$.redact',
      'execution.$': '$$.Execution.Name',
    });
    expect(top.States.Redact?.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: STATE.runFailed }]);
    expect(top.States.Forget?.Next).toBe(STATE.forgotten);
    expect(top.States.Forget?.Parameters).toEqual({
      'forget.$': '$.forget',
      'execution.$': '$$.Execution.Name',
      // The machine's own timeout: forget scrubs the scratch of runs older than it (docs/erasure.md).
      runTimeoutSeconds: top.TimeoutSeconds,
    });
    expect(top.States.Forget?.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: STATE.runFailed }]);
  });

  it('chains Plan → HasBatches → (ProcessBatches →) Tally → MorePages → (Plan | Report → RunComplete (→ RedactPending))', () => {
    expect(top.States.Plan?.Next).toBe(STATE.hasBatches);
    expect(top.States.HasBatches).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.batches', NumericGreaterThan: 0, Next: STATE.processBatches },
        // A page without batches: Plan wrote its results, no Map and no Tally; its cursor decides.
        {
          And: [{ Variable: '$.cursor', IsPresent: true }, { Not: { Variable: '$.cursor', IsNull: true } }],
          Next: STATE.plan,
        },
      ],
      Default: STATE.report,
    });
    expect(top.States.ProcessBatches?.Next).toBe(STATE.tally);
    expect(top.States.Tally?.Next).toBe(STATE.morePages);
    expect(top.States.Report?.Next).toBe(STATE.runComplete);
    // Redactions waiting for a restore: the scheduled run resumes them (Report always says how many).
    expect(top.States.RunComplete).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.incomplete', IsPresent: true, Next: STATE.runIncomplete },
        { Variable: '$.erasurePendingRedactions', NumericGreaterThan: 0, Next: STATE.redactPending },
        { Variable: '$.overdue', IsPresent: true, Next: STATE.erasureOverdue },
      ],
      Default: STATE.done,
    });
    expect(top.States.RedactPending).toMatchObject({
      Type: 'Task',
      Parameters: { redact: { pending: true }, 'execution.$': '$$.Execution.Name' },
      ResultPath: '$.redactions',
      Next: STATE.afterRedactions,
    });
    // Overdue erasure requests end the run FAILED after its work (the free failed-runs rule).
    expect(top.States.AfterRedactions).toEqual({
      Type: 'Choice',
      Choices: [{ Variable: '$.overdue', IsPresent: true, Next: STATE.erasureOverdue }],
      Default: STATE.done,
    });
    expect(top.States.ErasureOverdue).toEqual({
      Type: 'Fail',
      Error: 'ErasureRequestsOverdue',
      CausePath: '$.overdue',
    });
    // A run with failed groups ends FAILED with a named error, its Cause the report's summary.
    expect(top.States.RunIncomplete).toEqual({
      Type: 'Fail',
      Error: 'ArchiveRunIncomplete',
      CausePath: '$.incomplete',
    });
    expect(top.States.MorePages).toEqual({
      Type: 'Choice',
      Choices: [
        {
          And: [{ Variable: '$.cursor', IsPresent: true }, { Not: { Variable: '$.cursor', IsNull: true } }],
          Next: STATE.plan,
        },
      ],
      Default: STATE.report,
    });
  });

  it('passes the state, execution name and start time to Plan', () => {
    expect(top.States.Plan?.Parameters).toEqual({
      'state.$': '$',
      'execution.$': '$$.Execution.Name',
      'startTime.$': '$$.Execution.StartTime',
    });
  });

  it('fails the run with the caught error and cause', () => {
    expect(top.States.RunFailed).toEqual({ Type: 'Fail', ErrorPath: '$.Error', CausePath: '$.Cause' });
  });
});

describe('archiver definition: ProcessBatches (Distributed Map)', () => {
  it('reads the page plan (ItemReader, JSONL), runs each batch as a STANDARD child, writes results to S3', () => {
    const map = top.States.ProcessBatches as State;
    expect(processor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map.ItemReader).toEqual({
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSONL' },
      Parameters: { Bucket: LOCAL_BUCKET_PLACEHOLDER, 'Key.$': '$.batchesKey' },
    });
    expect(map.ResultWriter).toEqual({
      Resource: 'arn:aws:states:::s3:putObject',
      Parameters: { Bucket: LOCAL_BUCKET_PLACEHOLDER, 'Prefix.$': '$.resultsPrefix' },
    });
    expect(map.ItemSelector).toEqual({ 'run.$': '$.run', 'batch.$': '$$.Map.Item.Value' });
    expect(map.ResultPath).toBe('$.mapRun');
    expect(map.MaxConcurrency).toBe(10);
    expect(map.ToleratedFailurePercentage).toBe(100);
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: STATE.runFailed }]);
  });

  it('has no ItemsPath, ItemBatcher or ResultSelector (Plan packs the batches; results stay in S3)', () => {
    const map = top.States.ProcessBatches as State;
    for (const field of ['ItemsPath', 'ItemBatcher', 'ResultSelector']) expect(map[field]).toBeUndefined();
  });

  it('runs one Task per batch: the item in, its result out as the child output', () => {
    const t = processor.States.ArchiveBatch as State;
    expect(t.End).toBe(true);
    expect(t.Parameters).toBeUndefined(); // the item {run, batch} as is
    expect(t.ResultPath).toBeUndefined(); // {results, overhead} is the child's output
    expect(t.Catch).toBeUndefined(); // groups report their own failures; a batch fault fails the child
  });
});

describe('archiver definition: every Task', () => {
  const all = (): [string, State][] => [
    ...TASKS_TOP.map((n) => [n, top.States[n] as State] as [string, State]),
    ...TASKS_BATCH.map((n) => [n, processor.States[n] as State] as [string, State]),
  ];
  const stepOf: Record<string, string> = {
    Plan: 'plan',
    Tally: 'tally',
    Report: 'report',
    ArchiveBatch: 'archive-batch',
    Forget: 'forget',
    Redact: 'redact',
  };

  it('invokes its own function by ARN (payloadResponseOnly) with a timeout above the function timeout', () => {
    for (const [name, state] of all()) {
      expect(state.Resource).toBe(localFunctionArn(stepOf[name] as Parameters<typeof localFunctionArn>[0]));
      const heavy = name === 'ArchiveBatch' || name === 'Forget' || name === 'Redact';
      expect(state.TimeoutSeconds).toBe(heavy ? 960 : 360);
    }
  });

  it('retries Lambda service errors and our transient errors with backoff and full jitter', () => {
    for (const [, state] of all()) {
      expect(state.Retry).toEqual([
        expect.objectContaining({
          ErrorEquals: [...LAMBDA_SERVICE_ERRORS],
          BackoffRate: 2,
          JitterStrategy: 'FULL',
        }),
        expect.objectContaining({
          ErrorEquals: [...TRANSIENT_ERRORS],
          BackoffRate: 2,
          JitterStrategy: 'FULL',
        }),
      ]);
      for (const r of state.Retry) {
        expect(r.MaxAttempts).toBeGreaterThan(1);
        expect(r.MaxDelaySeconds).toBeGreaterThan(r.IntervalSeconds);
      }
    }
  });

  it('catches everything at run level (→ RunFailed); a batch fault fails only its child execution', () => {
    for (const name of TASKS_TOP) {
      expect(top.States[name]?.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: STATE.runFailed }]);
    }
    for (const name of TASKS_BATCH) expect(processor.States[name]?.Catch).toBeUndefined();
  });
});
