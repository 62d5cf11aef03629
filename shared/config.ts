import { ConfigError } from './errors';

/**
 * The only module that reads `process.env`. Values are parsed once, on first use, by typed getters;
 * handlers and the CLI read settings here and pass them on as plain arguments.
 */
type Env = Record<string, string | undefined>;

let cached: Config | undefined;

export interface Config {
  /** `ECOM_JOB_DETAILS_BUCKET`; undefined means "not configured": writers skip the S3 leg (seed contract). */
  readonly detailsBucket: string | undefined;
  /** `ECOM_JOBS_TABLE`. */
  readonly jobsTable: string | undefined;
  /** `AWS_REGION`, default us-east-1. */
  readonly region: string;
  /** `AWS_ENDPOINT_URL_S3` — set by the local stack; implies path-style addressing. */
  readonly s3Endpoint: string | undefined;
  /** `AWS_ENDPOINT_URL_DYNAMODB` — set by the local stack. */
  readonly dynamoEndpoint: string | undefined;
  /** `JDA_OLDER_THAN_DAYS`, default 30. */
  readonly olderThanDays: number;
  /** `JDA_GRACE_HOURS`, default 1; 0 allowed. */
  readonly graceHours: number;
  /** `JDA_JOB_TTL_DAYS`, default 90: how long a terminal job row lives (the `ttl` attribute). */
  readonly jobTtlDays: number;
  /** `JDA_READ_CONCURRENCY`, default 16: parallel GETs per job / group. */
  readonly readConcurrency: number;
  /** `JDA_RESTORE_TIER`, default Standard: tier used when a reader must restore a Glacier part. */
  readonly restoreTier: RestoreTier;
  /** `JDA_RESTORE_DAYS`, default 7: how long a restored copy stays readable. */
  readonly restoreDays: number;
  /** `JDA_PLAN_PAGE_GROUPS`, default 10,000: shop-months per plan page (one Map run over its plan file). */
  readonly planPageGroups: number;
  /** `JDA_PLAN_PAGE_JOBS`, default 100,000: jobs read from the GSI per plan page. */
  readonly planPageJobs: number;
  /** `JDA_BATCH_GROUPS`, default and at most 50 (BATCH_GROUPS_MAX): shop-months one batch (one child execution, one invocation per step) may hold. */
  readonly batchGroups: number;
  /** `JDA_BATCH_JOBS`, default 2,000: jobs one batch may hold (a larger shop-month is a batch alone). */
  readonly batchJobs: number;
  /**
   * `JDA_WHOLE_MONTHS`, default true: archive a month only once all of it is older than
   * `olderThanDays` (the cutoff is rounded down to a month start), so a month is archived in one run,
   * as one part per shop, at most `olderThanDays` + 1 day after it ends (daily schedule).
   */
  readonly wholeMonths: boolean;
  /**
   * `JDA_MAX_SOURCE_MB`: the largest hot object (stored, gzipped) a job may have to be archived; a
   * larger one quarantines its job with its size in the reason, before it is read. Default: the
   * function's memory (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, 1024 outside Lambda) / 40 — a flush
   * object's decoded JSON takes ~20× its gzip size, and a batch reads a few groups at once.
   */
  readonly maxSourceMb: number;
}

/**
 * Plan pages: the page's plan (batches of shop-months) and its planned jobs are files in S3, read by
 * the Distributed Map's ItemReader and the batch steps, so a page is bounded by Plan's own time and
 * memory, not by the 256 KB state. A page costs ~10 history events of the 25,000 a STANDARD execution
 * may have.
 */
export const PLAN_PAGE_GROUPS_DEFAULT = 10_000;
/**
 * Shop-months per batch, at most. A batch's input and output carry an entry per group (keys,
 * summaries, request counts by type: ~1.5 KB at the longest ids), and a state is capped at 256 KB;
 * test/infra/state-size.test.ts keeps the worst case at this size under 200 KB.
 */
export const BATCH_GROUPS_MAX = 50;
export const BATCH_JOBS_DEFAULT = 2000;
export const PLAN_PAGE_GROUPS_MAX = 100_000;

export const RESTORE_TIERS = ['Expedited', 'Standard', 'Bulk'] as const;
export type RestoreTier = (typeof RESTORE_TIERS)[number];

const str = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

const num = (env: Env, name: string, dflt: number, min: number, max: number): number => {
  const raw = str(env, name);
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(name, `expected a number in [${min}, ${max}], got ${JSON.stringify(raw)}`);
  }
  return n;
};

