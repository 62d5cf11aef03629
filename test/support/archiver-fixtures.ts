import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  type DeleteObjectsCommandInput,
  type DeleteObjectsCommandOutput,
  GetObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { archiveBatchHandler } from '../../functions/archive-batch';
import { forgetHandler } from '../../functions/forget';
import { planHandler } from '../../functions/plan';
import { redactHandler } from '../../functions/redact';
import { reportHandler } from '../../functions/report';
import type { ObservabilitySink } from '../../functions/sink';
import { tallyHandler } from '../../functions/tally';
import { makeContext } from '../../infra/cli/context';
import type { ArchiverStep } from '../../infra/construct/step-functions';
import {
  type LocalRunResult,
  type RunArchiverLocallyOptions,
  runArchiverLocally,
  type StateMachineDefinition,
  type StepHandler,
  stepHandlers,
  synthesizedDefinition,
} from '../../infra/local/runner';
import {
  decodeBlock,
  type Located,
  type MonthIndex,
  monthIndexKey,
  type PartRecord,
  parseMonthIndex,
  parsePartKey,
  WATERMARK_KEY,
  type WantedRecord,
} from '../../shared/archive/format';
import { expandSettled } from '../../shared/archive/settled-jobs';
import type {
  BatchHooks,
  GroupDetail,
  GroupStage,
  StageContext,
} from '../../shared/archive/steps/batch/batch-steps';
import { makeStepDeps, type StepDeps, type StepSettings } from '../../shared/archive/steps/context';
import { createRequestMeter } from '../../shared/archive/steps/meter';
import { readWatermark } from '../../shared/archive/steps/plan/watermark';
import type {
  GroupResult,
  PlannedBatch,
  PlannedGroup,
  PlanResult,
  RunReport,
} from '../../shared/archive/steps/types';
import { parseConfig } from '../../shared/config';
import { JobDetailsStore, type JsonObject } from '../../shared/details';
import { summaryOnly } from '../../shared/erasure/summary-store';
import { createJob, type FlushDetails, getJob, recordFlush } from '../../shared/jobs';
import type { DdbSender } from '../../shared/jobs/types';
import { countRequests } from '../../shared/metrics';
import { putJson } from '../../shared/s3/objects';
import { freshBucket, freshTable, testDdb, testS3 } from './local';

/**
 * Archiver test fixtures: a fresh bucket + table, realistic terminal jobs written through the real
 * hot path (createJob → recordFlush → terminal write, JobDetailsStore for S3), and `runMachine`, which
 * runs the synthesized state machine over the handlers (their factories, on this env's deps).
 */

export const DEFAULT_SETTINGS: StepSettings = {
  olderThanDays: 30,
  graceHours: 0,
  readConcurrency: 4,
  planPageGroups: 100,
  planPageJobs: 20_000,
  batchGroups: 50,
  batchJobs: 2000,
  // Tests see one part per shop-month; packing is tested on its own (archiver-packed.test.ts).
  packBelowKb: 0,
  // Most tests archive jobs of a few days past the cutoff; whole months are tested on their own.
  wholeMonths: false,
  maxSourceMb: 25.6,
  jobTtlDays: 90,
  erasureDeadlineDays: 30,
  restoreTier: 'Standard',
  restoreDays: 7,
};

/**
 * The settings a deployment gets by default (the table's defaults; maxSourceMb for 1024 MB), with
 * whole months off like most tests: what `machineDeps` — the handlers of a plain machine run — use.
 */
