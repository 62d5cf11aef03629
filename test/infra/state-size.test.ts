import { withBoundedErrors } from '../../functions/bounded-errors';
import { STATE } from '../../infra/archiver-state-machine';
import { synthesizedDefinition } from '../../infra/local/runner';
import { plannedJobsKey } from '../../shared/archive/keys';
import { encodeCursor } from '../../shared/archive/steps/cursor';
import { parseTallyEvent } from '../../shared/archive/steps/events';
import { buildRun, CAPS } from '../../shared/archive/steps/run';
import type {
  ArchiveResult,
  CommitResult,
  DeleteResult,
  PlannedGroup,
  PlanResult,
  RunTotals,
  VerifyResult,
} from '../../shared/archive/steps/types';
import { PLAN_PAGE_GROUPS_MAX } from '../../shared/config';
import { TERMINAL_STATUSES } from '../../shared/jobs/schema';

/**
 * The Map keeps its results in the state next to `$.groups` (no ResultWriter: the local runner cannot
 * emulate one), and a state is capped at 256 KB. This builds the Tally event — the largest state of a
 * run — for a page at the largest allowed size where every group is as large as it can get, passes
 * each group through the SYNTHESIZED GroupDone / GroupFailed Pass states, and requires < 200 KB.
 * A field added to a result, or a Pass that copies more, shows up here.
 */
const LIMIT = 200 * 1024;
const N = PLAN_PAGE_GROUPS_MAX;
const BIG = Number.MAX_SAFE_INTEGER;

// Every id at the longest its validator accepts.
const execution = 'e'.repeat(80);
const shopIdOf = (i: number) => `${'s'.repeat(120)}-${String(i).padStart(7, '0')}`; // 128
const jobId = (i: number) => `${'j'.repeat(56)}${String(i).padStart(8, '0')}`; // 64
const PART = 'part-20260415T030000Z-k3jq2m7z.jsonl.gz';
const PAGE = 999_999;
const MONTH = '2026-03';

type Obj = Record<string, unknown>;

/** What a Pass state's JSONPath Parameters produce from `input` (paths of the form `$.a.b` only). */
const applyParameters = (template: unknown, input: unknown): unknown => {
  if (Array.isArray(template)) return template.map((t) => applyParameters(t, input));
  if (typeof template !== 'object' || template === null) return template;
  const out: Obj = {};
  for (const [k, v] of Object.entries(template as Obj)) {
    if (!k.endsWith('.$')) {
      out[k] = applyParameters(v, input);
      continue;
    }
    if (typeof v !== 'string' || !/^\$(\.[A-Za-z]+)+$/.test(v)) throw new Error(`unsupported path ${v}`);
    out[k.slice(0, -2)] = v
      .slice(2)
      .split('.')
      .reduce<unknown>((o, p) => {
        const next = (o as Obj | undefined)?.[p];
        if (next === undefined) throw new Error(`${v} is missing in the item state`);
        return next;
      }, input);
  }
  return out;
};

/** A ~2 KB error as a handler sees it: a long AccessDenied message and a deep stack. */
const realisticError = (): Error => {
  const err = new Error(
    `User: arn:aws:sts::123456789012:assumed-role/JobDetailsArchive-ArchiveGroupServiceRole-1A2B3C4D5E6F/JobDetailsArchive-ArchiveGroup-7G8H9I0J1K2L is not authorized to perform: s3:GetObject on resource: "arn:aws:s3:::prod-job-details/job-details-index/${shopIdOf(0)}/${MONTH}/index.json" because no identity-based policy allows the s3:GetObject action`,
  );
  err.name = 'AccessDenied';
  const frames = Array.from(
    { length: 16 },
    (_, i) =>
      `    at de_CommandError${i} (/var/task/node_modules/@aws-sdk/client-s3/dist-cjs/index.js:${4000 + i}:${21 + i})`,
  );
  err.stack = `${err.name}: ${err.message}\n${frames.join('\n')}`;
  return err;
};

