import type { RestoreTier } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';
import { ACCESS_LOGS_RETENTION_DAYS, CHOICES, SETTINGS } from '../../shared/settings';
import { type Prices, requestPrice, STORAGE_CLASSES, type StorageClass } from './prices';
import { transitionBreakEvenBytes } from './transition-threshold';

/**
 * The cost model behind `jobarchive cost` (pure). Three ways to keep a month's job details (a cohort)
 * for the retention horizon:
 *
 * - hot: the flush objects stay in S3 Standard until they expire;
 * - lifecycle: a rule moves the small objects themselves to the class after the first month
 *   (transition fee per object, the class's per-object minimum and overhead, minimum duration);
 * - archive: this archiver — its measured requests, Lambda time, state transitions and read units,
 *   each scaled with what it scales with when the figures split them (`WorkTerms`, steady-year: per
 *   hot object, per part, per active run and its pages and batches, per job), else per archived
 *   object; Lambda billed as CPU plus the requests' waiting at AWS's latency (`lambdaSeconds`); then
 *   the archive's measured bytes at rest: each part in the class only when the construct's lifecycle rule
 *   moves it (larger than its transitionMinimumSize: by default where a move pays for itself, decided
 *   per part as S3 does), the index in Standard per job; lookups priced by what
 *   they read (index GETs in Standard, part blocks in the part's class).
 *
 * A cohort is hot its first month (whole months: archived mid-next-month) and archived for the rest
 * of the horizon. Payback is per cohort: the age at which one cohort's archival has cost no more than
 * keeping that cohort hot — not a cumulative bill from an empty bucket. Fixed costs (alarms, custom
 * metrics, the idle part of the daily runs) are charged to the cohort archived that month. The writes
 * of the hot path are the same in all three and left out.
 */
export interface Measured {
  /** Where the figures came from (shown in the output). */
  readonly source: string;
  readonly objectsPerJob: number;
  readonly bytesPerJob: number;
  /** S3 requests of the archiver per archived hot object, by API call (`GetObject`, `ListObjectsV2`, …). */
  readonly s3RequestsPerObject: Readonly<Record<string, number>>;
  readonly taskInvocationsPerJob: number;
  readonly taskSecondsPerJob: number;
  readonly stateTransitionsPerJob: number;
  readonly dynamodbReadUnitsPerJob: number;
  /** Archive bytes at rest / hot bytes replaced. */
  readonly bytesAtRestRatio: number;
  /** Of the bytes at rest, the share in indexes (Standard for good). */
  readonly indexShare: number;
  readonly partsPerJob: number;
  readonly averagePartBytes: number;
  /** Sizes of the measured parts (each decides its own class); absent: every part of the average size. */
  readonly partSizes?: readonly number[];
  /** Per lookup (month known): GETs and bytes of month indexes and of part blocks. */
  readonly lookup: {
    readonly indexRequests: number;
    readonly indexBytes: number;
    readonly partRequests: number;
    readonly partBytes: number;
    /** The hot check's LIST of the job's hot prefix (steady-year's `otherRequests`; absent: not measured). */
    readonly otherRequests?: number;
  };
  /**
   * Run scratch (`job-details-runs/`): bytes written per archived hot object, kept in Standard for
   * `expireDays` (steady-year; absent: not measured, counted as 0 and said so).
   */
  readonly runScratch?: { readonly bytesPerObject: number; readonly expireDays: number };
  /** What a run with nothing to do costs (steady-year's idle runs); charged per scheduled run. */
  readonly idleRun?: {
    readonly s3RequestsByType: Readonly<Record<string, number>>;
    readonly invocations: number;
    readonly stateTransitions: number;
    readonly readUnits: number;
    readonly taskSeconds: number;
    /** CPU seconds and DynamoDB requests of the idle run (absent: not measured; its wall time is billed). */
    readonly cpuSeconds?: number;
    readonly dynamodbRequests?: number;
  };
  /**
   * Index bytes in Standard per archived job (its entries; a part's own index share is per job too,
   * parts per job being fixed). Absent: the index scales with the hot bytes (`indexShare`).
   */
  readonly indexBytesPerJob?: number;
  /** The one-time work split by what it scales with (steady-year with per-run request keys). */
  readonly terms?: WorkTerms;
}

/** Work of one unit of something: S3 requests by API call, Lambda invocations, state transitions. */
export interface UnitWork {
  readonly s3: Readonly<Record<string, number>>;
  readonly invocations: number;
  readonly stateTransitions: number;
}

/**
 * What an active run's work scales with (cost.ts builds it from steady-year's request keys):
 * - per archived hot object: its GET, the LIST pages and DeleteObjects over hot keys;
 * - per part written: the part, month index, intent and shared keys (every archive key but the run's);
 * - per active run (a month has `activeRunsPerMonth`: the run that archives, the one that deletes):
 *   its state, report, erasure and attempts listing; per plan page of it the plan files, the page
 *   record and the Map's results, Plan and Tally (2 invocations) and Plan, HasBatches, ProcessBatches,
 *   Tally, MorePages (5 transitions); per batch its attempt records, one ArchiveBatch invocation and
 *   its child execution's transition. The idle run's work is taken out of each active run (an active
 *   run takes an idle run's place that day, and idle runs are charged in the fixed part);
 * - per job: DynamoDB read units and requests (the idle run's, which scale with the table, taken out);
 * - Lambda CPU per archived hot object (beyond the idle run's).
 */
export interface WorkTerms {
  readonly perHotObject: Readonly<Record<string, number>>;
  readonly perPart: Readonly<Record<string, number>>;
  readonly perRun: UnitWork;
  readonly perPage: UnitWork;
  readonly perBatch: UnitWork;
  readonly activeRunsPerMonth: number;
  /** Jobs a shop-month holds, as measured (sets the shop-months of a run, hence its batches). */
  readonly jobsPerShopMonth: number;
  readonly readUnitsPerJob: number;
  /** Absent: not measured (no DynamoDB waiting counted, said in the output). */
  readonly dynamodbRequestsPerJob?: number;
  /** Absent: not measured; Lambda is then billed the local wall time (`taskSecondsPerJob`). */
  readonly cpuSecondsPerHotObject?: number;
  /** Of that CPU, each step's share (its handler's CPU over the active runs); absent: all ArchiveBatch's. */
  readonly cpuShareByStep?: Readonly<Record<string, number>>;
}