const pickSettings = (c: StepSettings): StepSettings => ({
  olderThanDays: c.olderThanDays,
  graceHours: c.graceHours,
  readConcurrency: c.readConcurrency,
  planPageGroups: c.planPageGroups,
  planPageJobs: c.planPageJobs,
  batchGroups: c.batchGroups,
  batchJobs: c.batchJobs,
  packBelowKb: c.packBelowKb,
  wholeMonths: c.wholeMonths,
  maxSourceMb: c.maxSourceMb,
  jobTtlDays: c.jobTtlDays,
  erasureDeadlineDays: c.erasureDeadlineDays,
  restoreTier: c.restoreTier,
  restoreDays: c.restoreDays,
});
// Packing off like most tests (one part and index per shop-month); archiver-packed.test.ts turns it on.
export const TABLE_SETTINGS: StepSettings = pickSettings(
  parseConfig({ JDA_WHOLE_MONTHS: 'false', JDA_PACK_BELOW_KB: '0' }),
);

export interface ArchiverEnv {
  readonly s3: S3Client;
  readonly ddb: DynamoDBDocumentClient;
  readonly bucket: string;
  readonly table: string;
  readonly store: JobDetailsStore;
  /** Step deps with a controllable clock (`advance`). */
  deps: StepDeps;
  /**
   * The deps `runLocal` wires the real handlers to: clients and a request meter of their own (as a
   * Lambda container has), the table's default settings (TABLE_SETTINGS), the env's clock.
   */
  readonly machineDeps: StepDeps;
  /** Moves the steps' real-time clock (part stamps, commit times, abandoned-part age). */
  advance(ms: number): void;
  /** Rebuilds `deps` with other settings or another S3 client (e.g. a fault-injecting wrapper). */
  withDeps(over: { settings?: Partial<StepSettings>; s3?: S3Client; ddb?: DdbSender }): StepDeps;
}

export const archiverEnv = async (settings: Partial<StepSettings> = {}): Promise<ArchiverEnv> => {
  const [bucket, table] = await Promise.all([freshBucket(), freshTable()]);
  const s3 = testS3();
  const ddb = testDdb();
  const meter = createRequestMeter();
  countRequests(s3, 's3', meter.sink);
  countRequests(ddb, 'dynamodb', meter.sink);
  let offset = 0;
  const clock = () => new Date(Date.now() + offset);
  const build = (over: { settings?: Partial<StepSettings>; s3?: S3Client; ddb?: DdbSender } = {}) =>
    makeStepDeps({
      s3: over.s3 ?? s3,
      ddb: over.ddb ?? ddb,
      bucket,
      table,
      settings: { ...DEFAULT_SETTINGS, ...settings, ...over.settings },
      meter,
      clock,
    });
  const machineMeter = createRequestMeter();
  const machineS3 = testS3();
  const machineDdb = testDdb();
  countRequests(machineS3, 's3', machineMeter.sink);
  countRequests(machineDdb, 'dynamodb', machineMeter.sink);
  const env: ArchiverEnv = {
    s3,
    ddb,
    bucket,
    table,
    store: new JobDetailsStore(s3, bucket),
    deps: build(),
    machineDeps: makeStepDeps({
      s3: machineS3,
      ddb: machineDdb,
      bucket,
      table,
      settings: TABLE_SETTINGS,
      meter: machineMeter,
      clock,
    }),
    advance: (ms) => {
      offset += ms;
    },
    withDeps: build,
  };
  return env;
};

export type LocalRunOptions = Omit<RunArchiverLocallyOptions, 'handlers' | 'bucket' | 'mapS3'> & {
  /** The handlers, built over the run's sink. @default the real ones over `env.machineDeps` */
  readonly handlers?: RunArchiverLocallyOptions['handlers'];
};

/**
 * Runs the synthesized state machine in-process, as `jobarchive run` does: the real handlers wired to
 * `env.machineDeps` (or `opts.handlers`), the Distributed Map on the env's bucket.
 */
export const runLocal = (env: ArchiverEnv, opts: LocalRunOptions): Promise<LocalRunResult> =>
  runArchiverLocally({
    handlers: (sink) => stepHandlers(() => env.machineDeps, sink),
    ...opts,
    bucket: env.bucket,
    mapS3: testS3,
  });

