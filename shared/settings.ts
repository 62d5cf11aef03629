import { InvalidInputError, TtlTooShortError } from './errors';

/**
 * Every tunable of the archiver and writer, described once: its environment variable, default,
 * bounds and meaning. shared/config.ts (the environment), the construct's props, the CLI's flags and
 * a run's input all read and check them here, so a bound cannot differ between the four.
 */
export interface NumberSetting {
  /** The environment variable config.ts reads (and the construct sets on the functions). */
  readonly env: string;
  readonly default: number;
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
  /** What it means, in a phrase (CLI help, docs). */
  readonly summary: string;
}

export interface SwitchSetting {
  readonly env: string;
  readonly default: boolean;
  readonly summary: string;
}

export interface ChoiceSetting {
  readonly env: string;
  readonly values: readonly string[];
  readonly default: string;
  readonly summary: string;
}

/**
 * Shop-months per batch, at most. A batch's input carries an entry per group (~370 B at the longest
 * ids) and its output a result per group (its counts, ~530 B at the longest ids and largest counts,
 * or a failure with a bounded cause; the groups' requests are summed once in the batch's overhead),
 * and a state is capped at 256 KB: test/infra/state-size.test.ts keeps the worst case at this size
 * under 200 KB. The bound is the state's, not the work's (`batchJobs` bounds that): each batch is a
 * child execution (2 state transitions) and an invocation, so small shop-months are packed as many to
 * a batch as the state allows.
 */
export const BATCH_GROUPS_MAX = 300;

/**
 * The numeric settings. Each entry's doc comment is also the doc of the construct prop, run input
 * field and option derived from it (mapped types keep it), so it says what the value means to a user
 * and its `@default` (a test holds it to `default`).
 */
