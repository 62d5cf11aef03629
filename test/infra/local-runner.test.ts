import {
  ensurePromiseWithResolvers,
  runArchiverLocally,
  type StateMachineDefinition,
  type StepHandler,
  synthesizedDefinition,
} from '../../infra/local/runner';
import type { ArchiverStep } from '../../infra/step-functions';
import {
  ConcurrentModificationError,
  InvalidInputError,
  UnsupportedLocallyError,
  VerificationError,
} from '../../shared/errors';

/**
 * The REAL synthesized archiver definition, executed by the local runner with canned handlers.
 * (The end-to-end run with the real handlers and emulators is the archiver's test.)
 */
let definition: StateMachineDefinition;
beforeAll(() => {
  definition = synthesizedDefinition();
});

// biome-ignore lint/suspicious/noExplicitAny: events are asserted field by field
type Ev = any;
const group = (shopId: string) => ({
  shopId,
  month: '2026-01',
  jobsKey: `runs/r/${shopId}.json`,
  jobCount: 2,
});
const ref = (g: { shopId: string; month: string }) => ({ shopId: g.shopId, month: g.month });
const G1 = group('shop-a');
const G2 = group('shop-b'); // archive-group returns no part for it
const G3 = group('shop-c');

/** Two pages (G1, G2 then G3); records every event each step received. */
const cannedHandlers = (overrides: Partial<Record<ArchiverStep, StepHandler>> = {}) => {
  const events: Record<string, Ev[]> = {};
  const record =
    (step: ArchiverStep, fn: (e: Ev) => unknown): StepHandler =>
    async (e) => {
      events[step] = [...(events[step] ?? []), e];
      const override = overrides[step];
      return override ? override(e, undefined as never) : fn(e);
    };
  const handlers: Record<ArchiverStep, StepHandler> = {
    plan: record('plan', (e) => {
      const first = e.state.run === undefined;
      return {
        run: first ? { runId: e.execution, startedAt: e.startTime } : e.state.run,
        page: first ? 0 : e.state.page,
        cursor: first ? 'after-shop-b' : null,
        groups: first ? [G1, G2] : [G3],
        totals: first ? { groups: 0 } : e.state.totals,
      };
    }),
    'archive-group': record('archive-group', (e) =>
      e.group.shopId === G2.shopId
        ? { summary: { archived: 0 } }
        : { partKey: `job-details-cold/${e.group.shopId}/2026-01/part-1.jsonl.gz`, summary: { archived: 2 } },
    ),
    'verify-part': record('verify-part', () => ({ verified: true })),
    'commit-part': record('commit-part', () => ({ committed: true })),
    'delete-sources': record('delete-sources', (e) => ({ summary: { deleted: e.group.jobCount } })),
    tally: record('tally', (e) => ({
      run: e.run,
      page: e.page + 1,
      cursor: e.cursor,
      totals: { groups: e.totals.groups + e.results.length },
    })),
    report: record('report', (e) => ({ report: `${e.totals.groups} groups`, run: e.run.runId })),
  };
  return { handlers, events };
};