/** An active run's plan pages and batches for `jobs` jobs (the run settings' defaults). */
export const runShape = (jobs: number, jobsPerShopMonth: number): { pages: number; batches: number } => {
  const shopMonths = jobsPerShopMonth > 0 ? jobs / jobsPerShopMonth : 0;
  const s = SETTINGS;
  return {
    pages: Math.max(
      1,
      Math.ceil(jobs / s.planPageJobs.default),
      Math.ceil(shopMonths / s.planPageGroups.default),
    ),
    batches: Math.max(
      1,
      Math.ceil(jobs / s.batchJobs.default),
      Math.ceil(shopMonths / s.batchGroups.default),
    ),
  };
};

export interface Workload {
  readonly jobsPerMonth: number;
  readonly objectsPerJob: number;
  readonly bytesPerJob: number;
  readonly retentionMonths: number;
  readonly storageClass: StorageClass;
  readonly lookupsPerMonth: number;
  readonly lambdaMemoryMb: number;
  /** Scheduled runs a month (daily: 30). */
  readonly runsPerMonth?: number;
  /**
   * The construct's `transitionMinimumSize` in bytes: parts larger than it move to the class. Absent:
   * the construct's default for the class and retention (`transitionThresholdBytes`).
   */
  readonly transitionMinimumBytes?: number;
  /** The construct's `runMetrics`: 8 custom metrics and 2 more alarms (off by default). */
  readonly runMetrics?: boolean;
  /**
   * Jobs a shop completes in a month (a shop-month: what a part holds). Absent: as measured. Parts
   * per job scale with its inverse and part sizes with it (a part holds a shop-month's objects).
   */
  readonly jobsPerShopMonth?: number;
  /**
   * Memory (MB) of single steps (`plan`, `archive-batch`, `tally`, `report`, …), over
   * `lambdaMemoryMb` — the construct's `stepMemoryMb`. A step's CPU is billed at its memory; the
   * requests' waiting at ArchiveBatch's (it sends nearly all of them).
   */
  readonly stepMemoryMb?: Readonly<Record<string, number>>;
  /**
   * The retrieval tier a lookup restores a Flexible Retrieval / Deep Archive part at (the reader's
   * `restoreTier`, shared/settings.ts; default its default, Standard). Deep Archive has no Expedited.
   */
  readonly restoreTier?: RestoreTier;
  /**
   * Days the details bucket's access logs are kept in Standard (the construct's
   * `accessLogsRetention` when opted in); 0: not kept, or priced elsewhere (a central log bucket).
   * Absent: the construct's default, ACCESS_LOGS_RETENTION_DAYS (0: it logs nothing unless asked).
   */
  readonly accessLogDays?: number;
}

export interface MonthCost {
  readonly month: number;
  readonly hot: number;
  readonly lifecycle: number;
  readonly archive: number;
}

export interface CostResult {
  readonly workload: Workload;
  /** The whole bill month by month from an empty bucket (every cohort kept), for the table. */
  readonly months: MonthCost[];
  readonly cumulative: MonthCost[];
  /** One cohort (a month of jobs), by its age in months: what it costs that month. */
  readonly cohort: MonthCost[];
  /** One cohort's cost over the whole horizon, each way. */
  readonly cohortTotal: Omit<MonthCost, 'month'>;
  /** Age (months) from which one cohort's cumulative archive cost is at most hot's; null: never. */
  readonly breakEvenVsHot: number | null;
  readonly breakEvenVsLifecycle: number | null;
  /** One-time cost of archiving one cohort, by component (fixed costs of its month included). */
  readonly archiveOneTime: Readonly<Record<string, number>>;
  /** Monthly fixed costs of a deployment, by component. */
  readonly fixedPerMonth: Readonly<Record<string, number>>;
  /**
   * The physical floor of one cohort (floorCohort): one GET per hot object, its first month in
   * Standard, then its parts at 0.75× the hot bytes in the class — nothing else.
   */
  readonly floor: {
    readonly cohort: readonly number[];
    readonly total: number;
    /** The one-time part of it: one GET per hot object. */
    readonly gets: number;
  };
  /**
   * One cohort archived without the month's fixed costs (its lookups included), and its ratio to the
   * floor (which has no lookups): the figure.
   */
  readonly archiveWithoutFixed: number;
  readonly ratioToFloor: number;
  /** The archival alone: `archiveWithoutFixed` less the cohort's lookups, against the same floor. */
  readonly archivalWithoutFixed: number;
  readonly ratioArchivalToFloor: number;
  /**
   * The cohort's lookups (`count` over its archived months) and their physical minimum: in an instant
   * class one GET of the job's bytes (at the floor's 0.75×); in a restore class one restore request,
   * the retrieval of one object holding only the job, and its GET.
   */
  readonly lookups: {
    readonly count: number;
    readonly perLookup: number;
    readonly floorPerLookup: number;
    readonly archive: number;
    readonly floor: number;
    readonly ratioToFloor: number;
  };
  /** The one-time work by what it scales with, when the figures split it (`Measured.terms`). */
  readonly scaled?: ReturnType<typeof scaledOneTime>;
  /** How the cohort's parts are billed: share of part bytes and parts that move to the class. */
  readonly partsMoving: {
    readonly byteShare: number;
    readonly countShare: number;
    /** Parts larger than this (bytes) move: the construct's transitionMinimumSize for the workload. */
    readonly thresholdBytes: number;
  };
}

const GB = 1024 ** 3;
const DAYS_PER_MONTH = 30;
/**
 * Parts larger than this (bytes) move to the class: the workload's `transitionMinimumBytes`, else
 * what the construct deploys by default (its lifecycle rule's ObjectSizeGreaterThan: the break-even
 * at list prices for the class, the retention and the default transitionAfterDays).
 */
