import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ArchiverSettingName, SettingFields } from '../../shared/settings';
import type { ArchiverStep } from './step-names';

/**
 * The construct's props (its published surface): apart from the construct so that its helpers
 * (props-validation, details-bucket) read them without importing the construct.
 */

export type ArchiveStorageClass = 'GLACIER_IR' | 'GLACIER' | 'DEEP_ARCHIVE';

export interface ArchiveScheduleProps {
  /**
   * EventBridge Scheduler recurring expression: `cron(min hour day-of-month month day-of-week year)`
   * or `rate(n unit)`.
   * @default 'cron(0 3 * * ? *)' — daily at 03:00
   */
  readonly expression?: string;
  /**
   * IANA time zone the cron expression is evaluated in.
   * @default 'UTC'
   */
  readonly timeZone?: string;
  /**
   * Whether the schedule starts runs (false keeps everything deployed but idle).
   * @default true
   */
  readonly enabled?: boolean;
}

/** SQL over the archive on Athena (see docs/search-and-sql.md). */
export interface ArchiveSqlProps {
  /**
   * Glue database of the tables and views (lower case letters, digits, `_`).
   * @default - `job_details_archive_` + this construct's unique id
   */
  readonly databaseName?: string;
  /**
   * Athena workgroup the queries run in.
   * @default - `job-details-archive-` + this construct's unique id
   */
  readonly workGroupName?: string;
  /**
   * Bytes one query may scan before Athena cancels it (Athena's minimum: 10 MB).
   * @default 10 GiB
   */
  readonly bytesScannedCutoffPerQuery?: number;
  /**
   * Days query results are kept in the results bucket.
   * @default 7
   */
  readonly resultsExpireDays?: number;
  /**
   * First month (`yyyy-mm`) the month projection enumerates.
   * @default '2024-01'
   */
  readonly firstMonth?: string;
}

/**
 * The construct's props. The archiver's tunables (olderThanDays, graceHours, jobTtlDays, wholeMonths,
 * maxSourceMb, batch and page sizes, readConcurrency, erasureDeadlineDays, and the restoreTier and
 * restoreDays Redact restores with) and retentionMonths come from the settings
 * table (shared/settings.ts: meaning, bounds, `@default`), which the functions also read.
 */
export interface JobDetailsArchiveProps extends SettingFields<ArchiverSettingName | 'retentionMonths'> {
  /**
   * An existing jobs table (it must have the schema of `shared/jobs/schema.ts`, GSIs included). For an
   * imported table use `TableV2.fromTableAttributes({ …, grantIndexPermissions: true })`.
   * @default - a new TableV2 built from `shared/jobs/schema.ts` (on-demand, TTL, PITR, deletion protection)
   */
  readonly table?: ITable;
  /**
   * An existing details bucket. Lifecycle rules are added when it is a `Bucket` of this app; for an
   * imported bucket add `detailsLifecycleRules(...)` yourself (a synth warning says so).
   * @default - a new bucket (SSE-S3, no public access, TLS only, access logs, lifecycle rules)
   */
  readonly bucket?: IBucket;
  /**
   * When runs start.
   * @default - daily at 03:00 UTC, enabled
   */
  readonly schedule?: ArchiveScheduleProps;
  /**
   * Storage class archive parts (`job-details-cold/`) move to.
   * @default 'GLACIER_IR' — millisecond reads, so forensic lookups need no restore
   */
  readonly archiveStorageClass?: ArchiveStorageClass;
  /**
   * Days a part stays in STANDARD before its transition. Glacier IR, Glacier Flexible Retrieval and
   * Deep Archive all accept 0 (only the IA classes need 30 days in STANDARD). The default keeps a new
   * part in STANDARD for a day, through its own run's verify/commit and the first readers.
   * @default 1
   */
  readonly transitionAfterDays?: number;
  /**
   * Also transition parts smaller than 128 KB. Off by default: S3 skips those since Sept 2024 because
   * in Glacier classes each object carries ~40 KB of billed overhead (Glacier IR bills at least 128 KB),
   * so a small part is cheaper left in STANDARD.
   * @default false
   */
  readonly transitionSmallObjects?: boolean;
  /**
   * Memory (MB) of every step, or per step (archive-batch peaks near 380 MB).
   * @default 1024 for forget and redact, 512 for the others
   */
  readonly lambdaMemoryMb?: number | Partial<Record<ArchiverStep, number>>;
  /**
   * Timeout of every step, or per step (1 s … 15 min).
   * @default 15 minutes for archive-batch, forget and redact, 5 minutes for the others
   */
  readonly lambdaTimeout?: Duration | Partial<Record<ArchiverStep, Duration>>;
  /**
   * Groups archived in parallel (Distributed Map MaxConcurrency).
   * @default 10
   */
  readonly maxConcurrency?: number;
  /**
   * Longest a run may take before Step Functions stops it; at most 6 days (a run reads its own
   * `job-details-runs/` scratch, which the lifecycle rule expires after 7).
   * @default Duration.hours(12)
   */
  readonly executionTimeout?: Duration;
  /**
   * Retention of the functions' and the state machine's log groups.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
  /**
   * Where alarms notify (e.g. an SnsAction).
   * @default - alarms only change state
   */
  readonly alarmAction?: IAlarmAction;
  /**
   * Publish the run's figures as CloudWatch custom metrics (namespace `JobDetailsArchive`: 8 metrics,
   * $0.30 each, $2.40 a month at list price) and alarm on three more (`JobsQuarantined`,
   * `ErasureRequestsOverdue`, aborted executions: $0.30 a month). Off, the deployment's fixed cost is
   * the three alarms on the services' own free metrics ($0.30 a month): failed and timed-out
   * executions (a run that sees an overdue erasure request ends FAILED with that cause) and the
   * schedule's dead letters. The figures are in every run's execution output, report and logs either
   * way (docs/operations.md "Alarms").
   * @default false
   */
  readonly runMetrics?: boolean;
  /**
   * Removal policy of what this construct creates (table, buckets, log groups). A bucket is only
   * removed when empty.
   * @default - each resource's CDK default (RETAIN for the table and buckets)
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * SQL over the archive: a Glue database with tables over the parts and the flattened views, an
   * Athena workgroup (encrypted results, a per-query scan limit) and the documented named queries.
   * `true` for the defaults. Parts in GLACIER / DEEP_ARCHIVE are skipped by Athena until restored.
   * @default - none (nothing of it in the template)
   */
  readonly sql?: boolean | ArchiveSqlProps;
}