const int = (env: Env, name: string, dflt: number, min: number, max: number): number => {
  const n = num(env, name, dflt, min, max);
  if (!Number.isInteger(n)) throw new ConfigError(name, `expected a whole number, got ${n}`);
  return n;
};

const bool = (env: Env, name: string, dflt: boolean): boolean => {
  const raw = str(env, name);
  if (raw === undefined) return dflt;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `expected true or false, got ${JSON.stringify(raw)}`);
};

export const parseConfig = (env: Env): Config => {
  const tier = str(env, 'JDA_RESTORE_TIER') ?? 'Standard';
  if (!(RESTORE_TIERS as readonly string[]).includes(tier)) {
    throw new ConfigError('JDA_RESTORE_TIER', `expected one of ${RESTORE_TIERS.join(', ')}, got ${tier}`);
  }
  return {
    detailsBucket: str(env, 'ECOM_JOB_DETAILS_BUCKET'),
    jobsTable: str(env, 'ECOM_JOBS_TABLE'),
    region: str(env, 'AWS_REGION') ?? str(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1',
    s3Endpoint: str(env, 'AWS_ENDPOINT_URL_S3') ?? str(env, 'AWS_ENDPOINT_URL'),
    dynamoEndpoint: str(env, 'AWS_ENDPOINT_URL_DYNAMODB') ?? str(env, 'AWS_ENDPOINT_URL'),
    olderThanDays: num(env, 'JDA_OLDER_THAN_DAYS', 30, 0, 3650),
    graceHours: num(env, 'JDA_GRACE_HOURS', 1, 0, 24 * 365),
    jobTtlDays: num(env, 'JDA_JOB_TTL_DAYS', 90, 1, 3650),
    readConcurrency: int(env, 'JDA_READ_CONCURRENCY', 16, 1, 256),
    restoreTier: tier as RestoreTier,
    restoreDays: int(env, 'JDA_RESTORE_DAYS', 7, 1, 365),
    planPageGroups: int(env, 'JDA_PLAN_PAGE_GROUPS', PLAN_PAGE_GROUPS_DEFAULT, 1, PLAN_PAGE_GROUPS_MAX),
    planPageJobs: int(env, 'JDA_PLAN_PAGE_JOBS', 100_000, 1, 1_000_000),
    batchGroups: int(env, 'JDA_BATCH_GROUPS', BATCH_GROUPS_MAX, 1, BATCH_GROUPS_MAX),
    batchJobs: int(env, 'JDA_BATCH_JOBS', BATCH_JOBS_DEFAULT, 1, 1_000_000),
    wholeMonths: bool(env, 'JDA_WHOLE_MONTHS', true),
    maxSourceMb: num(
      env,
      'JDA_MAX_SOURCE_MB',
      num(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE', 1024, 128, 10240) / 40,
      0.001,
      10240,
    ),
  };
};

/** Settings of this process, parsed on first use. */
export const config = (): Config => {
  cached ??= parseConfig(process.env);
  return cached;
};

/** Forget the parsed settings (the local stack and tests change the environment once, then call this). */
export const resetConfig = (): void => {
  cached = undefined;
};

/** Settings that must be present where they are used. */
export const requireSetting = <K extends keyof Config>(cfg: Config, key: K, variable: string) => {
  const v = cfg[key];
  if (v === undefined) throw new ConfigError(variable, 'is not set');
  return v as NonNullable<Config[K]>;
};

/** Names of the variables the deployed functions receive (one binding helper in infra uses these). */
export const ENV = {
  bucket: 'ECOM_JOB_DETAILS_BUCKET',
  table: 'ECOM_JOBS_TABLE',
  olderThanDays: 'JDA_OLDER_THAN_DAYS',
  graceHours: 'JDA_GRACE_HOURS',
  jobTtlDays: 'JDA_JOB_TTL_DAYS',
  readConcurrency: 'JDA_READ_CONCURRENCY',
  restoreTier: 'JDA_RESTORE_TIER',
  planPageGroups: 'JDA_PLAN_PAGE_GROUPS',
  planPageJobs: 'JDA_PLAN_PAGE_JOBS',
  batchGroups: 'JDA_BATCH_GROUPS',
  batchJobs: 'JDA_BATCH_JOBS',
  wholeMonths: 'JDA_WHOLE_MONTHS',
  maxSourceMb: 'JDA_MAX_SOURCE_MB',
} as const;