export const transitionThresholdBytes = (
  w: Pick<Workload, 'storageClass' | 'retentionMonths' | 'transitionMinimumBytes'>,
): number =>
  w.transitionMinimumBytes ??
  transitionBreakEvenBytes({ storageClass: w.storageClass, retentionMonths: w.retentionMonths });
/**
 * What the construct deploys that bills by the month (infra/construct/job-details-archive.ts): by
 * default one alarm, on a metric SQS publishes for free (the schedule's dead letters). Failed,
 * timed-out and aborted executions reach the alarm topic through an EventBridge rule on Step
 * Functions' own status-change events: no alarm, no charge (test/infra/construct.test.ts checks the
 * template holds exactly these counts).
 */
export const ARCHIVE_ALARMS = 1;
/** With `runMetrics`: RUN_METRICS (functions/metric-names.ts), one `service` dimension each … */
export const ARCHIVE_CUSTOM_METRICS = 8;
/** … and alarms on JobsQuarantined and ErasureRequestsOverdue. */
export const RUN_METRICS_ALARMS = 2;
/** The gzip floor of the parts: bytes at rest per hot byte (docs/benchmarks.md, "gz floor"). */
export const FLOOR_AT_REST_RATIO = 0.75;
/** A Distributed Map bills one state transition for each child execution it starts (beside the child's states). */
export const CHILD_EXECUTION_TRANSITIONS = 1;

/** Whether the class needs a restore before a GET, and at what price for the workload's tier. */
export const restorePrice = (
  w: Pick<Workload, 'storageClass' | 'restoreTier'>,
  p: Prices,
): { request: number; gb: number } | undefined => {
  const tiers = p.restore[w.storageClass];
  if (tiers === undefined) return undefined;
  const tier = w.restoreTier ?? CHOICES.restoreTier.default;
  const price = tiers[tier];
  if (price === undefined)
    throw new InvalidInputError(
      '--restore-tier',
      `${w.storageClass} offers no ${tier} retrieval (it offers ${Object.keys(tiers).join(', ')})`,
    );
  return price;
};

/**
 * Days the details bucket's server access logs are kept in Standard: the workload's
 * `accessLogDays`, else what the construct deploys by default (ACCESS_LOGS_RETENTION_DAYS,
 * shared/settings.ts: the one value both read; 0, no access logs). 0: not kept, or billed elsewhere.
 */
export const accessLogDays = (w: Pick<Workload, 'accessLogDays'>): number =>
  w.accessLogDays ?? ACCESS_LOGS_RETENTION_DAYS;

/**
 * $ of access-log records (of requests, of lifecycle actions) kept the workload's days in Standard.
 * Every request, every key of a multi-object delete and every lifecycle transition and expiration
 * writes a record (`accessLogRecordBytes`, `accessLogLifecycleRecordBytes`).
 */
export const accessLogDollars = (
  requests: number,
  lifecycleActions: number,
  w: Pick<Workload, 'accessLogDays'>,
  p: Prices,
): number =>
  ((requests * p.accessLogRecordBytes + lifecycleActions * p.accessLogLifecycleRecordBytes) / GB) *
  p.standardGbMonth *
  (accessLogDays(w) / DAYS_PER_MONTH);

export const validateWorkload = (w: Workload): Workload => {
  const positive = (field: string, v: number, whole = false) => {
    if (!Number.isFinite(v) || v < 0 || (whole && !Number.isInteger(v)))
      throw new InvalidInputError(field, `expected a ${whole ? 'whole ' : ''}number ≥ 0, got ${v}`);
  };
  positive('--jobs-per-month', w.jobsPerMonth);
  positive('--objects-per-job', w.objectsPerJob);
  positive('--bytes-per-job', w.bytesPerJob);
  positive('--retention-months', w.retentionMonths, true);
  positive('--lookups-per-month', w.lookupsPerMonth);
  if (w.accessLogDays !== undefined) positive('--access-log-days', w.accessLogDays, true);
  if (w.transitionMinimumBytes !== undefined)
    positive('--transition-minimum-kb', w.transitionMinimumBytes, true);
  if (w.jobsPerShopMonth !== undefined && !(w.jobsPerShopMonth > 0))
    throw new InvalidInputError('--jobs-per-shop-month', `expected a number > 0, got ${w.jobsPerShopMonth}`);
  if (w.retentionMonths < 2)
    throw new InvalidInputError(
      '--retention-months',
      'expected at least 2 (archival starts after the first)',
    );
  return w;
};

/**
 * The cohort's parts against the measured ones: a part holds a shop-month's objects, so with more
 * jobs a shop-month there are fewer parts a job, each bigger; with more bytes a job, bigger parts.
 */
export const partScale = (w: Workload, m: Measured): { partsPerJob: number; sizeFactor: number } => {
  const measuredJpsm = m.terms?.jobsPerShopMonth;
  if (w.jobsPerShopMonth !== undefined && measuredJpsm === undefined)
    throw new InvalidInputError(
      '--jobs-per-shop-month',
      'these figures do not say how many jobs their shop-months held (use steady-year figures)',
    );
  const shops = w.jobsPerShopMonth !== undefined && measuredJpsm ? w.jobsPerShopMonth / measuredJpsm : 1;
  const bytes = m.bytesPerJob > 0 ? w.bytesPerJob / m.bytesPerJob : 1;
  return { partsPerJob: m.partsPerJob / shops, sizeFactor: bytes * shops };
};

/**
 * Which of the cohort's parts S3 moves (larger than transitionThresholdBytes), decided per part as S3
 * does (sizes: partScale), and the bytes the class bills for them as a share of all part bytes: each
 * moving part at least the class's minimum object size (Glacier IR: 128 KB).
 */