/**
 * For a test file that runs the synthesized state machine over the real handlers: synthesizes the
 * definition once and makes a fresh env (`runLocal` wires the handlers to it). The returned object
 * is filled in `beforeAll`.
 */
export const setUpMachineRuns = (): { env: ArchiverEnv; definition: StateMachineDefinition } => {
  const ctx = {} as { env: ArchiverEnv; definition: StateMachineDefinition };
  beforeAll(async () => {
    ctx.definition = synthesizedDefinition();
    ctx.env = await archiverEnv();
  });
  // Each test starts as the first run ever (see forgetWatermark).
  beforeEach(async () => forgetWatermark(ctx.env));
  return ctx;
};

/**
 * Deletes the plan watermark, so the next run plans every due row still in the table (as the first
 * run ever does). For tests that seed completions months in the past AFTER a run: no live writer can
 * (a row that lands below the watermark's lateness window is not planned: docs/steady-state.md).
 */
export const forgetWatermark = async (env: Pick<ArchiverEnv, 'bucket'>): Promise<void> => {
  // Through a client of its own: the runs' request counts stay the runs'. The erasure summary stays
  // (forgotten shops, open requests: not the runs' to drop); the runs' claims go.
  const { doc } = await readWatermark({ s3: unmetered, bucket: env.bucket });
  if (doc?.erasure)
    await putJson({ s3: unmetered, bucket: env.bucket }, WATERMARK_KEY, summaryOnly(doc.erasure));
  else await unmetered.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: WATERMARK_KEY }));
};
const unmetered = testS3();

/**
 * The LISTs of the hot prefix (`job-details/`) the state machine's handlers send while `fn` runs, by
 * whichever handler sent them (a report counts LISTs of every prefix: Tally's attempts, staging).
 */
export const hotListsDuring = async <T>(
  env: Pick<ArchiverEnv, 'machineDeps'>,
  fn: () => Promise<T>,
): Promise<{ value: T; hotLists: string[] }> => {
  const hotLists: string[] = [];
  const name = 'countHotLists';
  env.machineDeps.s3.middlewareStack.add(
    (next, context) => async (args) => {
      const prefix = (args.input as { Prefix?: string }).Prefix;
      if (context.commandName === 'ListObjectsV2Command' && prefix?.startsWith('job-details/'))
        hotLists.push(prefix);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    return { value: await fn(), hotLists };
  } finally {
    env.machineDeps.s3.middlewareStack.remove(name);
  }
};

export const DAY = 86_400_000;
export const HOUR = 3_600_000;

/** `days` before the real now: old enough to archive with olderThanDays 30 when > 30. */
export const daysAgo = (days: number, plusMs = 0): Date => new Date(Date.now() - days * DAY + plusMs);

/**
 * Noon UTC on `day` of the month `monthsBack` months before the current one (plus `minutes`): with
 * monthsBack ≥ 2 always more than 30 days ago, and the month is known in advance.
 */
export const inMonth = (monthsBack: number, day: number, minutes = 0): Date => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, day, 12, minutes));
};
export const monthOfDate = (d: Date): string => d.toISOString().slice(0, 7);

export interface SeedSpec {
  readonly shopId: string;
  readonly completedAt: Date;
  /** Terminal status reached: FAILED (failed items), CONFLICT (conflicts) or COMPLETED (skips only). */
  readonly status?: 'FAILED' | 'CONFLICT' | 'COMPLETED';
  /** Flushes with details (each writes one S3 object). @default 2 */
  readonly flushes?: number;
  readonly platformData?: JsonObject | null;
  /** false: flushes carry counts only, so the job has no flush objects. @default true */
  readonly withDetails?: boolean;
  /** Flush `i`'s details instead of the status's default ones. */
  readonly details?: (i: number) => FlushDetails;
}

export interface SeededJob {
  readonly shopId: string;
  readonly jobId: string;
  readonly status: string;
  completedAt: string;
  /** Hot keys written so far. */
  readonly keys: string[];
}