/** Lambda's Cause for a thrown error: `{errorType, errorMessage, trace}`. */
const lambdaCause = (e: Error) =>
  JSON.stringify({ errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') });

/** The Cause of a handler error after the handler wrapper (functions/bounded-errors.ts). */
const handlerCause = async (): Promise<{ raw: string; bounded: string }> => {
  const raw = lambdaCause(realisticError());
  const handler = withBoundedErrors(async () => {
    throw realisticError();
  });
  const spy = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const err = await handler({}).then(
      () => new Error('expected a throw'),
      (e: unknown) => e as Error,
    );
    return { raw, bounded: lambdaCause(err) };
  } finally {
    spy.mockRestore();
  }
};

/** A Cause our code never sees: the runtime failing to load the bundle (every group of a page at once). */
const runtimeCause = JSON.stringify({
  errorType: 'Runtime.ImportModuleError',
  errorMessage:
    "Error: Cannot find module '@aws-sdk/lib-storage'\nRequire stack:\n- /var/task/index.js\n- /var/runtime/index.mjs",
  trace: [
    "Runtime.ImportModuleError: Error: Cannot find module '@aws-sdk/lib-storage'",
    'Require stack:',
    '- /var/task/index.js',
    '- /var/runtime/index.mjs',
    '    at _loadUserApp (file:///var/runtime/index.mjs:1087:17)',
    '    at async UserFunction.js.module.exports.load (file:///var/runtime/index.mjs:1119:21)',
    '    at async start (file:///var/runtime/index.mjs:1282:23)',
    '    at async file:///var/runtime/index.mjs:1288:1',
    '    at async ModuleJob.run (node:internal/modules/esm/module_job:234:25)',
    '    at async ModuleLoader.import (node:internal/modules/esm/loader:473:24)',
    '    at async asyncRunEntryPointWithESMLoader (node:internal/modules/run_main:123:5)',
  ],
});

const run = buildRun({}, execution, '2026-04-15T03:00:00Z', { olderThanDays: 30, graceHours: 1 });

const groups: PlannedGroup[] = Array.from({ length: N }, (_, i) => ({
  shopId: shopIdOf(i),
  month: MONTH,
  jobsKey: plannedJobsKey(run.runId, PAGE, shopIdOf(i), MONTH),
  jobCount: 1_000_000,
}));

const totals: RunTotals = {
  jobsPlanned: BIG,
  jobsArchived: BIG,
  jobsSkipped: BIG,
  jobsQuarantined: BIG,
  partsWritten: BIG,
  bytesIn: BIG,
  bytesOut: BIG,
  objectsDeleted: BIG,
  objectsKept: BIG,
  deleteErrors: BIG,
  jobsDeleted: BIG,
  groupsOk: BIG,
  groupsFailed: BIG,
  requests: { s3: BIG, dynamodb: BIG },
};

// The cursor holds a raw GSI key, which may be a quarantined row's: DynamoDB's key size limits.
const planResult: PlanResult = {
  run,
  page: PAGE,
  cursor: encodeCursor({
    statusIndex: TERMINAL_STATUSES.length - 1,
    startKey: {
      pk: 'p'.repeat(2048),
      sk: 's'.repeat(1024),
      job_status: TERMINAL_STATUSES[TERMINAL_STATUSES.length - 1] as string,
      status_created_at: 'c'.repeat(1024),
    },
  }),
  groups,
  planQuarantined: BIG,
  totals,
};

/** A group's item state at GroupDone: every step result at its largest, samples at their caps. */
const doneState = (group: PlannedGroup) => {
  const archive: ArchiveResult = {
    partKey: `job-details-cold/${group.shopId}/${MONTH}/${PART}`,
    partName: PART,
    pendingKey: `job-details-index/${group.shopId}/${MONTH}/pending/${PART}.json`,
    summary: {
      archived: BIG,
      skipped: BIG,
      quarantinedCount: BIG,
      bytesIn: BIG,
      bytesOut: BIG,
      partName: PART,
      requests: { s3: BIG, dynamodb: BIG },
    },
    planned: BIG,
    changedSincePlan: BIG,
    abandonedPartsRemoved: BIG,
    quarantined: Array.from({ length: CAPS.inline }, (_, i) => ({
      jobId: jobId(i),
      reason: 'r'.repeat(CAPS.reason),
    })),
  };
  const verify: VerifyResult = { verified: true, jobs: BIG, requests: { s3: BIG, dynamodb: BIG } };
  const commit: CommitResult = {
    committed: true,
    part: PART,
    jobs: BIG,
    requests: { s3: BIG, dynamodb: BIG },
  };
  const del: DeleteResult = {
    summary: {
      objectsDeleted: BIG,
      objectsKept: BIG,
      deleteErrorCount: BIG,
      jobsCompleted: BIG,
      requests: { s3: BIG, dynamodb: BIG },
    },
    eligible: BIG,
    deleteErrors: Array.from({ length: CAPS.inline }, (_, i) => ({
      key: `job-details/${jobId(i)}/${'f'.repeat(64)}.json.gz`,
      code: 'InternalError',
    })),
  };
  return { run, group, archive, verify, commit, delete: del };
};

const tallyEventSize = (results: unknown[]): number => {
  const event = { ...planResult, results };
  expect(parseTallyEvent(JSON.parse(JSON.stringify(event))).results).toHaveLength(N); // a valid event
  return Buffer.byteLength(JSON.stringify(event), 'utf8');
};

type PassStates = Record<string, { Parameters: unknown }>;
let processor: PassStates;
beforeAll(() => {
  const top = synthesizedDefinition() as unknown as {
    States: Record<string, { ItemProcessor?: { States: PassStates } }>;
  };
  const states = top.States[STATE.processGroups]?.ItemProcessor?.States;
  if (!states) throw new Error('no ProcessGroups item processor in the definition');
  processor = states;
});

describe(`worst-case Tally event at the largest page (${N} groups)`, () => {
  const sizes: Record<string, number> = {};

  it('every group done, with its step results at their largest', () => {
    const results = groups.map((g) => applyParameters(processor[STATE.groupDone]?.Parameters, doneState(g)));
    // Only counts leave the group: no sample list, no planned-jobs key.
    expect(JSON.stringify(results[0])).not.toContain('reason');
    expect(JSON.stringify(results[0])).not.toContain('jobsKey');
    sizes.done = tallyEventSize(results);
    expect(sizes.done).toBeLessThan(LIMIT);
  });

  it('every group failed with a ~2 KB handler error (the handler wrapper bounds its Cause)', async () => {
    const { raw, bounded } = await handlerCause();
    expect(raw.length).toBeGreaterThan(1800);
    expect(bounded.length).toBeLessThan(700);
    const results = groups.map((g) =>
      applyParameters(processor[STATE.groupFailed]?.Parameters, {
        ...doneState(g),
        error: { Error: 'AccessDenied', Cause: bounded },
      }),
    );
    sizes.handlerError = tallyEventSize(results);
    expect(sizes.handlerError).toBeLessThan(LIMIT);
  });

  it('every group failed with a runtime error whose Cause no handler shapes', () => {
    expect(runtimeCause.length).toBeGreaterThan(700);
    const results = groups.map((g) =>
      applyParameters(processor[STATE.groupFailed]?.Parameters, {
        ...doneState(g),
        error: { Error: 'Runtime.ImportModuleError', Cause: runtimeCause },
      }),
    );
    sizes.runtimeError = tallyEventSize(results);
    expect(sizes.runtimeError).toBeLessThan(LIMIT);
  });
});
