import { Duration, Size, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { InvalidInputError } from '../../shared/errors';
import {
  ACCESS_LOGS_RETENTION_MAX_DAYS,
  ARCHIVER_SETTINGS,
  type ArchiverSettingName,
  CHOICES,
  checkTtlOutlivesArchival,
  RUN_TIMEOUT_MAX_DAYS,
  retentionDays,
  SETTINGS,
  type SettingName,
  type Settings,
  SWITCHES,
  settingProblem,
} from '../../shared/settings';
import {
  DEFAULT_TRANSITION_AFTER_DAYS,
  MAX_TRANSITION_MINIMUM_BYTES,
  transitionBreakEvenBytes,
} from '../cli/transition-threshold';
import type { AccessLogTarget } from './details-bucket';
import {
  type ArchiveSettingsProps,
  ArchiveStorageClass,
  type JobDetailsArchiveProps,
  type RestoreTier,
  type StepMemoryProps,
} from './props';
import { ARCHIVER_STEPS, type ArchiverStep, defaultMemoryMb, defaultTimeout } from './step-functions';
import { camelStep } from './step-names';

/** Storage classes a part may move to; all three accept a transition on day 0 (no 30-day STANDARD minimum). */
export const ARCHIVE_STORAGE_CLASSES: readonly ArchiveStorageClass[] = Object.values(ArchiveStorageClass);

/**
 * The settings props are written out (jsii sees no mapped types): their names must be the table's,
 * and the RestoreTier enum's values its restore tiers — a compile error here otherwise.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _settingsPropsAreTheTable: Same<keyof ArchiveSettingsProps, ArchiverSettingName | 'retentionMonths'> =
  true;
const _restoreTiersAreTheTable: Same<`${RestoreTier}`, Settings['restoreTier']> = true;
const _settingsPropTypes: Same<
  {
    [K in keyof ArchiveSettingsProps]-?: K extends 'restoreTier'
      ? string
      : NonNullable<ArchiveSettingsProps[K]>;
  },
  { [K in keyof ArchiveSettingsProps]-?: K extends 'restoreTier' ? string : Settings[K] }
> = true;

export const DEFAULT_SCHEDULE = 'cron(0 3 * * ? *)';

/**
 * The archiver's settings as resolved: each from its prop or the table's default, checked against the
 * table's bounds. `maxSourceMb` stays absent unless given: each function derives it from its memory.
 */
export type ResolvedSettings = Pick<
  Settings,
  Exclude<ArchiverSettingName, 'maxSourceMb'> | 'retentionMonths'
> &
  Partial<Pick<Settings, 'maxSourceMb'>>;

/** Every prop with its default filled in, checked. */
export interface ResolvedArchiveProps extends ResolvedSettings {
  readonly archiveStorageClass: ArchiveStorageClass;
  readonly transitionAfterDays: number;
  /** Parts larger than this (bytes) move to the class: the lifecycle rule's ObjectSizeGreaterThan. */
  readonly transitionMinimumBytes: number;
  readonly memoryMb: Readonly<Record<ArchiverStep, number>>;
  readonly timeout: Readonly<Record<ArchiverStep, Duration>>;
  readonly maxConcurrency: number;
  readonly executionTimeout: Duration;
  readonly logRetention: RetentionDays;
  readonly schedule: { readonly expression: string; readonly timeZone: string; readonly enabled: boolean };
  /**
   * null: the construct configures no access logs — with the `bucket` prop (the given bucket keeps
   * its own logging), or by default (neither accessLogsRetention nor serverAccessLogsBucket).
   */
  readonly accessLogs: AccessLogTarget | null;
  /** null: no SQL resources. Names are filled in by the construct when not given. */
  readonly sql: {
    readonly bytesScannedCutoffPerQuery: number;
    readonly resultsExpireDays: number;
    readonly firstMonth: string;
  } | null;
}

/** Athena refuses a smaller per-query cutoff. */
export const MIN_BYTES_SCANNED_CUTOFF = 10_000_000;

const resolveSql = (sql: JobDetailsArchiveProps['sql']): ResolvedArchiveProps['sql'] => {
  if (sql === undefined) return null;
  if (typeof sql !== 'object' || sql === null)
    return fail('sql', `expected an object ({} for the defaults), got ${JSON.stringify(sql)}`);
  const s = sql;
  if (s.databaseName !== undefined && !/^[a-z0-9_]{1,255}$/.test(s.databaseName))
    fail('sql.databaseName', `expected 1-255 of [a-z0-9_], got ${JSON.stringify(s.databaseName)}`);
  if (s.workGroupName !== undefined && !/^[a-zA-Z0-9._-]{1,128}$/.test(s.workGroupName))
    fail('sql.workGroupName', `expected 1-128 of [a-zA-Z0-9._-], got ${JSON.stringify(s.workGroupName)}`);
  const firstMonth = s.firstMonth ?? '2024-01';
  if (typeof firstMonth !== 'string' || !/^\d{4}-(0[1-9]|1[0-2])$/.test(firstMonth))
    fail('sql.firstMonth', `expected yyyy-mm, got ${JSON.stringify(firstMonth)}`);
  return {
    bytesScannedCutoffPerQuery: checkNumber(
      'sql.bytesScannedCutoffPerQuery',
      s.bytesScannedCutoffPerQuery ?? 10 * 1024 ** 3,
      MIN_BYTES_SCANNED_CUTOFF,
      Number.MAX_SAFE_INTEGER,
      true,
    ),
    resultsExpireDays: checkNumber('sql.resultsExpireDays', s.resultsExpireDays ?? 7, 1, 3650, true),
    firstMonth,
  };
};

const fail = (field: string, reason: string): never => {
  throw new InvalidInputError(field, reason);
};

const checkNumber = (field: string, v: number, min: number, max: number, integer: boolean): number => {
  if (Token.isUnresolved(v)) return fail(field, 'must be a concrete number, not a deploy-time token');
  if (typeof v !== 'number' || !Number.isFinite(v)) return fail(field, `expected a number, got ${String(v)}`);
  if (integer && !Number.isInteger(v)) return fail(field, `expected a whole number, got ${v}`);
  if (v < min || v > max) return fail(field, `expected a value in [${min}, ${max}], got ${v}`);
  return v;
};

/** A prop that is one of shared/settings.ts: its default and bounds from there. */
const checkSettingProp = (name: SettingName, v: number | undefined): number => {
  if (v !== undefined && Token.isUnresolved(v))
    return fail(name, 'must be a concrete number, not a deploy-time token');
  const value = v ?? SETTINGS[name].default;
  const problem = settingProblem(name, value);
  return problem === undefined ? value : fail(name, problem);
};

const checkDuration = (field: string, d: Duration, min: Duration, max: Duration): Duration => {
  if (!(d instanceof Duration)) return fail(field, 'expected a Duration');
  if (Token.isUnresolved(d.toSeconds())) return fail(field, 'must be a concrete Duration, not a token');
  const s = d.toSeconds();
  if (s < min.toSeconds() || s > max.toSeconds()) {
    return fail(
      field,
      `expected between ${min.toHumanString()} and ${max.toHumanString()}, got ${d.toHumanString()}`,
    );
  }
  return d;
};

/** A Size as whole bytes, 0 … max. */
const checkSizeBytes = (field: string, size: Size, max: number): number => {
  if (!(size instanceof Size)) return fail(field, 'expected a Size (e.g. Size.kibibytes(64))');
  if (size.isUnresolved()) return fail(field, 'must be a concrete Size, not a deploy-time token');
  const bytes = size.toBytes({ rounding: SizeRoundingBehavior.NONE });
  if (!Number.isInteger(bytes) || bytes < 0 || bytes > max)
    return fail(field, `expected whole bytes from 0 to ${max} (5 TiB), got ${bytes} bytes`);
  return bytes;
};

/** The step-keyed props' keys (`archiveBatch`), as StepMemoryProps / StepTimeoutProps name them. */
const STEP_KEYS = ARCHIVER_STEPS.map(camelStep) as readonly (keyof StepMemoryProps)[];

/**
 * A value per step: the step's own (`byStep`), else the one for every step (`all`), else the step's
 * default. Unknown keys in `byStep` fail with the known ones named.
 */
const perStep = <T>(
  field: string,
  all: T | undefined,
  stepField: string,
  byStep: Partial<Record<keyof StepMemoryProps, T>> | undefined,
  dflt: (step: ArchiverStep) => T,
  check: (field: string, v: T) => T,
): Record<ArchiverStep, T> => {
  if (byStep !== undefined) {
    if (typeof byStep !== 'object' || byStep === null) fail(stepField, 'expected an object keyed by step');
    for (const key of Object.keys(byStep)) {
      if (!(STEP_KEYS as readonly string[]).includes(key)) {
        fail(stepField, `unknown step ${JSON.stringify(key)}; steps are ${STEP_KEYS.join(', ')}`);
      }
    }
  }
  const out = {} as Record<ArchiverStep, T>;
  for (const step of ARCHIVER_STEPS) {
    const own = byStep?.[camelStep(step)];
    if (own !== undefined) out[step] = check(`${stepField}.${camelStep(step)}`, own);
    else out[step] = check(field, all ?? dflt(step));
  }
  return out;
};

const CRON = /^cron\((.+)\)$/;
const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;

/** EventBridge Scheduler recurring expressions only: a one-shot `at()` would archive once and stop. */
export const checkScheduleExpression = (field: string, expression: string): string => {
  if (typeof expression !== 'string') return fail(field, 'expected a string');
  const cron = CRON.exec(expression);
  if (cron) {
    const fields = (cron[1] ?? '').trim().split(/\s+/);
    if (fields.length !== 6) {
      return fail(
        field,
        `cron() needs 6 fields (minutes hours day-of-month month day-of-week year), got ${fields.length}`,
      );
    }
    if ((fields[2] === '?') === (fields[4] === '?')) {
      return fail(field, "cron() needs '?' in exactly one of day-of-month and day-of-week");
    }
    return expression;
  }
  const rate = RATE.exec(expression);
  if (rate) {
    const n = Number(rate[1]);
    const unit = rate[2] ?? '';
    if (n < 1) return fail(field, 'rate() value must be at least 1');
    if ((n === 1) !== !unit.endsWith('s'))
      return fail(field, 'rate() unit must be singular for 1 and plural otherwise');
    return expression;
  }
  return fail(field, `expected cron(...) or rate(...), got ${JSON.stringify(expression)}`);
};

export const checkTimeZone = (field: string, tz: string): string => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    fail(field, `unknown IANA time zone ${JSON.stringify(tz)}`);
  }
  return tz;
};