export const partsMoving = (
  w: Workload,
  m: Measured,
  minObjectBytes = 0,
): { byteShare: number; countShare: number; billedByteShare: number } => {
  const scale = partScale(w, m).sizeFactor;
  const sizes = m.partSizes && m.partSizes.length > 0 ? m.partSizes : [m.averagePartBytes];
  const scaled = sizes.map((s) => s * scale);
  const threshold = transitionThresholdBytes(w);
  const moves = (s: number) => s > threshold;
  const total = scaled.reduce((a, b) => a + b, 0);
  const moving = scaled.filter(moves);
  return {
    byteShare: total > 0 ? moving.reduce((a, b) => a + b, 0) / total : 0,
    countShare: moving.length / scaled.length,
    billedByteShare: total > 0 ? moving.reduce((a, b) => a + Math.max(b, minObjectBytes), 0) / total : 0,
  };
};

const addCalls = (into: Record<string, number>, calls: Readonly<Record<string, number>>, times: number) => {
  for (const [k, n] of Object.entries(calls)) into[k] = (into[k] ?? 0) + n * times;
};
const s3Dollars = (calls: Readonly<Record<string, number>>, p: Prices) =>
  Object.entries(calls).reduce((s, [call, n]) => s + n * requestPrice(call, p), 0);

/** Lambda seconds billed: CPU plus the requests' waiting at AWS's latency (hot GETs in parallel). */
export interface LambdaSeconds {
  /** CPU seconds as measured here, on a whole core. */
  readonly cpu: number;
  /** The waiting not hidden behind the CPU (see lambdaSeconds). */
  readonly waiting: number;
  /** true: CPU was not measured, `cpu` is the local wall time (emulator latency included). */
  readonly wallTime: boolean;
}

/**
 * Lambda gives a function the equivalent of one vCPU at 1,769 MB and CPU in proportion to its memory
 * below that (AWS Lambda Developer Guide, "Configure Lambda function memory"): CPU work measured on a
 * whole core takes 1,769 / memory times as long on a smaller function. Node runs the steps on one
 * thread, so more memory than this buys no speed.
 */
export const FULL_VCPU_MB = 1769;

/** Wall seconds on Lambda of `cpu` seconds of work measured on a whole core, at `memoryMb`. */
export const cpuWallSeconds = (cpu: number, memoryMb: number): number =>
  cpu * Math.max(1, FULL_VCPU_MB / memoryMb);

/**
 * Lambda bills wall-clock duration. On AWS a step's duration is its CPU time at its memory's share of a
 * vCPU plus the time it waits on its requests: S3 at `s3LatencyMs` each, DynamoDB at
 * `dynamodbLatencyMs` each. The hot GETs go `readConcurrency` at a time and run ahead of the records
 * being appended (ArchiveBatch's prefetch window), so they overlap the CPU: the longer of the two is
 * billed. Every other request waits one after another.
 */
export const lambdaSeconds = (
  cpu: number,
  requests: { hotGets: number; otherS3: number; dynamodb: number },
  p: Prices,
  memoryMb: number,
): number =>
  Math.max(
    cpuWallSeconds(cpu, memoryMb),
    (requests.hotGets / SETTINGS.readConcurrency.default) * (p.s3LatencyMs / 1000),
  ) +
  requests.otherS3 * (p.s3LatencyMs / 1000) +
  requests.dynamodb * (p.dynamodbLatencyMs / 1000);

const runCost = (
  r: {
    s3RequestsByType: Readonly<Record<string, number>>;
    invocations: number;
    stateTransitions: number;
    readUnits: number;
    taskSeconds: number;
    cpuSeconds?: number;
    dynamodbRequests?: number;
  },
  w: Workload,
  p: Prices,
) => ({
  s3: s3Dollars(r.s3RequestsByType, p),
  s3Count: Object.values(r.s3RequestsByType).reduce((a, b) => a + b, 0),
  // CPU measured: CPU plus its requests' waiting at AWS's latency; else the local wall time.
  lambda:
    r.invocations * p.lambdaRequest +
    (r.cpuSeconds === undefined
      ? r.taskSeconds
      : lambdaSeconds(
          r.cpuSeconds,
          {
            hotGets: 0,
            otherS3: Object.values(r.s3RequestsByType).reduce((a, b) => a + b, 0),
            dynamodb: r.dynamodbRequests ?? 0,
          },
          p,
          w.lambdaMemoryMb,
        )) *
      (w.lambdaMemoryMb / 1024) *
      p.lambdaGbSecond,
  stepFunctions: r.stateTransitions * p.stateTransition,
  dynamodb: r.readUnits * p.dynamodbReadUnit,
});

/** $ a month a deployment costs whatever it archives: alarms, custom metrics, its idle daily runs. */
export const fixedPerMonth = (
  w: Workload,
  m: Measured,
  p: Prices,
): { alarms: number; customMetrics: number; idleRuns: number; schedule: number } => {
  const runs = w.runsPerMonth ?? 30;
  const idle = m.idleRun ? runCost(m.idleRun, w, p) : { s3: 0, lambda: 0, stepFunctions: 0, dynamodb: 0 };
  const opted = w.runMetrics === true;
  return {
    alarms: (ARCHIVE_ALARMS + (opted ? RUN_METRICS_ALARMS : 0)) * p.alarmMonth,
    customMetrics: opted ? ARCHIVE_CUSTOM_METRICS * p.customMetricMonth : 0,
    idleRuns: runs * (idle.s3 + idle.lambda + idle.stepFunctions + idle.dynamodb),
    // EventBridge Scheduler starts each run (its dead-letter queue costs nothing while empty: SQS bills
    // requests, and nothing polls it; its alarm's metric is SQS's own, free).
    schedule: runs * p.schedulerInvocation,
  };
};