export const SETTINGS = {
  /**
   * Terminal jobs completed more than this many days before a run are archived.
   * @default 30
   */
  olderThanDays: {
    env: 'JDA_OLDER_THAN_DAYS',
    default: 30,
    min: 0,
    max: 3650,
    integer: false,
    summary: 'archive jobs completed more than this many days before the run',
  },
  /**
   * Hours between a part's commit and the deletion of the hot objects it holds (readers see both
   * meanwhile). 0, the default: the run that commits a part deletes its hot objects, walking each
   * hot prefix and planning each job once (readers need no overlap: they read hot first, and an
   * object gone by then is in the index they read next). More than 0: a later run deletes them
   * (the next scheduled one, past the grace), listing and planning them again.
   * @default 0
   */
  graceHours: {
    env: 'JDA_GRACE_HOURS',
    default: 0,
    min: 0,
    max: 24 * 365,
    integer: false,
    summary: "hours between a part's commit and the deletion of the hot objects it holds",
  },
  /**
   * Lifetime in days of a terminal job row (the `ttl` the indexer writes). Must exceed
   * `olderThanDays + 31 (with wholeMonths: a job of the 1st waits for its whole month) + graceHours/24 + 2`:
   * a row must outlive its archival or the plan never sees it (TtlTooShortError).
   * @default 90
   */
  jobTtlDays: {
    env: 'JDA_JOB_TTL_DAYS',
    default: 90,
    min: 1,
    max: 3650,
    integer: false,
    summary: 'days a terminal job row lives (its `ttl` attribute)',
  },
  /**
   * Parallel GETs of hot objects per job (the reader) or per shop-month (ArchiveBatch). 32 keeps
   * ArchiveBatch's share of a vCPU busy at 512 MB: a hot object takes ~3 ms of its CPU there, and a
   * GET ~50 ms in flight, so fewer would leave the function billed while it waits.
   * @default 32
   */
  readConcurrency: {
    env: 'JDA_READ_CONCURRENCY',
    default: 32,
    min: 1,
    max: 256,
    integer: true,
    summary: 'parallel GETs per job or group',
  },
  /**
   * Days a Glacier copy of a part the reader restores stays readable.
   * @default 7
   */
  restoreDays: {
    env: 'JDA_RESTORE_DAYS',
    default: 7,
    min: 1,
    max: 365,
    integer: true,
    // S3 accepts restores of up to 30 years; a reader has no business asking for more than one.
    summary: 'days a restored Glacier copy of a part stays readable',
  },
  /**
   * Shop-months per plan page (one Map run over the page's plan file in S3). The page's plan and
   * planned jobs are files, so a page is bounded by Plan's own time and memory, not by the 256 KB
   * state; a page costs ~10 history events of the 25,000 a STANDARD execution may have.
   * @default 10000
   */
  planPageGroups: {
    env: 'JDA_PLAN_PAGE_GROUPS',
    default: 10_000,
    min: 1,
    max: 100_000,
    integer: true,
    summary: 'shop-months per plan page (one Distributed Map run over its plan file)',
  },
  /**
   * Jobs Plan reads from the status GSI per plan page.
   * @default 100000
   */
  planPageJobs: {
    env: 'JDA_PLAN_PAGE_JOBS',
    default: 100_000,
    min: 1,
    max: 1_000_000,
    integer: true,
    summary: 'jobs read from the GSI per plan page',
  },
  /**
   * Shop-months per batch (one ArchiveBatch invocation); at most 300, the state-size bound.
   * @default 300
   */
  batchGroups: {
    env: 'JDA_BATCH_GROUPS',
    default: BATCH_GROUPS_MAX,
    min: 1,
    max: BATCH_GROUPS_MAX,
    integer: true,
    summary: 'shop-months one batch (one invocation per step) may hold',
  },
  /**
   * Jobs per batch; a shop-month with more jobs is a batch of its own. A batch also holds at most
   * 1 GiB of hot objects as Plan listed them (BATCH_HOT_BYTES_MAX, plan-files.ts): a batch of several
   * shop-months never outgrows the largest one the benchmarks measure in one invocation. Each batch is
   * a child execution (2 state transitions) and an invocation, so this keeps enough batches for the
   * Map's concurrency (100,000 jobs: 20) and no more.
   * @default 5000
   */
  batchJobs: {
    env: 'JDA_BATCH_JOBS',
    default: 5000,
    min: 1,
    max: 1_000_000,
    integer: true,
    summary: 'jobs one batch may hold (a larger shop-month is a batch alone)',
  },
  /**
   * Shop-months whose hot objects total less than this (KB) share one part and one index write per
   * batch and month with the other small shop-months of their month (the storage layout page,
   * "Shared parts"); 0 never packs. Parts no larger than the construct's `transitionMinimumSize`
   * (the lifecycle rule's ObjectSizeGreaterThan) never leave Standard, so alone they would cost more
   * than they save.
   * @default 128
   */
  packBelowKb: {
    env: 'JDA_PACK_BELOW_KB',
    default: 128,
    min: 0,
    max: 1024 * 1024,
    integer: false,
    summary:
      'shop-months with fewer hot bytes than this (KB) share parts with other small shop-months of their month (0: never)',
  },
  /**
   * The largest hot object (stored, gzipped, MB) a job may have to be archived; a larger one
   * quarantines its job, with its size in the reason, before it is read. A flush object's decoded
   * JSON takes ~20× its gzip size and a batch reads a few groups at once, hence memory / 40
   * (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`; 1024 MB outside Lambda, the table's figure).
   * @default the ArchiveBatch function's memory / 40
   */
  maxSourceMb: {
    env: 'JDA_MAX_SOURCE_MB',
    default: 1024 / 40,
    min: 0.001,
    max: 10240,
    integer: false,
    summary:
      "largest hot object (stored, gzipped) a job may have to be archived; a larger one quarantines the job (default: the function's memory / 40)",
  },
  /**
   * Months archive parts, and hot objects of jobs never archived, are kept (from when each was
   * written); month indexes expire a month after their parts. 0 keeps everything forever. Must outlast
   * `jobTtlDays`. Readers report a part past the horizon as expired, not damaged (docs/retention.md);
   * the cost model prices the same horizon.
   * @default 0
   */
  retentionMonths: {
    env: 'JDA_RETENTION_MONTHS',
    default: 0,
    min: 0,
    max: 1200,
    integer: true,
    summary:
      'months archive parts and never-archived hot objects are kept (0: forever); indexes a month longer',
  },
  /**
   * GDPR answers a request within a month; Shopify asks apps to act on `shop/redact` and
   * `customers/redact` within 30 days. Requests older than this and not complete are overdue: the run
   * report, `jobarchive audit` and the construct's alarm name them (docs/erasure.md).
   * @default 30
   */
  erasureDeadlineDays: {
    env: 'JDA_ERASURE_DEADLINE_DAYS',
    default: 30,
    min: 1,
    max: 365,
    integer: false,
    summary:
      'days an erasure request (forget a shop, redact a document) may stay incomplete before it is overdue',
  },
} as const satisfies Record<string, NumberSetting>;