const detailsFor = (status: SeedSpec['status'], i: number, jobTag: string): FlushDetails => {
  if (status === 'FAILED') return { failed: { timeout: [`${jobTag}-doc-${i}a`, `${jobTag}-doc-${i}b`] } };
  if (status === 'CONFLICT') {
    return {
      conflict: { version: [{ doc_id: `${jobTag}-doc-${i}`, existing_version: 2, incoming_version: 1 }] },
    };
  }
  return { skipped: { unchanged: [`${jobTag}-doc-${i}`] } };
};

const countsFor = (d: FlushDetails) => {
  const n = (m: Record<string, unknown[]> | undefined) =>
    Object.values(m ?? {}).reduce((s, l) => s + l.length, 0);
  return { processed: 3, failed: n(d.failed), skipped: n(d.skipped), conflict: n(d.conflict) };
};

/** The details / platform data the hot path holds for a job right now (what an archive must equal). */
export const hotState = async (env: ArchiverEnv, jobId: string) => ({
  details: await env.store.readAllDetails(jobId),
  platformData: await env.store.readPlatformData(jobId),
});

/**
 * A job that ran through the hot path and reached a terminal status at `completedAt`: created an hour
 * before, `flushes` flushes (the last completes it), optional platform data.
 */
export const seedTerminalJob = async (env: ArchiverEnv, spec: SeedSpec): Promise<SeededJob> => {
  const status = spec.status ?? 'FAILED';
  const flushes = spec.flushes ?? 2;
  const created = new Date(spec.completedAt.getTime() - HOUR);
  const plans = Array.from({ length: flushes }, (_, i) =>
    spec.withDetails === false ? {} : (spec.details?.(i) ?? detailsFor(status, i, `${spec.shopId}-${i}`)),
  );
  const counts = plans.map((d) => countsFor(d));
  const total = counts.reduce((s, c) => s + c.processed + c.failed + c.skipped + c.conflict, 0);
  const { jobId } = await createJob(
    env.ddb,
    env.table,
    { shopId: spec.shopId, jobType: 'full_sync', platform: 'shopify', totalItems: total },
    { now: created },
  );
  const keys: string[] = [];
  if (spec.platformData !== null) {
    const ref = await env.store.writePlatformData(
      spec.shopId,
      jobId,
      spec.platformData ?? { indexer: { v: 1 } },
    );
    keys.push(ref.key);
  }
  const deps = { ddb: env.ddb, table: env.table, detailsWriter: env.store };
  let known: 'IN_PROGRESS' | undefined;
  for (let i = 0; i < flushes; i++) {
    const last = i === flushes - 1;
    const at = last ? spec.completedAt : new Date(created.getTime() + (i + 1) * 60_000);
    const r = await recordFlush(
      deps,
      { shopId: spec.shopId, jobId, totalItems: total, ...(known ? { knownStatus: known } : {}) },
      { chunkIds: [`p${i}`], counts: counts[i] ?? countsFor({}), details: plans[i] ?? {} },
      { now: at },
    );
    if (r.detailsKey) keys.push(r.detailsKey);
    known = 'IN_PROGRESS';
  }
  const row = await getJob(env.ddb, env.table, spec.shopId, jobId, { consistentRead: true });
  if (row?.job_status !== status || row.completed_at !== spec.completedAt.toISOString()) {
    throw new Error(
      `seeding ${jobId}: expected ${status} at ${spec.completedAt.toISOString()}, row is ${JSON.stringify(row)}`,
    );
  }
  return { shopId: spec.shopId, jobId, status, completedAt: row.completed_at, keys: keys.sort() };
};

/**
 * A job of one flush whose failed list is `docs` (random ids barely compress: ~1 MB of gzip per
 * 60,000), completed at `completedAt`.
 */
