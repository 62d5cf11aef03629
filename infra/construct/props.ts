import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
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

export interface JobDetailsArchiveProps {
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
   * Terminal jobs completed more than this many days before a run are archived. Meaning, bounds and
   * default of this and the other numeric settings below: shared/settings.ts (a test holds each
   * `@default` here to it).
   * @default 30
   */
  readonly olderThanDays?: number;
  /**
   * Hours between a part's commit and the deletion of the hot objects it holds (readers see both
   * meanwhile). 0 allowed.
   * @default 1
   */
  readonly graceHours?: number;
  /**
   * Lifetime in days of a terminal job row (the `ttl` the indexer writes). Must exceed
   * `olderThanDays + 31 (with wholeMonths: a job of the 1st waits for its whole month) + graceHours/24 + 2`:
   * a row must outlive its archival or the plan never sees it (TtlTooShortError).
   * @default 90
   */
  readonly jobTtlDays?: number;
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
   * Months archive parts, and hot objects of jobs never archived, are kept (from when each was
   * written); month indexes expire a month after their parts. 0 keeps everything forever. Must outlast
   * `jobTtlDays`. Readers report a part past the horizon as expired, not damaged (docs/retention.md).
   * @default 0
   */
  readonly retentionMonths?: number;
  /**
   * Days an erasure request (forget a shop, redact a document: docs/erasure.md) may stay incomplete;
   * older open requests are listed in every run's report and `alarms.erasureRequestsOverdue` fires.
   * @default 30
   */
  readonly erasureDeadlineDays?: number;
  /**
   * Memory (MB) of every step, or per step.
   * @default 1024 for archive-batch, forget and redact, 512 for the others
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
   * Longest a run may take before Step Functions stops it; at most 29 days (a run reads its own
   * `job-details-runs/` scratch, which the lifecycle rule expires after 30).
   * @default Duration.hours(12)
   */
  readonly executionTimeout?: Duration;
  /**
   * Shop-months per plan page (one Map run over the page's plan file in S3).
   * @default 10000
   */
  readonly planPageGroups?: number;
  /**
   * Shop-months per batch (one invocation of each batch step); at most 50, the state-size bound.
   * @default 50
   */
  readonly batchGroups?: number;
  /**
   * Jobs per batch; a shop-month with more jobs is a batch of its own.
   * @default 2000
   */
  readonly batchJobs?: number;
  /**
   * Shop-months with fewer hot bytes than this (KB) share parts (docs/archive-format.md, "Shared
   * parts"); 0 never packs.
   * @default 128
   */
  readonly packBelowKb?: number;
  /**
   * Archive a month only once all of it is older than `olderThanDays`: one run (and one part per
   * shop) per month, at most `olderThanDays` + 1 day after the month ends with the daily schedule.
   * `false` archives each job as soon as it is old enough (a part per run per shop-month).
   * @default true
   */
  readonly wholeMonths?: boolean;
  /**
   * The largest hot object (stored, gzipped, MB) a job may have to be archived; a larger one
   * quarantines its job, with its size in the reason, before it is read.
   * @default the ArchiveBatch function's memory / 40
   */
  readonly maxSourceMb?: number;
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
