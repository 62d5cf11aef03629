import { ConfigError } from './errors';
import { SETTINGS, type SettingName, SWITCHES, settingProblem } from './settings';

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
  /** Settings from here to `wholeMonths`: env name, default, bounds and meaning in shared/settings.ts. */
  readonly olderThanDays: number;
  readonly graceHours: number;
  readonly jobTtlDays: number;
  readonly retentionMonths: number;
  readonly readConcurrency: number;
  /** `JDA_RESTORE_TIER`, default Standard: tier used when a reader must restore a Glacier part. */
  readonly restoreTier: RestoreTier;
  readonly restoreDays: number;
  readonly planPageGroups: number;
  readonly planPageJobs: number;
  readonly batchGroups: number;
  readonly batchJobs: number;
  readonly wholeMonths: boolean;
  /**
   * `JDA_MAX_SOURCE_MB`: the largest hot object (stored, gzipped) a job may have to be archived; a
   * larger one quarantines its job with its size in the reason, before it is read. Default: the
   * function's memory (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, 1024 outside Lambda) / 40 — a flush
   * object's decoded JSON takes ~20× its gzip size, and a batch reads a few groups at once.
   */
  readonly maxSourceMb: number;
}

export const RESTORE_TIERS = ['Expedited', 'Standard', 'Bulk'] as const;
export type RestoreTier = (typeof RESTORE_TIERS)[number];

const str = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/** A setting of shared/settings.ts from its variable, or its default. */
const setting = (env: Env, name: SettingName): number => {
  const s = SETTINGS[name];
  const raw = str(env, s.env);
  if (raw === undefined) return s.default;
  const problem = settingProblem(name, Number(raw), JSON.stringify(raw));
  if (problem !== undefined) throw new ConfigError(s.env, problem);
  return Number(raw);
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

const _int = (env: Env, name: string, dflt: number, min: number, max: number): number => {
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
    olderThanDays: setting(env, 'olderThanDays'),
    graceHours: setting(env, 'graceHours'),
    jobTtlDays: setting(env, 'jobTtlDays'),
    retentionMonths: setting(env, 'retentionMonths'),
    readConcurrency: setting(env, 'readConcurrency'),
    restoreTier: tier as RestoreTier,
    restoreDays: setting(env, 'restoreDays'),
    planPageGroups: setting(env, 'planPageGroups'),
    planPageJobs: setting(env, 'planPageJobs'),
    batchGroups: setting(env, 'batchGroups'),
    batchJobs: setting(env, 'batchJobs'),
    wholeMonths: bool(env, SWITCHES.wholeMonths.env, SWITCHES.wholeMonths.default),
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
  olderThanDays: SETTINGS.olderThanDays.env,
  graceHours: SETTINGS.graceHours.env,
  jobTtlDays: SETTINGS.jobTtlDays.env,
  retentionMonths: SETTINGS.retentionMonths.env,
  readConcurrency: SETTINGS.readConcurrency.env,
  restoreTier: 'JDA_RESTORE_TIER',
  planPageGroups: SETTINGS.planPageGroups.env,
  planPageJobs: SETTINGS.planPageJobs.env,
  batchGroups: SETTINGS.batchGroups.env,
  batchJobs: SETTINGS.batchJobs.env,
  wholeMonths: SWITCHES.wholeMonths.env,
  maxSourceMb: 'JDA_MAX_SOURCE_MB',
} as const;