export const seedBigJob = async (
  env: ArchiverEnv,
  shopId: string,
  completedAt: Date,
  docs: readonly string[],
): Promise<SeededJob> => {
  const { jobId } = await createJob(
    env.ddb,
    env.table,
    { shopId, jobType: 'full_sync', platform: 'shopify', totalItems: docs.length },
    { now: new Date(completedAt.getTime() - HOUR) },
  );
  const r = await recordFlush(
    { ddb: env.ddb, table: env.table, detailsWriter: env.store },
    { shopId, jobId, totalItems: docs.length },
    {
      chunkIds: ['p0'],
      counts: { processed: 0, failed: docs.length, skipped: 0, conflict: 0 },
      details: { failed: { big: [...docs] } },
    },
    { now: completedAt },
  );
  return {
    shopId,
    jobId,
    status: 'FAILED',
    completedAt: completedAt.toISOString(),
    keys: r.detailsKey ? [r.detailsKey] : [],
  };
};

/** The CLI's context on the env's table and bucket (audit, reindex in-process). */
export const cliContextFor = (env: ArchiverEnv) =>
  makeContext({
    ddb: env.ddb,
    s3: env.s3,
    table: env.table,
    bucket: env.bucket,
    cfg: parseConfig(process.env),
  });

/**
 * A retry of a terminal job: one more flush (new chunk id, new S3 object) moves it back through
 * IN_PROGRESS to a terminal status at `at` — a new completed_at.
 */
export const retryJob = async (
  env: ArchiverEnv,
  job: SeededJob,
  at: Date,
  chunk = 'timeout',
): Promise<string> => {
  const row = await getJob(env.ddb, env.table, job.shopId, job.jobId, { consistentRead: true });
  if (!row) throw new Error(`retry of missing job ${job.jobId}`);
  const r = await recordFlush(
    { ddb: env.ddb, table: env.table, detailsWriter: env.store },
    { shopId: job.shopId, jobId: job.jobId, totalItems: row.total_items, knownStatus: row.job_status },
    {
      chunkIds: [chunk],
      counts: { processed: 0, failed: 1, skipped: 0, conflict: 0 },
      details: { failed: { retry: [`${job.jobId}-r`] } },
    },
    { now: at },
  );
  if (!r.detailsKey) throw new Error('retry wrote no details');
  job.keys.push(r.detailsKey);
  job.keys.sort();
  job.completedAt = at.toISOString();
  return r.detailsKey;
};

/**
 * The same S3 client with DeleteObjects replaced (fault injection at the client boundary: every other
 * command, and the request counting, go through unchanged).
 */
export const withDeleteObjects = (
  real: S3Client,
  fake: (input: DeleteObjectsCommandInput, realSend: S3Client['send']) => Promise<DeleteObjectsCommandOutput>,
): S3Client =>
  new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'send') {
        return (command: unknown, ...rest: unknown[]) =>
          command instanceof DeleteObjectsCommand
            ? fake(command.input, target.send.bind(target))
            : (target.send as (...a: unknown[]) => unknown)(command, ...rest);
      }
      return Reflect.get(target, prop, receiver);
    },
  });

// ----- reading state back -----

export const listKeys = async (s3: S3Client, bucket: string, prefix: string): Promise<string[]> => {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) if (o.Key) out.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out.sort();
};