export const DEFAULT_ACCESS_LOGS_PREFIX = 'details-bucket/';

/**
 * The access-log props: they configure the details bucket this construct creates, so none of them
 * goes with `bucket`; `accessLogsRetention` is the construct's own log bucket's, so it does not go
 * with `serverAccessLogsBucket` (whose lifecycle keeps the logs). With neither, the details bucket
 * logs nothing (null; the cost model's default, ACCESS_LOGS_RETENTION_DAYS, is 0 to match), and
 * `serverAccessLogsPrefix` alone is refused.
 */
const resolveAccessLogs = (props: JobDetailsArchiveProps): AccessLogTarget | null => {
  const given = (['accessLogsRetention', 'serverAccessLogsBucket', 'serverAccessLogsPrefix'] as const).filter(
    (k) => props[k] !== undefined,
  );
  if (props.bucket !== undefined) {
    const [first] = given;
    if (first !== undefined)
      fail(
        first,
        'configures the access logs of the details bucket this construct creates; with `bucket` your bucket keeps its own logging (set it where that bucket is defined)',
      );
    return null;
  }
  const prefix = props.serverAccessLogsPrefix ?? DEFAULT_ACCESS_LOGS_PREFIX;
  if (typeof prefix !== 'string') return fail('serverAccessLogsPrefix', 'expected a string');
  if (!Token.isUnresolved(prefix) && (prefix.length > 1024 || prefix.startsWith('/')))
    fail(
      'serverAccessLogsPrefix',
      `expected a key prefix of at most 1024 characters not starting with '/', got ${JSON.stringify(prefix)}`,
    );
  // The log-delivery grant covers `{prefix}*`: without the '/', 'logs' would also cover 'logs-other/'.
  if (!Token.isUnresolved(prefix) && prefix !== '' && !prefix.endsWith('/'))
    fail(
      'serverAccessLogsPrefix',
      `expected a key prefix ending in '/' (or '' for the whole bucket), got ${JSON.stringify(prefix)}: the log-delivery grant covers the prefix followed by anything, so ${JSON.stringify(prefix)} would also cover ${JSON.stringify(`${prefix}-other/`)}`,
    );
  const target = props.serverAccessLogsBucket;
  if (target !== undefined) {
    if (props.accessLogsRetention !== undefined)
      fail(
        'accessLogsRetention',
        'is the retention of the log bucket this construct creates; with serverAccessLogsBucket no log bucket is created and that bucket’s own lifecycle keeps the logs: give one of accessLogsRetention and serverAccessLogsBucket',
      );
    if (typeof target !== 'object' || target === null || typeof target.bucketName !== 'string')
      fail('serverAccessLogsBucket', 'expected an IBucket');
    if (target.encryptionKey !== undefined)
      fail(
        'serverAccessLogsBucket',
        'is encrypted with a KMS key: S3 delivers server access logs only to a bucket whose default encryption is SSE-S3',
      );
    return { prefix, bucket: target };
  }
  const asked = props.accessLogsRetention;
  if (asked === undefined) {
    if (props.serverAccessLogsPrefix !== undefined)
      fail(
        'serverAccessLogsPrefix',
        'places access logs, but the details bucket writes none by default: give accessLogsRetention (a log bucket of the construct’s own) or serverAccessLogsBucket with it',
      );
    return null;
  }
  const retention = checkDuration(
    'accessLogsRetention',
    asked,
    Duration.days(1),
    Duration.days(ACCESS_LOGS_RETENTION_MAX_DAYS),
  );
  const days = retention.toSeconds() / 86_400;
  if (!Number.isInteger(days))
    fail(
      'accessLogsRetention',
      `expected whole days (a lifecycle expiration), got ${retention.toHumanString()}`,
    );
  return { prefix, retentionDays: days };
};