export const SWITCHES = {
  /**
   * Archive a month only once all of it is older than `olderThanDays`: one run (and one part per
   * shop) per month, at most `olderThanDays` + 1 day after the month ends with the daily schedule.
   * `false` archives each job as soon as it is old enough (a part per run per shop-month).
   * @default true
   */
  wholeMonths: {
    env: 'JDA_WHOLE_MONTHS',
    default: true,
    summary:
      'archive a month only once all of it is older than olderThanDays (the cutoff is rounded down to a month start)',
  },
} as const satisfies Record<string, SwitchSetting>;

export const RESTORE_TIERS = ['Expedited', 'Standard', 'Bulk'] as const;
export type RestoreTier = (typeof RESTORE_TIERS)[number];

export const CHOICES = {
  /**
   * The retrieval tier the reader asks for when it must restore a Glacier part.
   * @default 'Standard'
   */
  restoreTier: {
    env: 'JDA_RESTORE_TIER',
    values: RESTORE_TIERS,
    default: 'Standard',
    summary: 'retrieval tier a reader asks for when it must restore a Glacier part',
  },
} as const satisfies Record<string, ChoiceSetting>;

export type SettingName = keyof typeof SETTINGS;
export type SwitchName = keyof typeof SWITCHES;
export type ChoiceName = keyof typeof CHOICES;
export type AnySettingName = SettingName | SwitchName | ChoiceName;

/** Every setting with its type: numbers, switches, and each choice as the union of its values. */
export type Settings = { readonly [K in SettingName]: number } & {
  readonly [K in SwitchName]: boolean;
} & { readonly [K in ChoiceName]: (typeof CHOICES)[K]['values'][number] };

/**
 * The tunables the archiver's functions read: the construct takes each as a prop and sets it on
 * them (infra/construct/env-binding.ts); `jobarchive run` takes them from its environment.
 */
export const ARCHIVER_SETTINGS = [
  'olderThanDays',
  'graceHours',
  'jobTtlDays',
  'readConcurrency',
  'planPageGroups',
  'planPageJobs',
  'batchGroups',
  'batchJobs',
  'packBelowKb',
  'maxSourceMb',
  'wholeMonths',
  'erasureDeadlineDays',
  // Redact restores a Glacier part before rewriting it, as a reader would (docs/erasure.md).
  'restoreTier',
  'restoreDays',
] as const satisfies readonly AnySettingName[];
export type ArchiverSettingName = (typeof ARCHIVER_SETTINGS)[number];

/** Those a run's input (and `jobarchive run`'s options) may set for one run, over the deployed ones. */
export const RUN_SETTINGS = [
  'olderThanDays',
  'graceHours',
  'wholeMonths',
  'maxSourceMb',
] as const satisfies readonly ArchiverSettingName[];
export type RunSettingName = (typeof RUN_SETTINGS)[number];

type Described = typeof SETTINGS & typeof SWITCHES & typeof CHOICES;

/**
 * Optional fields for the named settings, typed from the table. A homomorphic mapped type over the
 * table's entries, so each field carries its entry's doc comment (and `@default`) into the props,
 * run input and generated declarations that use it.
 */
export type SettingFields<N extends AnySettingName> = {
  readonly [K in keyof Pick<Described, N>]?: Settings[K];
};

/** Every setting's description, by name. */
export const ALL_SETTINGS: Readonly<Record<AnySettingName, NumberSetting | SwitchSetting | ChoiceSetting>> = {
  ...SETTINGS,
  ...SWITCHES,
  ...CHOICES,
};

const range = (s: NumberSetting): string =>
  `${s.integer ? 'a whole number' : 'a number'} in [${s.min}, ${s.max}]`;

/** Why `value` is not a valid `name`, or undefined when it is. */
export const settingProblem = (
  name: SettingName,
  value: unknown,
  shown: string = JSON.stringify(value),
): string | undefined => {
  const s: NumberSetting = SETTINGS[name];
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!s.integer || Number.isInteger(value)) &&
    value >= s.min &&
    value <= s.max;
  return ok ? undefined : `expected ${range(s)}, got ${shown}`;
};

/** `value` checked as setting `name`; a bad one is an InvalidInputError naming `field`. */
export const checkSetting = (name: SettingName, value: unknown, field: string = name): number => {
  const problem = settingProblem(name, value);
  if (problem !== undefined) throw new InvalidInputError(field, problem);
  return value as number;
};

