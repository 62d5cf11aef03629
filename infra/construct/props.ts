import type { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';

/**
 * The construct's props (its published surface): apart from the construct so that its helpers
 * (props-validation, details-bucket) read them without importing the construct.
 *
 * jsii-compatible (the Python package is generated from them, infra/build/jsii.ts): enums rather than
 * string unions, named interfaces rather than mapped, `Partial<Record<…>>` or `A | B` types.
 */

/** Storage class archive parts (`job-details-cold/`) move to. */
export enum ArchiveStorageClass {
  /** Glacier Instant Retrieval: millisecond reads, no restore. */
  GLACIER_IR = 'GLACIER_IR',
  /** Glacier Flexible Retrieval: a read needs a restore (minutes to hours). */
  GLACIER = 'GLACIER',
  /** Glacier Deep Archive: a read needs a restore (hours). */
  DEEP_ARCHIVE = 'DEEP_ARCHIVE',
}

/** The retrieval tier a restore of a Glacier part asks for (S3's RestoreObject tiers). */
export enum RestoreTier {
  EXPEDITED = 'Expedited',
  STANDARD = 'Standard',
  BULK = 'Bulk',
}

/**
 * Lambda memory (MB) of single steps; a step left out gets `lambdaMemoryMb`, else its default.
 * Steps: Plan, ArchiveBatch, Tally, Report, Forget, Redact.
 */
export interface StepMemoryProps {
  /** @default - lambdaMemoryMb, else 512 */
  readonly plan?: number;
  /** @default - lambdaMemoryMb, else 512 */
  readonly archiveBatch?: number;
  /** @default - lambdaMemoryMb, else 512 */
  readonly tally?: number;
  /** @default - lambdaMemoryMb, else 512 */
  readonly report?: number;
  /** @default - lambdaMemoryMb, else 1024 */
  readonly forget?: number;
  /** @default - lambdaMemoryMb, else 1024 */
  readonly redact?: number;
}

/** Lambda timeout of single steps (1 s … 15 min); a step left out gets `lambdaTimeout`, else its default. */
export interface StepTimeoutProps {
  /** @default - lambdaTimeout, else 5 minutes */
  readonly plan?: Duration;
  /** @default - lambdaTimeout, else 15 minutes */
  readonly archiveBatch?: Duration;
  /** @default - lambdaTimeout, else 5 minutes */
  readonly tally?: Duration;
  /** @default - lambdaTimeout, else 5 minutes */
  readonly report?: Duration;
  /** @default - lambdaTimeout, else 15 minutes */
  readonly forget?: Duration;
  /** @default - lambdaTimeout, else 15 minutes */
  readonly redact?: Duration;
}

/**
 * The archiver's tunables, one prop per entry of the settings table (shared/settings.ts: meaning,
 * bounds, `@default`, environment variable), which the functions also read. Written out rather than
 * mapped from the table so jsii (Python) sees them; a compile-time check in props-validation.ts keeps
 * the names and types equal to the table's.
 */
export interface ArchiveSettingsProps {
  /**
   * Terminal jobs completed more than this many days before a run are archived.
   * @default 30
   */
  readonly olderThanDays?: number;
  /**
   * Hours between a part's commit and the deletion of the hot objects it holds (readers see both
   * meanwhile). 0: the run that commits a part deletes its hot objects, walking each hot prefix and
   * planning each job once; more: a later run deletes them, listing and planning them again.
   * @default 0
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
   * Archive a month only once all of it is older than `olderThanDays`: one run (and one part per
   * shop) per month, at most `olderThanDays` + 1 day after the month ends with the daily schedule.
   * `false` archives each job as soon as it is old enough (a part per run per shop-month).
   * @default true
   */
  readonly wholeMonths?: boolean;
  /**
   * Parallel GETs of hot objects per job (the reader) or per shop-month (ArchiveBatch).
   * @default 32
   */
  readonly readConcurrency?: number;
  /**
   * Shop-months per plan page (one Map run over the page's plan file in S3). The page's plan and
   * planned jobs are files, so a page is bounded by Plan's own time and memory, not by the 256 KB
   * state; a page costs ~10 history events of the 25,000 a STANDARD execution may have.
   * @default 10000
   */
  readonly planPageGroups?: number;
  /**
   * Jobs Plan reads from the status GSI per plan page.
   * @default 100000
   */
  readonly planPageJobs?: number;
  /**
   * Shop-months per batch (one ArchiveBatch invocation); at most 300, the state-size bound.
   * @default 300
   */
  readonly batchGroups?: number;
  /**
   * Jobs per batch; a shop-month with more jobs is a batch of its own.
   * @default 5000
   */
  readonly batchJobs?: number;
  /**
   * Shop-months whose hot objects total less than this (KB) share one part and one index write per
   * batch and month with the other small shop-months of their month (the storage layout page,
   * "Shared parts"); 0 never packs. Parts no larger than `transitionMinimumSize` (the lifecycle rule's
   * ObjectSizeGreaterThan) never leave Standard, so alone they would cost more than they save.
   * @default 128
   */
  readonly packBelowKb?: number;
  /**
   * The largest hot object (stored, gzipped, MB) a job may have to be archived; a larger one
   * quarantines its job, with its size in the reason, before it is read. A flush object's decoded
   * JSON takes ~20× its gzip size and a batch reads a few groups at once, hence memory / 40
   * (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`; 1024 MB outside Lambda, the table's figure).
   * @default the ArchiveBatch function's memory / 40
   */
  readonly maxSourceMb?: number;
  /**
   * GDPR answers a request within a month; Shopify asks apps to act on `shop/redact` and
   * `customers/redact` within 30 days. Requests older than this and not complete are overdue: the run
   * report, `jobarchive audit` and the construct's alarm name them (docs/erasure.md).
   * @default 30
   */
  readonly erasureDeadlineDays?: number;
  /**
   * The retrieval tier the reader asks for when it must restore a Glacier part.
   * @default RestoreTier.STANDARD
   */
  readonly restoreTier?: RestoreTier;
  /**
   * Days a Glacier copy of a part the reader restores stays readable.
   * @default 7
   */
  readonly restoreDays?: number;
  /**
   * Months archive parts, and hot objects of jobs never archived, are kept (from when each was
   * written); month indexes expire a month after their parts. 0 keeps everything forever. Must outlast
   * `jobTtlDays`. Readers report a part past the horizon as expired, not damaged (docs/retention.md);
   * the cost model prices the same horizon.
   * @default 0
   */
  readonly retentionMonths?: number;
}

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
export interface JobDetailsArchiveProps extends ArchiveSettingsProps {
  /**
   * An existing jobs table (it must have the schema of `shared/jobs/schema.ts`, GSIs included). For an
   * imported table use `TableV2.fromTableAttributes({ …, grantIndexPermissions: true })`.
   * @default - a new TableV2 built from `shared/jobs/schema.ts` (on-demand, TTL, PITR, deletion protection)
   */
  readonly table?: ITable;
  /**
   * An existing details bucket. Lifecycle rules are added when it is a `Bucket` of this app; for an
   * imported bucket add `detailsLifecycleRules(...)` yourself (a synth warning says so).
   * @default - a new bucket (SSE-S3, no public access, TLS only, lifecycle rules; access logs only if asked)
   */
  readonly bucket?: IBucket;
  /**
   * Opt in to S3 server access logs for the details bucket, kept in a log bucket of the construct's
   * own this long (whole days, 1 … 3650; they stay in Standard until they expire). Off by default,
   * as in S3 itself, because of what they cost: S3 writes a record (~800 B, an estimate) for every
   * request and for each key a multi-object delete removes, and the archiver's own records dominate
   * — two a hot object, its GET and its delete: 1.6 KB in Standard (more than the design's ~1.2 KB
   * objects themselves), $0.034 per million archived hot objects per month of retention at list
   * price (us-east-1): at 90 days $0.10 per million archived hot objects, about a quarter on top of
   * the archival's floor, at 365 days $0.42 (`jobarchive cost --access-log-days N` prices yours;
   * docs/cost.md). Only for the details bucket this construct creates: with `bucket` your
   * bucket keeps its own logging, and with `serverAccessLogsBucket` that bucket's lifecycle decides
   * (giving this prop with either is an error).
   * @default - no access logs: no log bucket, no logging configuration (unless `serverAccessLogsBucket`)
   */
  readonly accessLogsRetention?: Duration;
  /**
   * Opt in to the details bucket's server access logs, delivered to this existing bucket (e.g. your
   * central log bucket) instead of a log bucket of the construct's own: none is created, and the logs stay as
   * long as that bucket's lifecycle keeps them (billed to its owner, which S3 requires to be this
   * account, in this region; its default encryption must be SSE-S3: one with a KMS key is refused).
   * A `Bucket` of this app gets a bucket-policy statement letting S3 log delivery (for the details
   * bucket and this account only) write under `serverAccessLogsPrefix` — never an ACL, whatever its
   * app's `@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy` flag; when it is in another stack, the
   * details bucket is named `jda-{account}-{region}-{16 hex of its construct path}` so that statement
   * can name it without the stacks depending on each other; an imported one cannot be changed
   * here: add that statement to its policy yourself (a synth warning names it, docs/deployment.md).
   * Only for the details bucket this construct creates (with `bucket`, your bucket keeps its own
   * logging; giving both is an error).
   * @default - a log bucket of the construct's own (SSE-S3, TLS only) with `accessLogsRetention`; without it, no access logs
   */
  readonly serverAccessLogsBucket?: IBucket;
  /**
   * Key prefix of the details bucket's access logs in their log bucket (the construct's own or
   * `serverAccessLogsBucket`): ending in '/' (or '' for the whole bucket), since log delivery is
   * granted the prefix followed by anything. Only for the details bucket this construct creates, with
   * `accessLogsRetention` or `serverAccessLogsBucket` (alone it is an error: nothing is logged).
   * @default 'details-bucket/'
   */
  readonly serverAccessLogsPrefix?: string;
  /**
   * When runs start.
   * @default - daily at 03:00 UTC, enabled
   */
  readonly schedule?: ArchiveScheduleProps;
  /**
   * Storage class archive parts (`job-details-cold/`) move to.
   * @default ArchiveStorageClass.GLACIER_IR — millisecond reads, so forensic lookups need no restore
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
   * Archive parts larger than this move to `archiveStorageClass` (the lifecycle rule's
   * `ObjectSizeGreaterThan`); smaller ones stay in STANDARD. A moved part saves the difference in
   * storage price for its months in the class but pays a transition request, and the class bills
   * per-object overhead (Flexible Retrieval / Deep Archive: 32 KB in the class + 8 KB in STANDARD) or
   * a minimum size (Glacier IR: 128 KB), so small parts cost less left in STANDARD. The default is
   * where a move pays for itself (`transitionBreakEvenBytes`, list prices): over the part's months in
   * the class — the `retentionDays(retentionMonths)` its expiration rule gives it from its writing,
   * less `transitionAfterDays`; kept forever (0) counted as 10 years — with the class's minimum duration billed when the part expires sooner. With the
   * default `transitionAfterDays`: Glacier IR kept 12 / 24 / 60 months ~97 / 60 / 37 KB; Flexible
   * Retrieval 24 months ~82 KB; Deep Archive 60 months ~49 KB; any class kept forever ~30 KB.
   * `jobarchive lifecycle` prints the rule for given props, `jobarchive cost` prices it.
   * Whole bytes, 0 … 5 TiB (S3's limit; at 5 TiB nothing moves): e.g. `Size.kibibytes(128)` (S3's
   * own default for rules without a size filter).
   * @default - the break-even for archiveStorageClass, retentionMonths and transitionAfterDays
   */
  readonly transitionMinimumSize?: Size;
  /**
   * Memory (MB) of every step (128 … 10240); `stepMemoryMb` sets single steps.
   * @default 1024 for forget and redact, 512 for the others
   */
  readonly lambdaMemoryMb?: number;
  /**
   * Memory (MB) of single steps, over `lambdaMemoryMb`: e.g. `{ archiveBatch: 3008 }`.
   * @default - every step gets lambdaMemoryMb, else its default
   */
  readonly stepMemoryMb?: StepMemoryProps;
  /**
   * Timeout of every step (1 s … 15 min); `stepTimeout` sets single steps.
   * @default 15 minutes for archive-batch, forget and redact, 5 minutes for the others
   */
  readonly lambdaTimeout?: Duration;
  /**
   * Timeout of single steps, over `lambdaTimeout`: e.g. `{ plan: Duration.minutes(2) }`.
   * @default - every step gets lambdaTimeout, else its default
   */
  readonly stepTimeout?: StepTimeoutProps;
  /**
   * Groups archived in parallel (Distributed Map MaxConcurrency).
   * @default 10
   */
  readonly maxConcurrency?: number;
  /**
   * Longest a run may take before Step Functions stops it; at most 2 days (a run reads its own
   * `job-details-runs/` scratch, which the lifecycle rule expires after 3).
   * @default Duration.hours(12)
   */
  readonly executionTimeout?: Duration;
  /**
   * Retention of the functions' and the state machine's log groups.
   * @default RetentionDays.THREE_MONTHS
   */
  readonly logRetention?: RetentionDays;
  /**
   * Where failures reach a person. An EventBridge rule publishes every failed, timed-out or aborted
   * run of the state machine here (its "Step Functions Execution Status Change" event, free: no
   * alarm), and every CloudWatch alarm of the construct notifies it (the schedule's dead letters; with
   * `runMetrics` also `JobsQuarantined` and `ErasureRequestsOverdue`). A topic defined in your app gets
   * a policy statement letting events.amazonaws.com publish; an imported one (`Topic.fromTopicArn`) is
   * published to through a role of the rule instead (a topic in another account must allow that role
   * in its own policy). Subscribe a person to it: until someone does,
   * failures are only in the Step Functions console.
   * @default - a topic this construct creates (`archive.alarmTopic`; `ArchiveStack` outputs its ARN)
   */
  readonly alarmTopic?: ITopic;
  /**
   * One more action of the construct's CloudWatch alarms (e.g. an SSM incident), beside the
   * `alarmTopic` notification. Failed, timed-out and aborted runs are EventBridge events, not alarms:
   * they reach `alarmTopic` only, never this action. If this would be an `SnsAction(topic)`, pass
   * `alarmTopic: topic` instead (given alone, synth warns that failed runs go to the construct's own
   * topic).
   * @default - the alarms notify `alarmTopic` only
   */
  readonly alarmAction?: IAlarmAction;
  /**
   * Publish the run's figures as CloudWatch custom metrics (namespace `JobDetailsArchive`: 8 metrics,
   * $0.30 each, $2.40 a month at list price) and alarm on two of them (`JobsQuarantined`,
   * `ErasureRequestsOverdue`: $0.20 a month). Off, the deployment's fixed cost is one alarm on a
   * metric SQS publishes for free ($0.10 a month): the schedule's dead letters. Failed, timed-out
   * and aborted executions (a run that sees an overdue erasure request ends FAILED with that cause)
   * reach `alarmTopic` through a free EventBridge rule either way. The figures are in every run's
   * execution output, report and logs either way (docs/operations.md "Alarms").
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
   * Given (`{}` for the defaults), it is deployed. Parts in GLACIER / DEEP_ARCHIVE are skipped by
   * Athena until restored.
   * @default - none (nothing of it in the template)
   */
  readonly sql?: ArchiveSqlProps;
}