/** $ of one cohort at the physical floor, by age (1 = hot): see CostResult.floor. */
export const floorCohort = (w: Workload, p: Prices): { cohort: number[]; gets: number } => {
  const cls = w.storageClass;
  const hotGb = (w.jobsPerMonth * w.bytesPerJob) / GB;
  const gets = w.jobsPerMonth * w.objectsPerJob * p.getRequest;
  const parts = hotGb * FLOOR_AT_REST_RATIO * p.classGbMonth[cls];
  const keptInClassDays = (w.retentionMonths - 1) * DAYS_PER_MONTH;
  const shortfall = Math.max(0, p.classMinDays[cls] - keptInClassDays) / DAYS_PER_MONTH;
  const cohort: number[] = [];
  for (let age = 1; age <= w.retentionMonths; age++)
    cohort.push(
      age === 1
        ? hotGb * p.standardGbMonth
        : parts + (age === 2 ? gets : 0) + (age === w.retentionMonths ? parts * shortfall : 0),
    );
  return { cohort, gets };
};

/** One cohort's one-time work by what it scales with (`m.terms`), in $, with its Lambda seconds. */
export const scaledOneTime = (w: Workload, m: Measured, t: WorkTerms, p: Prices) => {
  const jobs = w.jobsPerMonth;
  const objects = jobs * w.objectsPerJob;
  const parts = jobs * partScale(w, m).partsPerJob;
  const shape = runShape(jobs, w.jobsPerShopMonth ?? t.jobsPerShopMonth);
  const runs = t.activeRunsPerMonth;
  const idle = m.idleRun;
  // One active run, less the idle run it replaces (never below nothing).
  const runS3: Record<string, number> = {};
  addCalls(runS3, t.perRun.s3, 1);
  addCalls(runS3, t.perPage.s3, shape.pages);
  addCalls(runS3, t.perBatch.s3, shape.batches);
  if (idle) addCalls(runS3, idle.s3RequestsByType, -1);
  for (const k of Object.keys(runS3)) runS3[k] = Math.max(0, runS3[k] ?? 0);
  const net = (f: (u: UnitWork) => number, idleValue: number) =>
    Math.max(0, f(t.perRun) + shape.pages * f(t.perPage) + shape.batches * f(t.perBatch) - idleValue);
  const runInvocations = net((u) => u.invocations, idle?.invocations ?? 0);
  const runTransitions = net((u) => u.stateTransitions, idle?.stateTransitions ?? 0);
  const hot: Record<string, number> = {};
  addCalls(hot, t.perHotObject, objects);
  const partCalls: Record<string, number> = {};
  addCalls(partCalls, t.perPart, parts);
  const runCalls: Record<string, number> = {};
  addCalls(runCalls, runS3, runs);
  const count = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
  const hotGets = (t.perHotObject.GetObject ?? 0) * objects;
  const ddbRequests = (t.dynamodbRequestsPerJob ?? 0) * jobs;
  const wallTime = t.cpuSecondsPerHotObject === undefined;
  const cpu = wallTime ? jobs * m.taskSecondsPerJob : objects * (t.cpuSecondsPerHotObject ?? 0);
  const memoryOf = (step: string) => w.stepMemoryMb?.[step] ?? w.lambdaMemoryMb;
  // Each step's share of the CPU (all ArchiveBatch's when not measured), summing to 1.
  const measuredShares = Object.entries(t.cpuShareByStep ?? {});
  const shareSum = measuredShares.reduce((a, [, v]) => a + v, 0);
  const shares: [string, number][] =
    shareSum > 0 ? measuredShares.map(([step, v]) => [step, v / shareSum]) : [['archive-batch', 1]];
  const batchShare = shares.reduce((a, [step, v]) => (step === 'archive-batch' ? a + v : a), 0);
  const waitingMemoryMb = memoryOf('archive-batch');
  // Each step's CPU at its memory's share of a vCPU (GB-seconds: the same for any memory up to
  // FULL_VCPU_MB); ArchiveBatch's overlaps its hot GETs, its other requests wait after it.
  const cpuGbSeconds = wallTime
    ? (cpu * waitingMemoryMb) / 1024
    : shares.reduce(
        (a, [step, v]) => a + (cpuWallSeconds(cpu * v, memoryOf(step)) * memoryOf(step)) / 1024,
        0,
      );
  const cpuMemoryMb = wallTime ? waitingMemoryMb : shares.reduce((a, [step, v]) => a + v * memoryOf(step), 0);
  const waiting = wallTime
    ? 0
    : lambdaSeconds(
        cpu * batchShare,
        {
          hotGets,
          otherS3: count(hot) - hotGets + count(partCalls) + count(runCalls),
          dynamodb: ddbRequests,
        },
        p,
        waitingMemoryMb,
      ) - cpuWallSeconds(cpu * batchShare, waitingMemoryMb);
  const waitingGbSeconds = (waiting * waitingMemoryMb) / 1024;
  const invocations = runs * runInvocations;
  return {
    shape,
    parts,
    latency: {
      s3Ms: p.s3LatencyMs,
      dynamodbMs: p.dynamodbLatencyMs,
      readConcurrency: SETTINGS.readConcurrency.default,
    },
    dollars: {
      perHotObject: s3Dollars(hot, p),
      perPart: s3Dollars(partCalls, p),
      perActiveRun:
        s3Dollars(runCalls, p) + runs * runTransitions * p.stateTransition + invocations * p.lambdaRequest,
      perJobReads: jobs * t.readUnitsPerJob * p.dynamodbReadUnit,
      lambdaCpu: cpuGbSeconds * p.lambdaGbSecond,
      lambdaWaiting: waitingGbSeconds * p.lambdaGbSecond,
    },
    s3: s3Dollars(hot, p) + s3Dollars(partCalls, p) + s3Dollars(runCalls, p),
    s3Count: count(hot) + count(partCalls) + count(runCalls),
    lambda: invocations * p.lambdaRequest + (cpuGbSeconds + waitingGbSeconds) * p.lambdaGbSecond,
    lambdaSeconds: { cpu, waiting, wallTime } as LambdaSeconds,
    /** The memory the CPU is billed at (its steps' mix) and the waiting (ArchiveBatch's). */
    lambdaMemoryMb: { cpu: cpuMemoryMb, waiting: waitingMemoryMb },
    stepFunctions: runs * runTransitions * p.stateTransition,
    dynamodb: jobs * t.readUnitsPerJob * p.dynamodbReadUnit,
  };
};