/** The CLI's and docs' phrase for a setting's default: `$JDA_GRACE_HOURS or 1`. */
export const defaultPhrase = (name: AnySettingName): string => {
  const s = ALL_SETTINGS[name];
  return `$${s.env} or ${String(s.default)}`;
};

/** Days a row must outlive its archival, so a late or retried run still finds it. */
export const TTL_MARGIN_DAYS = 2;
/** The longest month: with `wholeMonths` a job completed on a month's first day waits for all of it. */
export const WHOLE_MONTH_DAYS = 31;

export interface TtlInputs {
  readonly olderThanDays: number;
  readonly graceHours: number;
  readonly jobTtlDays: number;
  readonly wholeMonths: boolean;
}

/**
 * The days a terminal row must live: a job is archived once its month (whole months) is older than
 * olderThanDays, its hot objects deleted graceHours after the commit, plus a margin for a missed run.
 */
export const ttlNeeded = (
  s: Omit<TtlInputs, 'jobTtlDays'>,
): { days: number; terms: Record<string, number> } => {
  const terms: Record<string, number> = {
    olderThanDays: s.olderThanDays,
    ...(s.wholeMonths ? { 'a whole month': WHOLE_MONTH_DAYS } : {}),
    'graceHours/24': s.graceHours / 24,
    margin: TTL_MARGIN_DAYS,
  };
  const days = Object.values(terms).reduce((a, b) => a + b, 0);
  return { days, terms };
};

/** Throws TtlTooShortError when rows would expire before their (whole) month is archived. */
export const checkTtlOutlivesArchival = (s: TtlInputs): void => {
  const { days, terms } = ttlNeeded(s);
  if (!(days < s.jobTtlDays)) throw new TtlTooShortError(s.jobTtlDays, days, terms);
};

/** Lifecycle days of `months` of retention: at least that many calendar months. */
export const retentionDays = (months: number): number => Math.ceil((months * 365.25) / 12);

/**
 * Days after which a month index expires: a month after its parts. Every commit rewrites the index,
 * so it is never older than any part it names, and with the later horizon it never goes first.
 */
export const INDEX_RETENTION_EXTRA_DAYS = 31;

/**
 * Days the details bucket's S3 server access logs are kept by default: 0, none. The construct
 * configures no logging unless given `accessLogsRetention` (a log bucket of its own keeping them
 * that many days) or `serverAccessLogsBucket`, and `jobarchive cost --access-log-days` defaults to
 * this too (one value, so the model prices what the construct deploys). Off like S3's own default:
 * the archiver's two records a hot object (its GET and its delete) are about as many bytes as the
 * object, so at 90 days they alone would add a quarter to the archival's floor; a team that needs
 * request logs opts in and prices it with `--access-log-days N` (docs/cost.md, "The access log").
 */
export const ACCESS_LOGS_RETENTION_DAYS = 0;
/** Longest `accessLogsRetention` (and `--access-log-days`): ten years. */
export const ACCESS_LOGS_RETENTION_MAX_DAYS = 3650;

/**
 * Run scratch (`job-details-runs/`: planned jobs, batches, the Map's results, page results,
 * findings, reports) lives 3 days. Only its own run reads it as input — Map children and their
 * retries, Tally, Report — and a run ends within `executionTimeout` (at most RUN_TIMEOUT_MAX_DAYS,
 * props-validation.ts). No later run reads it: the watermark and its retry entries carry what
 * the next run needs. What stays for people: a failed run's `report.json` and findings, which S3
 * keeps 3 to 4 days (expiry is rounded up to the next midnight UTC), so a report of a Friday run is
 * there through Monday; its capped lists are also in the execution's output (Step Functions keeps it
 * 90 days), and a failure that persists is reported again by every later run. Erasure gains: a run
 * that died before its Report keeps a forgotten shop in its scratch 3 days, not 7. It costs little
 * beside the parts (docs/cost.md; 7 days held twice the scratch in Standard, 30 days a month's).
 */
export const RUNS_EXPIRE_DAYS = 3;

/**
 * The longest execution timeout a construct allows (`executionTimeout`, props-validation.ts): a run
 * ends before its first page's scratch expires. Also what forget takes for a run's timeout when its
 * event names none: a run without a report older than this has ended.
 */
export const RUN_TIMEOUT_MAX_DAYS = RUNS_EXPIRE_DAYS - 1;
