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
  /**
   * `JDA_PLAN_PAGE_GROUPS`, default 100, at most PLAN_PAGE_GROUPS_MAX: groups per plan page (one Map
   * run). Every group's item and result travel in the state (256 KB) — see PLAN_PAGE_GROUPS_MAX.
   */
  readonly planPageGroups: number;
  /** `JDA_PLAN_PAGE_JOBS`, default 20000: jobs read from the GSI per plan page. */
  readonly planPageJobs: number;
}

/**
 * Groups per plan page. Without a ResultWriter (the local runner cannot emulate one) the Map's results
 * sit in the state next to `$.groups`, and a state is capped at 256 KB. A group costs up to ~1.5 KB
 * there (its item with the planned-jobs key, plus its result: counts only, or a failure whose Cause a
 * runtime error can make ~1 KB), so at 100 the worst page — every id at its longest, every group
 * failed — is ~160 KB (test/infra/state-size.test.ts keeps it under 200 KB); 200 would not fit.
 * Pages cost events instead: a page is ~18 history events (Plan, Map run, Tally, Choice) plus
 * retries, so 100,000 groups are 1,000 pages ≈ 18,000 of the 25,000 events a STANDARD execution may
 * have (the groups run in child executions with their own histories).
 */
export const PLAN_PAGE_GROUPS_DEFAULT = 100;
export const PLAN_PAGE_GROUPS_MAX = 100;

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
    planPageJobs: int(env, 'JDA_PLAN_PAGE_JOBS', 20000, 1, 1_000_000),
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
} as const;