/** One cohort's one-time archival cost, by component. */
export const archiveOneTime = (w: Workload, m: Measured, p: Prices): Record<string, number> => {
  const objects = w.jobsPerMonth * w.objectsPerJob;
  const jobs = w.jobsPerMonth;
  const move = partsMoving(w, m);
  const work = m.terms
    ? scaledOneTime(w, m, m.terms, p)
    : runCost(
        {
          s3RequestsByType: Object.fromEntries(
            Object.entries(m.s3RequestsPerObject).map(([k, n]) => [k, n * objects]),
          ),
          invocations: jobs * m.taskInvocationsPerJob,
          stateTransitions: jobs * m.stateTransitionsPerJob,
          readUnits: jobs * m.dynamodbReadUnitsPerJob,
          taskSeconds: jobs * m.taskSecondsPerJob,
        },
        w,
        p,
      );
  const fixed = Object.values(fixedPerMonth(w, m, p)).reduce((a, b) => a + b, 0);
  const scratch = m.runScratch;
  const movingParts = jobs * partScale(w, m).partsPerJob * move.countShare;
  return {
    s3Requests: work.s3,
    // Run scratch in Standard until its lifecycle rule expires it.
    runScratch: scratch
      ? ((objects * scratch.bytesPerObject) / GB) * p.standardGbMonth * (scratch.expireDays / DAYS_PER_MONTH)
      : 0,
    lambda: work.lambda,
    stepFunctions: work.stepFunctions,
    dynamodb: work.dynamodb,
    transitions: movingParts * p.transitionRequest[w.storageClass],
    // The access log: a record per request, per hot key the multi-object deletes remove, per part
    // transitioned; kept the workload's accessLogDays in Standard.
    accessLogs: accessLogDollars(work.s3Count + objects, movingParts, w, p),
    fixed,
  };
};

/**
 * A cohort's archive at rest (GB): the parts scale with the hot bytes (they hold them, compressed);
 * the index with the jobs (an entry a job, and a part's share of it per job) when measured so.
 */
export const atRest = (w: Workload, m: Measured): { partGb: number; indexGb: number } => {
  const hotBytes = w.jobsPerMonth * w.bytesPerJob;
  const partGb = (hotBytes * m.bytesAtRestRatio * (1 - m.indexShare)) / GB;
  const indexGb =
    m.indexBytesPerJob === undefined
      ? (hotBytes * m.bytesAtRestRatio * m.indexShare) / GB
      : (w.jobsPerMonth * m.indexBytesPerJob) / GB;
  return { partGb, indexGb };
};

/**
 * What the parts the lifecycle rule leaves in Standard (not larger than transitionThresholdBytes)
 * cost there: how many, their GB, $ a month in Standard, and $ a month and once (transitions) had they
 * moved to the class too (a transitionMinimumSize of 0; Glacier IR bills each 128 KB at least).
 */
export const partsLeftInStandard = (
  w: Workload,
  m: Measured,
  p: Prices,
): { count: number; gb: number; perMonth: number; movedPerMonth: number; movedTransitions: number } => {
  const stay = { ...w, transitionMinimumBytes: transitionThresholdBytes(w) };
  const move = partsMoving(stay, m);
  const count = w.jobsPerMonth * partScale(w, m).partsPerJob * (1 - move.countShare);
  const gb = atRest(w, m).partGb * (1 - move.byteShare);
  const perMonth = gb * p.standardGbMonth;
  const stayed = cohortStorage(stay, m, p, 3).archive;
  const moved = cohortStorage({ ...w, transitionMinimumBytes: 0 }, m, p, 3).archive;
  return {
    count,
    gb,
    perMonth,
    movedPerMonth: moved - (stayed - perMonth),
    movedTransitions: count * p.transitionRequest[w.storageClass],
  };
};

/** $ of one cohort's storage in its month `age` (1 = hot everywhere), each way. */
const cohortStorage = (w: Workload, m: Measured, p: Prices, age: number) => {
  const cls = w.storageClass;
  const objects = w.jobsPerMonth * w.objectsPerJob;
  const hotGb = (w.jobsPerMonth * w.bytesPerJob) / GB;
  const hot = hotGb * p.standardGbMonth;
  if (age === 1) return { hot, lifecycle: hot, archive: hot, lifecycleInClass: 0 };
  const objectBytes = w.objectsPerJob > 0 ? w.bytesPerJob / w.objectsPerJob : 0;
  const ovh = p.classOverheadBytes[cls];
  const billed = Math.max(objectBytes, p.classMinObjectBytes[cls]) + ovh.inClass;
  const lifecycle =
    ((objects * billed) / GB) * p.classGbMonth[cls] + ((objects * ovh.inStandard) / GB) * p.standardGbMonth;
  const { partGb, indexGb } = atRest(w, m);
  const inClass = partsInClass(w, m, p);
  const movingParts = w.jobsPerMonth * partScale(w, m).partsPerJob * partsMoving(w, m).countShare;
  const parts =
    inClass.dollars + ((movingParts * ovh.inStandard) / GB + (partGb - inClass.movedGb)) * p.standardGbMonth;
  const archive = parts + indexGb * p.standardGbMonth;
  return { hot, lifecycle, archive, lifecycleInClass: ((objects * billed) / GB) * p.classGbMonth[cls] };
};

/**
 * $ a month of the cohort's parts in the class (each moving part billed at least the class's minimum
 * object size, plus its per-object overhead in the class) and the part GB that moved. The minimum
 * duration bills this, not the Standard-resident 8 KB.
 */
const partsInClass = (w: Workload, m: Measured, p: Prices): { dollars: number; movedGb: number } => {
  const cls = w.storageClass;
  const { partGb } = atRest(w, m);
  const move = partsMoving(w, m, p.classMinObjectBytes[cls]);
  const movingParts = w.jobsPerMonth * partScale(w, m).partsPerJob * move.countShare;
  const billedGb = partGb * move.billedByteShare + (movingParts * p.classOverheadBytes[cls].inClass) / GB;
  return { dollars: billedGb * p.classGbMonth[cls], movedGb: partGb * move.byteShare };
};

