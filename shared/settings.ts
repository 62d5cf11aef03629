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
 * Shop-months per batch, at most. A batch's input and output carry an entry per group (keys,
 * summaries, request counts by type: ~1.5 KB at the longest ids), and a state is capped at 256 KB;
 * test/infra/state-size.test.ts keeps the worst case at this size under 200 KB.
 */
export const BATCH_GROUPS_MAX = 50;

export const SETTINGS = {
  olderThanDays: {
    env: 'JDA_OLDER_THAN_DAYS',
    default: 30,
    min: 0,
    max: 3650,
    integer: false,
    summary: 'archive jobs completed more than this many days before the run',
  },
  graceHours: {
    env: 'JDA_GRACE_HOURS',
    default: 1,
    min: 0,
    max: 24 * 365,
    integer: false,
    summary: "hours between a part's commit and the deletion of the hot objects it holds",
  },
  jobTtlDays: {
    env: 'JDA_JOB_TTL_DAYS',
    default: 90,
    min: 1,
    max: 3650,
    integer: false,
    summary: 'days a terminal job row lives (its `ttl` attribute)',
  },
  readConcurrency: {
    env: 'JDA_READ_CONCURRENCY',
    default: 16,
    min: 1,
    max: 256,
    integer: true,
    summary: 'parallel GETs per job or group',
  },
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
   * Plan pages: the page's plan (batches of shop-months) and its planned jobs are files in S3, read
   * by the Distributed Map's ItemReader and the batch steps, so a page is bounded by Plan's own time
   * and memory, not by the 256 KB state. A page costs ~10 history events of the 25,000 a STANDARD
   * execution may have.
   */
  planPageGroups: {
    env: 'JDA_PLAN_PAGE_GROUPS',
    default: 10_000,
    min: 1,
    max: 100_000,
    integer: true,
    summary: 'shop-months per plan page (one Distributed Map run over its plan file)',
  },
  planPageJobs: {
    env: 'JDA_PLAN_PAGE_JOBS',
    default: 100_000,
    min: 1,
    max: 1_000_000,
    integer: true,
    summary: 'jobs read from the GSI per plan page',
  },
  batchGroups: {
    env: 'JDA_BATCH_GROUPS',
    default: BATCH_GROUPS_MAX,
    min: 1,
    max: BATCH_GROUPS_MAX,
    integer: true,
    summary: 'shop-months one batch (one invocation per step) may hold',
  },
  batchJobs: {
    env: 'JDA_BATCH_JOBS',
    default: 2000,
    min: 1,
    max: 1_000_000,
    integer: true,
    summary: 'jobs one batch may hold (a larger shop-month is a batch alone)',
  },
  /**
   * Shop-months whose hot objects total less than this share one part and one index write per batch
   * and month (docs/archive-format.md, "Shared parts"). 128 KB: parts below it never leave Standard
   * (the lifecycle rule's ObjectSizeGreaterThan), so alone they would cost more than they save.
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
   * A flush object's decoded JSON takes ~20× its gzip size and a batch reads a few groups at once,
   * so the default is the function's memory / 40 (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`; 1024 MB outside
   * Lambda, the figure below).
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
   * 0 keeps everything forever. Otherwise lifecycle rules expire archive parts and hot objects this
   * many months (retentionDays) after they were written, month indexes a month later (never before
   * their parts), and the cost model prices the same horizon.
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