/** The settings props: numbers against the table's bounds, switches as booleans, defaults from the table. */
const resolveSettings = (props: JobDetailsArchiveProps): ResolvedSettings => {
  const out: Record<string, number | boolean | string> = {};
  for (const name of [...ARCHIVER_SETTINGS, 'retentionMonths'] as const) {
    const v = props[name];
    if (name in SWITCHES) {
      const sw = SWITCHES[name as keyof typeof SWITCHES];
      if (v !== undefined && typeof v !== 'boolean') fail(name, 'expected a boolean');
      out[name] = v ?? sw.default;
    } else if (name in CHOICES) {
      const c = CHOICES[name as keyof typeof CHOICES];
      if (v !== undefined && !(c.values as readonly unknown[]).includes(v))
        fail(name, `expected one of ${c.values.join(', ')}, got ${JSON.stringify(v)}`);
      out[name] = (v as string | undefined) ?? c.default;
    } else if (name !== 'maxSourceMb' || v !== undefined) {
      out[name] = checkSettingProp(name as SettingName, v as number | undefined);
    }
  }
  return out as unknown as ResolvedSettings;
};

/** Checks every prop before any resource exists, so a bad value fails with the prop's name. */
export const resolveArchiveProps = (props: JobDetailsArchiveProps): ResolvedArchiveProps => {
  const settings = resolveSettings(props);
  const { jobTtlDays, retentionMonths } = settings;

  const archiveStorageClass = props.archiveStorageClass ?? ArchiveStorageClass.GLACIER_IR;
  if (!ARCHIVE_STORAGE_CLASSES.includes(archiveStorageClass)) {
    fail(
      'archiveStorageClass',
      `expected one of ${ARCHIVE_STORAGE_CLASSES.join(', ')}, got ${String(archiveStorageClass)}`,
    );
  }
  // Glacier IR / Flexible Retrieval / Deep Archive have no minimum days in STANDARD before a transition.
  const transitionAfterDays = checkNumber(
    'transitionAfterDays',
    props.transitionAfterDays ?? DEFAULT_TRANSITION_AFTER_DAYS,
    0,
    3650,
    true,
  );
  const transitionMinimumBytes =
    props.transitionMinimumSize === undefined
      ? transitionBreakEvenBytes({ storageClass: archiveStorageClass, retentionMonths, transitionAfterDays })
      : checkSizeBytes('transitionMinimumSize', props.transitionMinimumSize, MAX_TRANSITION_MINIMUM_BYTES);

  // Lifecycle expiration counts from an object's creation: a hot object must outlive its job's row,
  // or a run plans a job whose data is gone (quarantined, never archived).
  if (retentionMonths > 0 && !(retentionDays(retentionMonths) > jobTtlDays)) {
    fail(
      'retentionMonths',
      `${retentionMonths} months (${retentionDays(retentionMonths)} days) must outlast jobTtlDays (${jobTtlDays}): hot objects would expire while their job can still be archived; use 0 to keep forever`,
    );
  }

  const memoryMb = perStep(
    'lambdaMemoryMb',
    props.lambdaMemoryMb,
    'stepMemoryMb',
    props.stepMemoryMb,
    defaultMemoryMb,
    (f, v) => checkNumber(f, v, 128, 10240, true),
  );
  const timeout = perStep(
    'lambdaTimeout',
    props.lambdaTimeout,
    'stepTimeout',
    props.stepTimeout,
    defaultTimeout,
    (f, v) => checkDuration(f, v, Duration.seconds(1), Duration.minutes(15)),
  );
  const maxConcurrency = checkNumber('maxConcurrency', props.maxConcurrency ?? 10, 1, 10000, true);
  // A run reads its own scratch (planned jobs, page results) until its Report, and the lifecycle rule
  // expires that scratch after RUNS_EXPIRE_DAYS: a run must end before its first page's files go
  // (RUN_TIMEOUT_MAX_DAYS, which forget also takes when its event names no timeout).
  const executionTimeout = checkDuration(
    'executionTimeout',
    props.executionTimeout ?? Duration.hours(12),
    Duration.minutes(1),
    Duration.days(RUN_TIMEOUT_MAX_DAYS),
  );
  checkTtlOutlivesArchival(settings);

  const schedule = {
    expression: checkScheduleExpression(
      'schedule.expression',
      props.schedule?.expression ?? DEFAULT_SCHEDULE,
    ),
    timeZone: checkTimeZone('schedule.timeZone', props.schedule?.timeZone ?? 'UTC'),
    enabled: props.schedule?.enabled ?? true,
  };
  if (typeof schedule.enabled !== 'boolean') fail('schedule.enabled', 'expected a boolean');
  const accessLogs = resolveAccessLogs(props);

  return {
    ...settings,
    archiveStorageClass,
    transitionAfterDays,
    transitionMinimumBytes,
    memoryMb,
    timeout,
    maxConcurrency,
    executionTimeout,
    logRetention: props.logRetention ?? RetentionDays.THREE_MONTHS,
    schedule,
    accessLogs,
    sql: resolveSql(props.sql),
  };
};