/** Months a restored copy is billed in Standard: the reader's `restoreDays` (default 7). */
const restoredMonths = () => SETTINGS.restoreDays.default / DAYS_PER_MONTH;

/**
 * $ of one lookup of an archived job (month known), each way. A class that needs a restore
 * (Flexible Retrieval, Deep Archive) restores at the workload's tier (`restorePrice`): the request,
 * the GB restored, and the restored copy in Standard for the reader's `restoreDays`.
 */
export const lookupCost = (w: Workload, m: Measured, p: Prices) => {
  const cls = w.storageClass;
  const r = restorePrice(w, p);
  const restoreOf = (gb: number) =>
    r === undefined
      ? gb * p.classRetrievalGb[cls]
      : r.request + gb * (r.gb + p.standardGbMonth * restoredMonths());
  const hot = p.putRequest + w.objectsPerJob * p.getRequest; // one LIST, a GET per object
  const objectGb = (w.objectsPerJob > 0 ? w.bytesPerJob / w.objectsPerJob : 0) / GB;
  const lifecycle = p.putRequest + w.objectsPerJob * (p.classGetRequest[cls] + restoreOf(objectGb));
  // The hot check lists the job's hot prefix; the index is read in Standard; the part's blocks in the
  // part's class (a part that did not move is read in Standard too). A class that needs a restore
  // restores the whole part.
  const move = partsMoving(w, m);
  const scale = partScale(w, m).sizeFactor;
  const hotCheck = (m.lookup.otherRequests ?? 0) * p.putRequest;
  const index = m.lookup.indexRequests * p.getRequest;
  const inStandard = m.lookup.partRequests * p.getRequest;
  const readGb = ((r !== undefined ? m.averagePartBytes : m.lookup.partBytes) * scale) / GB;
  const inClass = m.lookup.partRequests * p.classGetRequest[cls] + restoreOf(readGb);
  const archive = hotCheck + index + move.byteShare * inClass + (1 - move.byteShare) * inStandard;
  return { hot, lifecycle, archive };
};

/**
 * The physical minimum of one lookup of an archived job: in an instant class one GET of the job's
 * bytes (at the floor's 0.75× the hot bytes) and their retrieval; in a restore class one restore
 * request at the tier, the retrieval of one object holding only the job, and its GET.
 */
export const lookupFloor = (w: Workload, p: Prices): number => {
  const cls = w.storageClass;
  const jobGb = (w.bytesPerJob * FLOOR_AT_REST_RATIO) / GB;
  const r = restorePrice(w, p);
  return (
    p.classGetRequest[cls] + (r === undefined ? jobGb * p.classRetrievalGb[cls] : r.request + jobGb * r.gb)
  );
};

export const costModel = (w: Workload, m: Measured, p: Prices): CostResult => {
  validateWorkload(w);
  restorePrice(w, p); // a tier the class does not offer is refused before anything is priced
  const once = archiveOneTime(w, m, p);
  const onceTotal = Object.values(once).reduce((s, x) => s + x, 0);
  const cls = w.storageClass;
  const objects = w.jobsPerMonth * w.objectsPerJob;
  const lifecycleOnce = objects * p.transitionRequest[cls];
  // Deleting before the class's minimum duration bills the rest, once, at deletion.
  const keptInClassDays = (w.retentionMonths - 1) * DAYS_PER_MONTH;
  const shortfallMonths = Math.max(0, p.classMinDays[cls] - keptInClassDays) / DAYS_PER_MONTH;
  // Lookups spread evenly over the cohorts kept.
  const l = lookupCost(w, m, p);
  const perCohortLookups = w.lookupsPerMonth / w.retentionMonths;
  // Access-log records that are not the archiver's: hot objects expiring (hot), the small objects'
  // transitions and expirations (lifecycle).
  const hotObjects = w.jobsPerMonth * w.objectsPerJob;

  const cohort: MonthCost[] = [];
  for (let age = 1; age <= w.retentionMonths; age++) {
    const c = cohortStorage(w, m, p, age);
    let { hot, lifecycle, archive } = c;
    if (age === 2) {
      lifecycle += lifecycleOnce + accessLogDollars(0, hotObjects, w, p);
      archive += onceTotal;
    }
    if (age === w.retentionMonths) {
      hot += accessLogDollars(0, hotObjects, w, p);
      lifecycle += accessLogDollars(0, hotObjects, w, p);
    }
    if (age === w.retentionMonths && shortfallMonths > 0) {
      // What the class bills (its minimum object size and overhead included; not the 8 KB in Standard).
      lifecycle += cohortStorage(w, m, p, 2).lifecycleInClass * shortfallMonths;
      // Only the parts that moved owe the class's minimum.
      archive += partsInClass(w, m, p).dollars * shortfallMonths;
    }
    if (age > 1) {
      hot += perCohortLookups * l.hot;
      lifecycle += perCohortLookups * l.lifecycle;
      archive += perCohortLookups * l.archive;
    }
    cohort.push({ month: age, hot, lifecycle, archive });
  }
  const sum = (k: 'hot' | 'lifecycle' | 'archive') => cohort.reduce((s, c) => s + c[k], 0);
  const cohortTotal = { hot: sum('hot'), lifecycle: sum('lifecycle'), archive: sum('archive') };
  const floor = floorCohort(w, p);
  const floorTotal = floor.cohort.reduce((a, b) => a + b, 0);
  const archiveWithoutFixed = cohortTotal.archive - (once.fixed ?? 0);
  const lookupCount = perCohortLookups * (w.retentionMonths - 1);
  const lookupFloorEach = lookupFloor(w, p);
  const lookups = {
    count: lookupCount,
    perLookup: l.archive,
    floorPerLookup: lookupFloorEach,
    archive: lookupCount * l.archive,
    floor: lookupCount * lookupFloorEach,
    ratioToFloor: lookupFloorEach > 0 ? l.archive / lookupFloorEach : 0,
  };
  const archivalWithoutFixed = archiveWithoutFixed - lookups.archive;
  const payback = (other: 'hot' | 'lifecycle'): number | null => {
    let a = 0;
    let o = 0;
    for (const c of cohort) {
      a += c.archive;
      o += c[other];
      if (c.month >= 2 && a <= o + 1e-12) return c.month;
    }
    return null;
  };

  // The whole bill from an empty bucket: cohorts accumulate to the horizon, then steady.
  const months: MonthCost[] = [];
  const horizon = w.retentionMonths * 2;
  for (let t = 1; t <= horizon; t++) {
    let hot = 0;
    let lifecycle = 0;
    let archive = 0;
    for (let age = 1; age <= Math.min(t, w.retentionMonths); age++) {
      const c = cohort[age - 1] as MonthCost;
      hot += c.hot;
      lifecycle += c.lifecycle;
      archive += c.archive;
    }
    months.push({ month: t, hot, lifecycle, archive });
  }
  const cumulative: MonthCost[] = [];
  let acc = { hot: 0, lifecycle: 0, archive: 0 };
  for (const c of months) {
    acc = { hot: acc.hot + c.hot, lifecycle: acc.lifecycle + c.lifecycle, archive: acc.archive + c.archive };
    cumulative.push({ month: c.month, ...acc });
  }
  return {
    workload: w,
    months,
    cumulative,
    cohort,
    cohortTotal,
    breakEvenVsHot: payback('hot'),
    breakEvenVsLifecycle: payback('lifecycle'),
    archiveOneTime: once,
    fixedPerMonth: fixedPerMonth(w, m, p),
    partsMoving: { ...partsMoving(w, m), thresholdBytes: transitionThresholdBytes(w) },
    floor: { cohort: floor.cohort, total: floorTotal, gets: floor.gets },
    archiveWithoutFixed,
    ratioToFloor: floorTotal > 0 ? archiveWithoutFixed / floorTotal : 0,
    archivalWithoutFixed,
    ratioArchivalToFloor: floorTotal > 0 ? archivalWithoutFixed / floorTotal : 0,
    lookups,
    ...(m.terms ? { scaled: scaledOneTime(w, m, m.terms, p) } : {}),
  };
};

