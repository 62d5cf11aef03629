import { LAMBDA_SERVICE_ERRORS, STATE, TRANSIENT_ERRORS } from '../../infra/archiver-state-machine';
import { localFunctionArn } from '../../infra/local/asl-resolve';
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
  processor = top.States[STATE.processGroups]?.ItemProcessor;
});

const TASKS_TOP = [STATE.plan, STATE.tally, STATE.report];
const TASKS_GROUP = [STATE.archiveGroup, STATE.verifyPart, STATE.commitPart, STATE.deleteSources];

describe('archiver definition: shape', () => {
  it('has exactly the designed states with their types', () => {
    expect(top.StartAt).toBe(STATE.plan);
    expect(top.TimeoutSeconds).toBe(12 * 3600);
    expect(Object.fromEntries(Object.entries(top.States).map(([n, s]) => [n, s.Type]))).toEqual({
      Plan: 'Task',
      ProcessGroups: 'Map',
      Tally: 'Task',
      MorePages: 'Choice',
      Report: 'Task',
      RunComplete: 'Choice',
      RunIncomplete: 'Fail',
      Done: 'Succeed',
      RunFailed: 'Fail',
    });
    expect(processor.StartAt).toBe(STATE.archiveGroup);
    expect(Object.fromEntries(Object.entries(processor.States).map(([n, s]) => [n, s.Type]))).toEqual({
      ArchiveGroup: 'Task',
      HasPart: 'Choice',
      VerifyPart: 'Task',
      CommitPart: 'Task',
      DeleteSources: 'Task',
      GroupDone: 'Pass',
      GroupFailed: 'Pass',
    });
  });

  it('is JSONPath only: no QueryLanguage, Assign, Arguments, Output anywhere', () => {
    const text = JSON.stringify(top);
    for (const field of ['QueryLanguage', 'Assign', 'Arguments', 'Output', 'JSONata']) {
      expect(text).not.toContain(`"${field}"`);
    }
  });

  it('chains Plan → ProcessGroups → Tally → MorePages → (Plan | Report → RunComplete → Done | RunIncomplete)', () => {
    expect(top.States.Plan?.Next).toBe(STATE.processGroups);
    expect(top.States.ProcessGroups?.Next).toBe(STATE.tally);
    expect(top.States.Tally?.Next).toBe(STATE.morePages);
    expect(top.States.Report?.Next).toBe(STATE.runComplete);
    expect(top.States.RunComplete).toEqual({
      Type: 'Choice',
      Choices: [{ Variable: '$.incomplete', IsPresent: true, Next: STATE.runIncomplete }],
      Default: STATE.done,
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

describe('archiver definition: ProcessGroups (Distributed Map)', () => {
  it('runs each group as a STANDARD child execution, over $.groups, into $.results', () => {
    const map = top.States.ProcessGroups as State;
    expect(processor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
    expect(map.ItemsPath).toBe('$.groups');
    expect(map.ItemSelector).toEqual({ 'run.$': '$.run', 'group.$': '$$.Map.Item.Value' });
    expect(map.ResultPath).toBe('$.results');
    expect(map.MaxConcurrency).toBe(10);
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: STATE.runFailed }]);
  });

  it('has no ItemReader, ItemBatcher or ResultWriter (the local interpreter ignores them)', () => {
    const map = top.States.ProcessGroups as State;
    for (const field of ['ItemReader', 'ItemBatcher', 'ResultWriter']) expect(map[field]).toBeUndefined();
  });

  it('verifies and commits only when ArchiveGroup returned a part key', () => {
    expect(processor.States.ArchiveGroup?.Next).toBe(STATE.hasPart);
    expect(processor.States.HasPart).toEqual({
      Type: 'Choice',
      Choices: [
        {
          And: [
            { Variable: '$.archive.partKey', IsPresent: true },
            { Variable: '$.archive.partKey', IsString: true },
          ],
          Next: STATE.verifyPart,
        },
      ],
      Default: STATE.deleteSources,
    });
    expect(processor.States.VerifyPart?.Next).toBe(STATE.commitPart);
    expect(processor.States.CommitPart?.Next).toBe(STATE.deleteSources);
    expect(processor.States.DeleteSources?.Next).toBe(STATE.groupDone);
  });

  it('keeps every step result in its own field of the item state', () => {
    expect(processor.States.ArchiveGroup?.ResultPath).toBe('$.archive');
    expect(processor.States.VerifyPart?.ResultPath).toBe('$.verify');
    expect(processor.States.CommitPart?.ResultPath).toBe('$.commit');
    expect(processor.States.DeleteSources?.ResultPath).toBe('$.delete');
    for (const name of TASKS_GROUP) expect(processor.States[name]?.Parameters).toBeUndefined(); // whole state in
  });

  it('reports a group as done (counts only) or as failed (with error and cause), ending the child execution', () => {
    // Only shop and month of the group, and only the steps' summaries: results share the 256 KB state.
    const group = { 'shopId.$': '$.group.shopId', 'month.$': '$.group.month' };
    expect(processor.States.GroupDone).toEqual({
      Type: 'Pass',
      Parameters: { group, 'archive.$': '$.archive.summary', 'delete.$': '$.delete.summary' },
      End: true,
    });
    expect(processor.States.GroupFailed).toEqual({
      Type: 'Pass',
      Parameters: {
        group,
        failed: true,
        'error.$': '$.error.Error',
        'cause.$': '$.error.Cause',
      },
      End: true,
    });
  });
});

describe('archiver definition: every Task', () => {
  const all = (): [string, State][] => [
    ...TASKS_TOP.map((n) => [n, top.States[n] as State] as [string, State]),
    ...TASKS_GROUP.map((n) => [n, processor.States[n] as State] as [string, State]),
  ];
  const stepOf: Record<string, string> = {
    Plan: 'plan',
    Tally: 'tally',
    Report: 'report',
    ArchiveGroup: 'archive-group',
    VerifyPart: 'verify-part',
    CommitPart: 'commit-part',
    DeleteSources: 'delete-sources',
  };

  it('invokes its own function by ARN (payloadResponseOnly) with a timeout above the function timeout', () => {
    for (const [name, state] of all()) {
      expect(state.Resource).toBe(localFunctionArn(stepOf[name] as Parameters<typeof localFunctionArn>[0]));
      const heavy = name === 'ArchiveGroup' || name === 'VerifyPart';
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

  it('catches everything: run-level Tasks → RunFailed, group Tasks → GroupFailed with the error at $.error', () => {
    for (const name of TASKS_TOP) {
      expect(top.States[name]?.Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: STATE.runFailed }]);
    }
    for (const name of TASKS_GROUP) {
      expect(processor.States[name]?.Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.groupFailed },
      ]);
    }
  });
});
