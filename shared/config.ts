import { ConfigError } from './errors';
import {
  ALL_SETTINGS,
  type AnySettingName,
  CHOICES,
  type ChoiceName,
  RESTORE_TIERS,
  type RestoreTier,
  SETTINGS,
  type SettingName,
  type Settings,
  SWITCHES,
  type SwitchName,
  settingProblem,
} from './settings';

/**
 * Settings from an environment. `parseConfig(env)` reads only what it is given: the Lambda wiring
 * parses its container's environment with it (functions/deps.ts); `config()` is this process's, for
 * the CLI's entry (infra/cli/main.ts) and scripts. Both pass settings on as plain arguments.
 */
type Env = Record<string, string | undefined>;

let cached: Config | undefined;

/**
 * This process's settings: where it runs (bucket, table, region, endpoints) and every tunable of
 * shared/settings.ts (env name, default, bounds and meaning there; the type follows from the table).
 */
export interface Config extends Settings {
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
}

export { RESTORE_TIERS, type RestoreTier };

const str = (env: Env, name: string): string | undefined => {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

/** A number of shared/settings.ts from its variable, or `dflt` (its default unless it depends on where it runs). */
const setting = (env: Env, name: SettingName, dflt: number = SETTINGS[name].default): number => {
  const s = SETTINGS[name];
  const raw = str(env, s.env);
  if (raw === undefined) return dflt;
  const problem = settingProblem(name, Number(raw), JSON.stringify(raw));
  if (problem !== undefined) throw new ConfigError(s.env, problem);
  return Number(raw);
};

const switchSetting = (env: Env, name: SwitchName): boolean => {
  const s = SWITCHES[name];
  const raw = str(env, s.env);
  if (raw === undefined) return s.default;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(s.env, `expected true or false, got ${JSON.stringify(raw)}`);
};

const choice = <K extends ChoiceName>(env: Env, name: K): Settings[K] => {
  const s = CHOICES[name];
  const raw = str(env, s.env) ?? s.default;
  if (!(s.values as readonly string[]).includes(raw))
    throw new ConfigError(s.env, `expected one of ${s.values.join(', ')}, got ${raw}`);
  return raw as Settings[K];
};

/** The function's memory in MB (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`; 1024 outside Lambda). */
const functionMemoryMb = (env: Env): number => {
  const raw = str(env, 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE');
  const n = raw === undefined ? 1024 : Number(raw);
  if (!Number.isFinite(n) || n < 128 || n > 10240)
    throw new ConfigError('AWS_LAMBDA_FUNCTION_MEMORY_SIZE', `expected a number in [128, 10240], got ${raw}`);
  return n;
};

/** The defaults that depend on where the process runs. */
const runtimeDefaults = (env: Env): Partial<Record<SettingName, number>> => ({
  maxSourceMb: functionMemoryMb(env) / 40,
});

export const parseConfig = (env: Env): Config => {
  const dflt = runtimeDefaults(env);
  const numbers = Object.fromEntries(
    (Object.keys(SETTINGS) as SettingName[]).map((n) => [n, setting(env, n, dflt[n])]),
  ) as { [K in SettingName]: number };
  const switches = Object.fromEntries(
    (Object.keys(SWITCHES) as SwitchName[]).map((n) => [n, switchSetting(env, n)]),
  ) as { [K in SwitchName]: boolean };
  const choices = Object.fromEntries(
    (Object.keys(CHOICES) as ChoiceName[]).map((n) => [n, choice(env, n)]),
  ) as {
    [K in ChoiceName]: Settings[K];
  };
  return {
    detailsBucket: str(env, 'ECOM_JOB_DETAILS_BUCKET'),
    jobsTable: str(env, 'ECOM_JOBS_TABLE'),
    region: str(env, 'AWS_REGION') ?? str(env, 'AWS_DEFAULT_REGION') ?? 'us-east-1',
    s3Endpoint: str(env, 'AWS_ENDPOINT_URL_S3') ?? str(env, 'AWS_ENDPOINT_URL'),
    dynamoEndpoint: str(env, 'AWS_ENDPOINT_URL_DYNAMODB') ?? str(env, 'AWS_ENDPOINT_URL'),
    ...numbers,
    ...switches,
    ...choices,
  };
};

/** Settings of this process (the CLI's and scripts' entry points), parsed on first use. */
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
  ...(Object.fromEntries(Object.entries(ALL_SETTINGS).map(([n, s]) => [n, s.env])) as {
    readonly [K in AnySettingName]: string;
  }),
} as const;