export const DEPLOYMENT_VOLUMES = [1e4, 1e5, 1e6, 1e7] as const;

/** The whole deployment's monthly bill once every cohort is kept, at a volume, each way. */
export interface DeploymentBill {
  readonly jobsPerMonth: number;
  readonly hot: number;
  readonly archive: number;
  /** Of `archive`: the fixed part (alarms, metrics, idle runs). */
  readonly fixed: number;
  /** Every kept cohort at its floor (no fixed cost). */
  readonly floor: number;
}

export const deploymentBills = (w: Workload, m: Measured, p: Prices): DeploymentBill[] =>
  DEPLOYMENT_VOLUMES.map((jobsPerMonth) => {
    const r = costModel({ ...w, jobsPerMonth }, m, p);
    const steady = r.months[w.retentionMonths - 1] as MonthCost;
    const fixed = Object.values(r.fixedPerMonth).reduce((a, b) => a + b, 0);
    // In the steady month the cohort archived that month carries the one-time cost (its fixed part
    // included) and every other kept cohort its storage: that is the month's bill.
    return {
      jobsPerMonth,
      hot: steady.hot,
      archive: steady.archive,
      fixed,
      floor: r.floor.total,
    };
  });

export const PAYS_RETENTIONS = [12, 24, 36, 60, 84] as const;

/**
 * The smallest mean hot-object size at which archiving one cohort costs no more than keeping it hot
 * for `retentionMonths` in `cls` (the workload's other figures kept); null when it never pays up to
 * 1 GB per object. Bytes at rest and request counts per object are the measured ones; part sizes
 * scale with the object size.
 */
export const smallestPayingObjectBytes = (
  w: Workload,
  m: Measured,
  p: Prices,
  cls: StorageClass,
  retentionMonths: number,
): number | null => {
  const objectsPerJob = w.objectsPerJob > 0 ? w.objectsPerJob : 1;
  const pays = (objectBytes: number) => {
    const r = costModel(
      { ...w, storageClass: cls, retentionMonths, bytesPerJob: objectBytes * objectsPerJob, objectsPerJob },
      m,
      p,
    );
    return r.cohortTotal.archive <= r.cohortTotal.hot;
  };
  let hi = GB;
  if (!pays(hi)) return null;
  let lo = 16;
  if (pays(lo)) return lo;
  // Bisect in log space to 1 %.
  while (hi / lo > 1.01) {
    const mid = Math.sqrt(lo * hi);
    if (pays(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
};

export interface PaysRow {
  readonly retentionMonths: number;
  readonly smallestObjectBytes: Readonly<Record<StorageClass, number | null>>;
}

/**
 * The restore tier a class is priced at in the where-it-pays table: the workload's where the class
 * offers it, else the reader's default (Deep Archive has no Expedited; Glacier IR needs none).
 */
export const tierFor = (w: Workload, cls: StorageClass, p: Prices): RestoreTier | undefined => {
  const tiers = p.restore[cls];
  if (tiers === undefined || w.restoreTier === undefined) return w.restoreTier;
  return tiers[w.restoreTier] !== undefined ? w.restoreTier : CHOICES.restoreTier.default;
};

export const wherePays = (w: Workload, m: Measured, p: Prices): PaysRow[] =>
  PAYS_RETENTIONS.map((retentionMonths) => ({
    retentionMonths,
    smallestObjectBytes: Object.fromEntries(
      STORAGE_CLASSES.map((cls) => {
        const tier = tierFor(w, cls, p);
        const wc = { ...w, ...(tier !== undefined ? { restoreTier: tier } : {}) };
        return [cls, smallestPayingObjectBytes(wc, m, p, cls, retentionMonths)];
      }),
    ) as Record<StorageClass, number | null>,
  }));