describe('runArchiverLocally (synthesized definition, canned handlers)', () => {
  it('runs every page through Plan → groups → Tally until the cursor is null, then Report', async () => {
    const { handlers, events } = cannedHandlers();
    const result = await runArchiverLocally({
      definition,
      handlers,
      input: { dryRun: true },
      executionName: 'nightly-1',
    });

    expect(result.status).toBe('SUCCEEDED');
    expect(result.output).toEqual({ report: '3 groups', run: 'nightly-1' });
    expect(result.taskInvocations).toEqual({
      Plan: 2,
      ArchiveGroup: 3,
      VerifyPart: 2, // G2 had no part: HasPart skipped verify and commit
      CommitPart: 2,
      DeleteSources: 3,
      Tally: 2,
      Report: 1,
    });
    expect(result.handlerErrors).toEqual([]);
    expect(result.unexpectedErrors).toEqual([]);

    // $$.Execution.Name / StartTime resolve; the first Plan sees the execution input as its state.
    const [first, second] = events.plan ?? [];
    expect(first).toEqual({ state: { dryRun: true }, execution: 'nightly-1', startTime: expect.any(String) });
    expect(Number.isNaN(Date.parse(first.startTime))).toBe(false);
    expect(second.state).toEqual({
      run: { runId: 'nightly-1', startedAt: first.startTime },
      page: 1,
      cursor: 'after-shop-b',
      totals: { groups: 2 },
    });

    // Map items are {run, group}; later steps get the whole item state.
    expect(events['archive-group']?.map((e: Ev) => Object.keys(e).sort())).toEqual(
      Array(3).fill(['group', 'run']),
    );
    const deleteForG2 = events['delete-sources']?.find((e: Ev) => e.group.shopId === G2.shopId);
    expect(Object.keys(deleteForG2).sort()).toEqual(['archive', 'group', 'run']);
    const commitForG1 = events['commit-part']?.find((e: Ev) => e.group.shopId === G1.shopId);
    expect(Object.keys(commitForG1).sort()).toEqual(['archive', 'group', 'run', 'verify']);

    // Tally gets the page's GroupDone results, in item order: shop and month, the steps' summaries.
    expect(events.tally?.[0].results).toEqual([
      { group: ref(G1), archive: { archived: 2 }, delete: { deleted: 2 } },
      { group: ref(G2), archive: { archived: 0 }, delete: { deleted: 2 } },
    ]);
  });

  it('routes a throwing group to GroupFailed, reported with its error, while the others succeed', async () => {
    const { handlers, events } = cannedHandlers({
      'archive-group': async (e: Ev) => {
        if (e.group.shopId === G1.shopId) throw new VerificationError('part-1', 'checksum mismatch');
        return { partKey: 'p', summary: { archived: 2 } };
      },
    });
    const result = await runArchiverLocally({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    expect(events.tally?.[0].results).toEqual([
      {
        group: ref(G1),
        failed: true,
        error: 'VerificationError',
        cause: 'verification of part-1 failed: checksum mismatch',
      },
      { group: ref(G2), archive: { archived: 2 }, delete: { deleted: 2 } },
    ]);
    expect(result.taskInvocations.DeleteSources).toBe(2); // G2 and G3, not the failed G1
    expect(result.handlerErrors).toEqual([
      {
        state: 'ArchiveGroup',
        step: 'archive-group',
        name: 'VerificationError',
        message: expect.any(String),
      },
    ]);
    expect(result.unexpectedErrors).toEqual([]); // one of ours: a reported failure, not a crash
  });

  it('retries transient errors: a throttled call succeeds on retry, a lasting race exhausts its retries', async () => {
    let throttled = false;
    const { handlers, events } = cannedHandlers({
      'verify-part': async () => {
        if (!throttled) {
          throttled = true;
          throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
        }
        return { verified: true };
      },
      'commit-part': async (e: Ev) => {
        if (e.group.shopId === G3.shopId) throw new ConcurrentModificationError('index.json');
        return { committed: true };
      },
    });
    const result = await runArchiverLocally({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    expect(result.taskInvocations.VerifyPart).toBe(3); // G1 twice (throttled once), G3 once
    expect(result.taskInvocations.CommitPart).toBe(1 + 6); // G1 once; G3: first try + 5 retries
    expect(events.tally?.[1].results).toEqual([
      expect.objectContaining({ group: ref(G3), failed: true, error: 'ConcurrentModificationError' }),
    ]);
    expect(result.unexpectedErrors).toEqual([]);
  });

  it('surfaces a crash that a Catch turned into a failed group (the run still says SUCCEEDED)', async () => {
    const { handlers } = cannedHandlers({
      'delete-sources': async (e: Ev) => e.group.nothing.here, // TypeError
    });
    const result = await runArchiverLocally({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    expect(result.unexpectedErrors).toHaveLength(3);
    expect(result.unexpectedErrors[0]).toEqual(
      expect.objectContaining({ state: 'DeleteSources', step: 'delete-sources', name: 'TypeError' }),
    );
  });

  it('fails the run through RunFailed with the error and cause when Plan throws', async () => {
    const { handlers } = cannedHandlers({
      plan: async () => {
        throw new InvalidInputError('dryrun', 'unknown field');
      },
    });
    const result = await runArchiverLocally({ definition, handlers });

    expect(result.status).toBe('FAILED');
    expect(result.error).toEqual({ error: 'InvalidInputError', cause: 'invalid dryrun: unknown field' });
    expect(result.output).toBeNull();
    expect(result.taskInvocations).toEqual(
      expect.objectContaining({ Plan: 1, ArchiveGroup: 0, Tally: 0, Report: 0 }),
    );
  });

  it('passes events and results through JSON, as Lambda does', async () => {
    const { handlers, events } = cannedHandlers({
      'archive-group': async (e: Ev) => {
        e.group.shopId = 'mutated'; // must not leak into the state
        return { partKey: undefined, summary: { at: new Date(0) } };
      },
      'delete-sources': async () => ({ summary: { gone: undefined, kept: 1 } }),
    });
    const result = await runArchiverLocally({ definition, handlers });

    expect(result.status).toBe('SUCCEEDED');
    expect(events.tally?.[0].results[0]).toEqual({
      group: ref(G1),
      archive: { at: '1970-01-01T00:00:00.000Z' },
      delete: { kept: 1 },
    });
    expect(result.taskInvocations.VerifyPart).toBe(0); // partKey dropped by JSON → no part
  });

  it('refuses a definition the interpreter would not run like AWS', async () => {
    const bad = JSON.parse(JSON.stringify(definition));
    bad.States.ProcessGroups.ItemReader = { Resource: 'arn:aws:states:::s3:getObject' };
    await expect(runArchiverLocally({ definition: bad })).rejects.toThrow(UnsupportedLocallyError);
  });
});

describe('ensurePromiseWithResolvers', () => {
  it('provides Promise.withResolvers where Node lacks it (Node 20), without which every local Task fails', async () => {
    type Resolvers = { promise: Promise<number>; resolve: (v: number) => void };
    const original = Object.getOwnPropertyDescriptor(Promise, 'withResolvers');
    try {
      Reflect.deleteProperty(Promise, 'withResolvers');
      expect(Reflect.get(Promise, 'withResolvers')).toBeUndefined();
      ensurePromiseWithResolvers();
      const installed = Reflect.get(Promise, 'withResolvers') as (() => Resolvers) | undefined;
      expect(typeof installed).toBe('function');
      const resolvers = installed?.call(Promise);
      resolvers?.resolve(42);
      await expect(resolvers?.promise).resolves.toBe(42);
    } finally {
      if (original) Object.defineProperty(Promise, 'withResolvers', original);
    }
  });
});