export const getBytes = async (
  s3: S3Client,
  bucket: string,
  key: string,
  range?: string,
): Promise<Buffer> => {
  const out = await s3.send(
    new GetObjectCommand({ Bucket: bucket, Key: key, ...(range ? { Range: range } : {}) }),
  );
  return Buffer.from(
    await (out.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
  );
};

/** The month index as stored (settled parts: their summary, no entries). */
export const readStoredIndex = async (
  env: ArchiverEnv,
  shopId: string,
  month: string,
): Promise<MonthIndex | null> => {
  const key = monthIndexKey(shopId, month);
  try {
    return parseMonthIndex(await getBytes(env.s3, env.bucket, key), key);
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return null;
    throw err;
  }
};

/**
 * The month index with every job one by one: its entries, and its settled parts' jobs rebuilt from
 * their records (shared/archive/settled-jobs.ts expandSettled: the entry each had before its part
 * settled, less `objects_deleted`) — what the index and the parts say together. The stored bytes:
 * readStoredIndex.
 */
export const readIndex = async (
  env: ArchiverEnv,
  shopId: string,
  month: string,
): Promise<MonthIndex | null> => {
  const stored = await readStoredIndex(env, shopId, month);
  if (!stored) return null;
  const { index, unread } = await expandSettled(env, stored);
  if (unread.length > 0) throw new Error(`settled parts not readable here: ${unread.join(', ')}`);
  return index;
};

/**
 * Every job line of every shared part names its segment's shop (`shop_id`, what SQL on Athena reads):
 * the shop of the header before it. Returns shop → job ids, in part order.
 */
export const sharedLineShops = async (env: ArchiverEnv): Promise<Record<string, string[]>> => {
  const out: Record<string, string[]> = {};
  for (const key of await listKeys(env.s3, env.bucket, 'job-details-cold/_shared/')) {
    let header: string | undefined;
    for (const r of (await partLines(env, key)) as unknown as Array<Record<string, unknown>>) {
      if (r.type === 'part') header = String(r.shop_id);
      if (r.type !== 'job') continue;
      expect({ job: r.job_id, shop_id: r.shop_id }).toEqual({ job: r.job_id, shop_id: header });
      const ids = out[String(r.shop_id)] ?? [];
      ids.push(String(r.job_id));
      out[String(r.shop_id)] = ids;
    }
  }
  return out;
};

/** Every record of a part, by gunzipping the WHOLE object (what `gzip -dc part | jq` sees). */
export const partLines = async (env: ArchiverEnv, key: string): Promise<PartRecord[]> => {
  const text = gunzipSync(await getBytes(env.s3, env.bucket, key)).toString('utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as PartRecord);
};

/**
 * One record: its block fetched alone by its byte range, decompressed alone, the record found in it
 * (index@3 entries name the block; the job id or platform ref names the record).
 */
export const memberAt = async (env: ArchiverEnv, key: string, r: Located, want: WantedRecord) =>
  decodeBlock(
    await getBytes(env.s3, env.bucket, key, `bytes=${r.offset}-${r.offset + r.length - 1}`),
    key,
    r.line,
    { want, shopId: parsePartKey(key)?.shopId ?? '' },
  );

export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

// ----- running the synthesized state machine -----

let machine: StateMachineDefinition | undefined;

export interface MachineRunOptions {
  /** Execution input (the schedule sends `{}`). */
  readonly input?: Record<string, unknown>;
  /** `$$.Execution.Name` (the run id). */
  readonly execution?: string;
  /**
   * Kill the ArchiveBatch invocation just before this stage of the first group matching `group`, as a
   * Lambda crash does: no catch block gets to write anything (every later request of the invocation
   * fails) and the Task ends with `Crash`, which no Retry matches — the batch's child fails, Tally
   * counts its groups failed, the run ends incomplete.
   */
  readonly crash?: { readonly before: GroupStage; readonly group?: (g: PlannedGroup) => boolean };
  /** Deps for one stage of every group (fault injection), e.g. `{ delete: depsWithFaultyS3 }`. */
  readonly stageDeps?: Partial<Record<GroupStage, StepDeps>>;
  /** Called before a group's stage (e.g. retry a job, tamper with a part or its manifest). */
  readonly hooks?: Partial<Record<GroupStage, (at: StageContext) => Promise<void>>>;
  /**
   * Keep the plan watermark of the runs before. Default: forget it, as the first run ever — these
   * tests seed past completions between runs, which a watermark (docs/steady-state.md) treats as
   * already planned; the watermark's own tests keep it.
   */
  readonly keepWatermark?: boolean;
}

export type PlannedPage = PlanResult & { readonly planned: PlannedGroup[] };

export interface MachineRun {
  readonly run: LocalRunResult;
  /** What Report returned (also on a run that then ends incomplete); null if it never did. */
  readonly report: RunReport | null;
  /** Plan's results, each with the groups its plan file lists. */
  readonly pages: PlannedPage[];
  /** Every group's result, as ArchiveBatch returned them. */
  readonly results: GroupResult[];
  /** What each group's stages returned in full (BatchHooks.groupDone). */
  readonly steps: GroupDetail[];
}

const killed = (name: string): Error => Object.assign(new Error(`injected fault: ${name}`), { name });

/** The same client, failing every call once its invocation is dead. */
const mortal = <C extends { send: (...a: never[]) => unknown }>(client: C, inv: { dead: boolean }): C =>
  new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'send') {
        return (...args: unknown[]) => {
          if (inv.dead) return Promise.reject(killed('Crash'));
          return (target.send as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });

/**
 * Runs the CDK-synthesized state machine with the local runner, its handlers built by their own
 * factories over this env's deps (its clock and settings) — the flow is the definition's, nothing of
 * it is copied here. Faults go in through the per-group body's hooks (BatchHooks) and `crash`; each
 * Task's output is kept for the test to inspect.
 */
export const runMachine = async (env: ArchiverEnv, opts: MachineRunOptions = {}): Promise<MachineRun> => {
  machine ??= synthesizedDefinition();
  const pages: PlannedPage[] = [];
  const results: GroupResult[] = [];
  const steps: GroupDetail[] = [];
  let report: RunReport | null = null;
  let crashed = false;
  const handlers = (sink: ObservabilitySink): Record<ArchiverStep, StepHandler> => {
    const plan = planHandler(() => env.deps, sink);
    const end = reportHandler(() => env.deps, sink);
    return {
      plan: async (event, context) => {
        const out = await plan(event, context);
        const groups =
          out.batches === 0
            ? []
            : (await getBytes(env.s3, env.bucket, out.batchesKey))
                .toString('utf8')
                .split('\n')
                .filter((l) => l !== '')
                .flatMap((l) => (JSON.parse(l) as PlannedBatch).groups);
        pages.push({ ...out, planned: groups });
        return out;
      },
      'archive-batch': async (event, context) => {
        const inv = { dead: false };
        const deps = env.withDeps({ s3: mortal(env.s3, inv), ddb: mortal(env.ddb, inv) });
        const hooks: BatchHooks = {
          before: async (stage, at) => {
            const c = opts.crash;
            if (c && !crashed && c.before === stage && (c.group?.(at.group) ?? true)) {
              crashed = true;
              inv.dead = true;
              throw killed('Crash');
            }
            await opts.hooks?.[stage]?.(at);
          },
          depsFor: (stage) => {
            const d = opts.stageDeps?.[stage];
            return d ? makeStepDeps({ ...d, s3: mortal(d.s3, inv), ddb: mortal(d.ddb, inv) }) : undefined;
          },
          groupDone: (detail) => steps.push(detail),
        };
        const out = await archiveBatchHandler(
          () => deps,
          sink,
          hooks,
        )(event, context).catch((err: unknown) => {
          throw inv.dead ? killed('Crash') : err;
        });
        // A killed process returns nothing, whatever its handler would have.
        if (inv.dead) throw killed('Crash');
        results.push(...out.results);
        return out;
      },
      tally: tallyHandler(() => env.deps, sink),
      forget: forgetHandler(() => env.deps, sink),
      redact: redactHandler(() => env.deps, sink),
      report: async (event, context) => {
        report = await end(event, context);
        return report;
      },
    };
  };
  if (!opts.keepWatermark) await forgetWatermark(env);
  const run = await runLocal(env, {
    definition: machine,
    input: opts.input ?? {},
    handlers,
    ...(opts.execution ? { executionName: opts.execution } : {}),
  });
  if (opts.crash && !crashed) throw new Error('the crash point was never reached');
  return { run, report, pages, results, steps };
};
