import { Annotations, type CfnElement, Duration, Names, Resource, Stack, TimeZone, Token } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  type IMetric,
  Metric,
  type MetricOptions,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule } from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import { CfnPolicy, Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Bucket, type IBucket, type LifecycleRule } from 'aws-cdk-lib/aws-s3';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { StepFunctionsStartExecution } from 'aws-cdk-lib/aws-scheduler-targets';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, RUN_METRICS, RUN_METRICS_ENV } from '../../functions/metric-names';
import { InvalidInputError } from '../../shared/errors';
import { JOBS_TABLE } from '../../shared/jobs/schema';
import { ArchiveSql, defaultSqlNames } from './archive-sql';
import { ArchiverStateMachine } from './archiver-state-machine';
import {
  acknowledgeSizeFilterCoercion,
  createDetailsBucket,
  detailsLifecycleRules,
  isVersioned,
  type KeyPrefix,
  NONCURRENT_EXPIRE_DAYS,
  noncurrentVersionRules,
} from './details-bucket';
import { archiverEnvironment } from './env-binding';
import { createJobsTable } from './jobs-table';
import { neededLifecycleRules } from './lifecycle-data';
import { acknowledge, acknowledgeWildcardResource, wildcardResources } from './nag';
import { grantMissingKeysAre404, grantObjects, type ObjectAccess, objectArn } from './object-grants';
import type { ArchiveSqlProps, JobDetailsArchiveProps } from './props';
import { resolveArchiveProps } from './props-validation';
import { ARCHIVER_STEPS, type ArchiverStep, createStepCode, createStepFunction } from './step-functions';
import { camelStep } from './step-names';
import { jobsTableProblem } from './table-check';

/** The archiver's six functions, one per step (keys as in StepMemoryProps). */
export interface ArchiverFunctions {
  readonly plan: LambdaFunction;
  readonly archiveBatch: LambdaFunction;
  readonly tally: LambdaFunction;
  readonly report: LambdaFunction;
  readonly forget: LambdaFunction;
  readonly redact: LambdaFunction;
}

/**
 * The construct's CloudWatch alarms ($0.10 each a month). Failed, timed-out and aborted runs are no
 * alarm: `JobDetailsArchive.failedRuns`, a free EventBridge rule, publishes them to `alarmTopic`.
 */
export interface ArchiveAlarms {
  /** The schedule could not start a run (no execution exists, so no execution event either). */
  readonly deadLetters: Alarm;
  /** With `runMetrics` only: a run quarantined jobs (their data is safe in place, but someone must look). */
  readonly jobsQuarantined?: Alarm;
  /**
   * With `runMetrics` only: erasure requests are past their deadline (`erasureDeadlineDays`). Without
   * it the run that sees one ends FAILED (`ErasureRequestsOverdue`), so `failedRuns` publishes it.
   */
  readonly erasureRequestsOverdue?: Alarm;
}

const pickNames = (s: ArchiveSqlProps) => ({
  ...(s.databaseName !== undefined ? { databaseName: s.databaseName } : {}),
  ...(s.workGroupName !== undefined ? { workGroupName: s.workGroupName } : {}),
});

/**
 * Feature flags that change what the resources below synthesize to. Pinned on this construct's own
 * subtree so the output does not depend on the host app's cdk.json.
 */
const PINNED_FLAGS: Record<string, boolean> = {
  // Access-log delivery by bucket policy (ACLs are disabled on new buckets).
  '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true,
};

/**
 * An imported log bucket's policy cannot be changed from here: S3 delivers nothing until its owner
 * adds the statement this names.
 */
const warnImportedLogBucket = (
  scope: Construct,
  logs: { readonly prefix: string; readonly bucket: IBucket },
): void => {
  const name = Token.isUnresolved(logs.bucket.bucketName) ? 'that bucket' : logs.bucket.bucketName;
  Annotations.of(scope).addWarningV2(
    'job-details-archive:imported-access-logs-bucket',
    `The access-log bucket (serverAccessLogsBucket) is imported, so its policy cannot be changed here: S3 delivers the details bucket's access logs only once that bucket's policy allows Principal {"Service": "logging.s3.amazonaws.com"} s3:PutObject on ${name}/${logs.prefix}* (conditions aws:SourceAccount = this account, aws:SourceArn = the details bucket). It must be in this account and region, with SSE-S3 default encryption (not SSE-KMS); its lifecycle decides how long the logs stay.`,
  );
};

/** Why the details bucket may go unlogged (cdk-nag AwsSolutions-S1): the default, and how to opt in. */
const NO_ACCESS_LOGS_REASON =
  'S3 server access logs are opt-in, as in S3 itself: the archiver writes two records per archived hot object (its GET and its delete, about as many bytes as the object), at 90 days about a quarter on top of the archival floor (jobarchive cost --access-log-days N prices them); give accessLogsRetention or serverAccessLogsBucket to log. CloudTrail records the bucket-level API calls either way';
const X_RAY_REASON = 'X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions';
/** Under `job-details-index/`: the staging docs (`{shop}/{month}/pending/…`) and the indexes themselves. */
const STAGING_KEYS = '*/*/pending/*';
const INDEX_KEYS = '*/*/index.json';
/** A part's document filters, written beside its month index when the part is built. */
const DOC_FILTER_KEYS = '*/*/docs/*';
/** Erasure requests under the erasure prefix (shared/erasure/ledger.ts). */
const REQUEST_KEYS = 'requests/*';
/** Packed shop-months' shared parts and indexes (docs/archive-format.md, "Shared parts"). */
const SHARED_KEYS = '_shared/*';

const PREFIX_REASON =
  'objects under this one key prefix; keys hold job/shop/month ids unknown at deploy time (exact actions, no s3:*)';

/**
 * The cold-tier archiver: a scheduled state machine that bundles terminal jobs' details into indexed
 * parts, plus (unless given) the jobs table and details bucket it works on.
 */
export class JobDetailsArchive extends Construct {
  readonly stateMachine: StateMachine;
  /** The step functions, by step (`functions.archiveBatch`). */
  readonly functions: ArchiverFunctions;
  /** The same, by step name (`archive-batch`), for the code below. */
  private readonly byStep: Readonly<Record<ArchiverStep, LambdaFunction>>;
  readonly schedule: Schedule;
  readonly table: ITable;
  readonly bucket: IBucket;
  readonly deadLetterQueue: Queue;
  readonly alarms: ArchiveAlarms;
  /** Where failures go: the `alarmTopic` prop, or the topic created here. Subscribe a person to it. */
  readonly alarmTopic: ITopic;
  /**
   * The EventBridge rule publishing this state machine's FAILED, TIMED_OUT and ABORTED executions
   * (their "Step Functions Execution Status Change" events) to `alarmTopic`.
   */
  readonly failedRuns: Rule;
  /** SQL over the archive (the `sql` prop); undefined when off. */
  readonly sql?: ArchiveSql;
  /** The Powertools service name the functions log and publish metrics under (the `service` dimension). */
  readonly serviceName: string;
  /**
   * The lifecycle rules the details bucket needs for these props (transition, scratch expiry,
   * retention, noncurrent versions). Applied when the bucket is created here or is a `Bucket` of this
   * app; for a bucket defined elsewhere apply them there (`jobarchive lifecycle --json` prints them as
   * data, and `ArchiveStack` outputs them for an imported bucket).
   */
  readonly bucketLifecycleRules: LifecycleRule[];

  constructor(scope: Construct, id: string, props: JobDetailsArchiveProps = {}) {
    super(scope, id);
    const p = resolveArchiveProps(props); // before any resource exists
    // A table of this app must have the keys and GSIs the archiver reads (one line naming what is
    // missing); an imported one cannot be seen here (docs/deployment.md).
    const tableProblem = props.table ? jobsTableProblem(props.table) : undefined;
    if (tableProblem) throw new InvalidInputError('table', tableProblem);
    for (const [flag, value] of Object.entries(PINNED_FLAGS)) this.node.setContext(flag, value);

    this.table = props.table ?? createJobsTable(this, 'JobsTable', props.removalPolicy);
    const bucketOptions = {
      archiveStorageClass: p.archiveStorageClass,
      transitionAfterDays: p.transitionAfterDays,
      transitionMinimumBytes: p.transitionMinimumBytes,
      retentionMonths: p.retentionMonths,
      removalPolicy: props.removalPolicy,
    };
    this.bucketLifecycleRules = neededLifecycleRules(bucketOptions);
    if (props.bucket) {
      this.bucket = props.bucket;
      if (props.bucket instanceof Bucket) {
        for (const rule of detailsLifecycleRules(bucketOptions)) props.bucket.addLifecycleRule(rule);
        if (isVersioned(props.bucket)) {
          for (const rule of noncurrentVersionRules()) props.bucket.addLifecycleRule(rule);
        }
        acknowledgeSizeFilterCoercion(props.bucket);
      } else {
        Annotations.of(this).addWarningV2(
          'job-details-archive:imported-bucket-lifecycle',
          `The details bucket is imported: add detailsLifecycleRules(...) to it, or archive parts never leave STANDARD${p.retentionMonths > 0 ? ` and nothing expires after retentionMonths (${p.retentionMonths})` : ''}.`,
        );
        Annotations.of(this).addWarningV2(
          'job-details-archive:imported-bucket-versioning',
          `The details bucket is imported, so its versioning is unknown here. IF IT IS VERSIONED, every hot object the archiver deletes stays billed as a noncurrent version forever: add noncurrentVersionRules() (noncurrent versions expire after ${NONCURRENT_EXPIRE_DAYS} days) to its lifecycle.`,
        );
      }
    } else {
      const logs = p.accessLogs; // null: no access logs (the default)
      const { bucket, logsBucket, logPolicyAdded } = createDetailsBucket(this, bucketOptions, logs);
      this.bucket = bucket;
      acknowledgeSizeFilterCoercion(bucket);
      if (logs === null) acknowledge(bucket, 'AwsSolutions-S1', NO_ACCESS_LOGS_REASON);
      if (logsBucket)
        acknowledge(logsBucket, 'AwsSolutions-S1', 'this is the access-log target; logging it would recurse');
      if (logs !== null && 'bucket' in logs && !logPolicyAdded) warnImportedLogBucket(this, logs);
    }

    // Unique per construct, so two archives in one account never share a metric.
    this.serviceName = `job-details-archive-${Names.uniqueId(this)}`;
    const runMetrics = props.runMetrics === true;
    const environment = {
      ...archiverEnvironment({
        ...p,
        serviceName: this.serviceName,
        bucketName: this.bucket.bucketName,
        tableName: this.table.tableName,
      }),
      // Custom metrics cost $0.30 each a month: published only when asked for (functions/report.ts).
      ...(runMetrics ? { [RUN_METRICS_ENV]: 'true' } : {}),
    };
    const functions = {} as Record<ArchiverStep, LambdaFunction>;
    const code = createStepCode(); // one asset for every step
    for (const step of ARCHIVER_STEPS) {
      functions[step] = createStepFunction(this, {
        step,
        code,
        memoryMb: p.memoryMb[step],
        timeout: p.timeout[step],
        environment,
        logRetention: p.logRetention,
        removalPolicy: props.removalPolicy,
      });
      acknowledge(functions[step].role ?? functions[step], 'AwsSolutions-IAM5[Resource::*]', X_RAY_REASON);
    }
    this.byStep = functions;
    this.functions = Object.fromEntries(
      ARCHIVER_STEPS.map((step) => [camelStep(step), functions[step]]),
    ) as unknown as ArchiverFunctions;
    this.grantSteps();

    const machine = new ArchiverStateMachine(this, 'Archiver', {
      functions,
      bucket: this.bucket,
      functionTimeouts: p.timeout,
      maxConcurrency: p.maxConcurrency,
      timeout: p.executionTimeout,
      logRetention: p.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stateMachine = machine.stateMachine;
    this.acknowledgeStateMachineRole();

    this.deadLetterQueue = new Queue(this, 'ScheduleDeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    acknowledge(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'this queue is itself the dead-letter queue of the schedule target; it has its own alarm',
    );
    this.schedule = new Schedule(this, 'Schedule', {
      description: 'Starts a job-details-archive run',
      schedule: ScheduleExpression.expression(p.schedule.expression, TimeZone.of(p.schedule.timeZone)),
      enabled: p.schedule.enabled,
      target: new StepFunctionsStartExecution(this.stateMachine, {
        input: ScheduleTargetInput.fromObject({}),
        deadLetterQueue: this.deadLetterQueue,
        retryAttempts: 3,
        maxEventAge: Duration.hours(1),
      }),
    });

    this.alarmTopic = props.alarmTopic ?? this.createAlarmTopic();
    if (props.alarmAction && !props.alarmTopic) {
      Annotations.of(this).addWarningV2(
        'job-details-archive:alarm-action-only',
        "alarmAction notifies the CloudWatch alarms only (the schedule's dead letters): failed, timed-out and aborted runs are EventBridge events published to alarmTopic, here the construct's own topic. Pass your topic as alarmTopic (not SnsAction(topic) as alarmAction), or subscribe to archive.alarmTopic.",
      );
    }
    this.failedRuns = this.createFailedRunsRule();
    this.alarms = this.createAlarms(runMetrics, props.alarmAction);

    if (p.sql) {
      this.sql = new ArchiveSql(this, 'Sql', {
        ...p.sql,
        ...defaultSqlNames(this),
        ...(props.sql ? pickNames(props.sql) : {}),
        bucket: this.bucket,
        removalPolicy: props.removalPolicy,
      });
      if (p.archiveStorageClass !== 'GLACIER_IR') {
        Annotations.of(this).addWarningV2(
          'job-details-archive:sql-glacier',
          `Parts move to ${p.archiveStorageClass}, which Athena skips until restored: SQL answers miss the jobs of unrestored parts.`,
        );
      }
    }
  }

  /**
   * SQL over the archive (needs the `sql` prop): Athena queries in the workgroup, Glue reads of its
   * tables, GetObject on the parts and the results bucket.
   */
  grantSql(grantee: IGrantable): Grant {
    if (!this.sql) throw new InvalidInputError('sql', 'grantSql needs the sql prop');
    return this.sql.grantQuery(grantee);
  }

  /**
   * Forensic lookups (the reader): objects under `job-details/`, `job-details-cold/` and
   * `job-details-index/` (GetObject + ListBucket on those prefixes), RestoreObject on archive parts, and
   * table reads.
   */
  grantRead(grantee: IGrantable): Grant {
    return grantObjects(grantee, this.bucket, 'hot', ['read'])
      .combine(grantObjects(grantee, this.bucket, 'cold', ['read', 'restore']))
      .combine(grantObjects(grantee, this.bucket, 'index', ['read']))
      .combine(grantMissingKeysAre404(grantee, this.bucket))
      .combine(this.table.grantReadData(grantee));
  }

  /** The hot-path writer (the indexer): PutObject under `job-details/`, table read/write. */
  grantWrite(grantee: IGrantable): Grant {
    return grantObjects(grantee, this.bucket, 'hot', ['write']).combine(
      this.table.grantReadWriteData(grantee),
    );
  }

  /**
   * Least privilege per step: each function gets exactly the calls its step makes (shared/archive/steps),
   * on the narrowest key pattern. `read` (GetObject + a prefix-scoped ListBucket) where a step lists or
   * where a missing key is an answer rather than an error (a new month has no index yet); `get` where
   * the object must exist anyway.
   */
  private grantSteps(): void {
    const s3 = (step: ArchiverStep, prefix: KeyPrefix, access: ObjectAccess[], keys = '*') => {
      const fn = this.byStep[step];
      grantObjects(fn, this.bucket, prefix, access, keys);
      acknowledgeWildcardResource(fn.role ?? fn, objectArn(this.bucket, prefix, keys), PREFIX_REASON);
    };
    const ddb = (step: ArchiverStep, actions: string[], resourceArn: string) => {
      const fn = this.byStep[step];
      Grant.addToPrincipal({ grantee: fn, actions, resourceArns: [resourceArn] });
      this.table.encryptionKey?.grantEncryptDecrypt(fn);
    };

    // Plan: Query the status GSI; write the page's planned jobs, batches and quarantine findings.
    ddb('plan', ['dynamodb:Query'], `${this.table.tableArn}/index/${JOBS_TABLE.gsiJobsByStatus.name}`);
    s3('plan', 'runs', ['put']);
    // The plan watermark (absent before the first run: a 404, not a 403) — its erasure summary says
    // which shops are forgotten (docs/erasure.md) — and its retry list's rows; one walk over the hot
    // prefix for the page's jobs (their listing goes into the planned jobs).
    s3('plan', 'state', ['read']);
    // Rows by key, or by a Query of the shop's partition when that bills less (archive/job-rows.ts).
    ddb('plan', ['dynamodb:BatchGetItem', 'dynamodb:Query'], this.table.tableArn);
    s3('plan', 'hot', ['list']);

    // ArchiveBatch, per group of its batch: BatchGetItem (or Query) the rows; list + GET the hot objects; upload
    // the part (multipart for large ones), list the group's parts and delete abandoned (or its own
    // failed) ones; read the month index and pending docs, write the pending manifest, GET the part
    // back to verify it, rewrite the index (commit, then mark deleted), delete the staging docs; delete
    // hot objects with DeleteObjects conditional on each ETag (S3 requires GetObject for that check as
    // well as DeleteObject); read the batch's planned jobs, write quarantine and delete-error findings.
    ddb('archive-batch', ['dynamodb:BatchGetItem', 'dynamodb:Query'], this.table.tableArn);
    s3('archive-batch', 'hot', ['read', 'delete']);
    s3('archive-batch', 'cold', ['read', 'write', 'delete']);
    s3('archive-batch', 'index', ['read']);
    s3('archive-batch', 'index', ['put'], INDEX_KEYS);
    s3('archive-batch', 'index', ['put', 'delete'], STAGING_KEYS);
    s3('archive-batch', 'index', ['put'], DOC_FILTER_KEYS);
    // The attempt's marker: written first, deleted when the attempt finishes (Tally reads what is left).
    s3('archive-batch', 'runs', ['get', 'put', 'delete']);
    // GETs of keys which may be absent (month index before its first commit, platform data, staging
    // docs after a commit got through) need S3 to answer 404 rather than 403.
    grantMissingKeysAre404(this.byStep['archive-batch'], this.bucket);
    // The watermark's erasure summary (forgotten shops), before archiving and again before each commit.
    s3('archive-batch', 'state', ['get']);

    // Tally reads the page's Map run results and writes the page's results; Report reads them and the
    // findings they name, writes the report.
    s3('tally', 'runs', ['get', 'put']);
    s3('report', 'runs', ['get', 'put']);
    // ... and scrubs its own scratch of shops forgotten while it ran: lists forget's markers, rewrites
    // what names them, deletes findings keyed by them (docs/erasure.md "Run scratch").
    s3('report', 'runs', ['list', 'delete']);
    // Report moves the watermark (conditional PUT; a conflict re-reads it).
    s3('report', 'state', ['read', 'put']);
    // The requests forget's markers name (their shops are scrubbed from the run's scratch); overdue
    // requests and forgotten shops come from the watermark's erasure summary.
    s3('report', 'erasure', ['get'], REQUEST_KEYS);

    // Forget a shop: Query its partition and delete its rows; walk the hot prefix (HEAD for the
    // shop-id metadata) and delete its objects; list and delete its parts, indexes, filters and
    // staging docs; drop its retries from the watermark; write its request, receipt and tombstone.
    ddb('forget', ['dynamodb:Query', 'dynamodb:DeleteItem'], this.table.tableArn);
    s3('forget', 'hot', ['read', 'delete']);
    s3('forget', 'cold', ['list', 'delete']);
    s3('forget', 'index', ['list', 'delete']);
    // Shared parts (packed shop-months) the shop is in: read, rewritten without it under an intent,
    // the month's shared index switched (docs/erasure.md).
    s3('forget', 'cold', ['get', 'put'], SHARED_KEYS);
    s3('forget', 'index', ['get', 'put'], SHARED_KEYS);
    s3('forget', 'state', ['read', 'put']);
    s3('forget', 'erasure', ['read', 'put', 'delete']);
    // Run scratch naming the shop: listed, read, rewritten without it or deleted; a marker in runs
    // still going.
    s3('forget', 'runs', ['read', 'put', 'delete']);
    grantMissingKeysAre404(this.byStep.forget, this.bucket);

    // Redact a document: Query the shop's partition; list, GET and conditionally rewrite its flush
    // objects; read the month indexes, HEAD / GET / restore the parts
    // that list the document, write the redacted part, its journal and the index, delete the old part,
    // its sidecar and the journal; record the request in the ledger. UpdateItem: a pre-migration row's
    // inline details that list the document are rewritten without it (conditional on what was read).
    ddb('redact', ['dynamodb:Query', 'dynamodb:UpdateItem'], this.table.tableArn);
    s3('redact', 'hot', ['read', 'put']);
    s3('redact', 'cold', ['read', 'put', 'delete', 'restore']);
    s3('redact', 'index', ['read', 'put', 'delete']);
    s3('redact', 'erasure', ['read', 'put']);
    // The watermark's erasure summary: a request enters it when recorded, leaves it when complete.
    s3('redact', 'state', ['read', 'put']);
    grantMissingKeysAre404(this.byStep.redact, this.bucket);
  }

  private acknowledgeStateMachineRole(): void {
    const role = this.stateMachine.role;
    acknowledge(
      role,
      'AwsSolutions-IAM5[Resource::*]',
      `${X_RAY_REASON}; CloudWatch Logs delivery actions (logs:CreateLogDelivery, …) only accept "*"`,
    );
    for (const step of ARCHIVER_STEPS) {
      acknowledgeWildcardResource(
        role,
        `${this.byStep[step].functionArn}:*`,
        'qualified ARNs (versions/aliases) of this one function, as granted by LambdaInvoke',
      );
    }
    // The Distributed Map reads the page plans and writes its results under the run scratch prefix.
    acknowledgeWildcardResource(role, objectArn(this.bucket, 'runs', '*'), PREFIX_REASON);
    // The Distributed Map starts, describes, stops and redrives child executions of this very state
    // machine; their names are generated per run, so only a wildcard can name them.
    const mapPolicy = this.stateMachine.node.tryFindChild('DistributedMapPolicy');
    const cfnMapPolicy = mapPolicy?.node.defaultChild;
    if (mapPolicy && cfnMapPolicy instanceof CfnPolicy) {
      const machineId = Stack.of(this).getLogicalId(this.stateMachine.node.defaultChild as CfnElement);
      for (const r of wildcardResources(cfnMapPolicy)) {
        if (r.includes(':states:') && r.includes(':execution:') && r.includes(machineId)) {
          acknowledge(
            mapPolicy,
            `AwsSolutions-IAM5[Resource::${r}]`,
            'child executions of this state machine only',
          );
        }
      }
    }
  }

  /** Jobs an archive run left in quarantine (published by the Report step through Powertools Metrics). */
  metricJobsQuarantined(props: MetricOptions = {}): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: RUN_METRICS.jobsQuarantined,
      dimensionsMap: { service: this.serviceName },
      statistic: 'Sum',
      ...props,
    });
  }

  /** Erasure requests past their deadline, as the last run's Report counted them (docs/erasure.md). */
  metricErasureRequestsOverdue(props: MetricOptions = {}): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: RUN_METRICS.erasureRequestsOverdue,
      dimensionsMap: { service: this.serviceName },
      statistic: 'Maximum',
      ...props,
    });
  }

  /**
   * The topic failures go to when no `alarmTopic` is given. No fixed price (SNS bills deliveries).
   * Unencrypted: CloudWatch alarms and EventBridge cannot publish to a topic under the AWS managed
   * key `alias/aws/sns`, and a customer managed key would cost $1 a month, 10× the default alarm.
   */
  private createAlarmTopic(): Topic {
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: 'job-details-archive failures',
      enforceSSL: true,
    });
    acknowledge(
      topic,
      'AwsSolutions-SNS2',
      'carries failure notices only (alarm state, execution ARN and status, the run input: {} when scheduled, a shop id for forget), no job details; CloudWatch and EventBridge cannot publish under alias/aws/sns and a customer managed key costs $1 a month',
    );
    return topic;
  }

  /**
   * Failed, timed-out and aborted runs, for free. Step Functions sends a "Step Functions Execution
   * Status Change" event (source `aws.states`) to the account's default event bus for every status
   * change of a STANDARD workflow's execution, with `detail.status` and `detail.stateMachineArn`
   * (https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html,
   * https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-states.html); AWS services' events
   * on the default bus and rules matching them cost nothing (https://aws.amazon.com/eventbridge/pricing/),
   * unlike the $0.10-a-month alarms on ExecutionsFailed / TimedOut / Aborted this replaces. Matching
   * on this state machine's ARN exactly leaves out the Distributed Map's child executions (theirs is
   * `stateMachine:<name>/<map run>`); a failed child fails the Map, and so the run. Delivery is "best
   * effort" per the EventBridge reference; the execution history keeps every run's status either way.
   */
  private createFailedRunsRule(): Rule {
    return new Rule(this, 'FailedRunsRule', {
      description: 'A job-details-archive run failed, timed out or was aborted',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: ['FAILED', 'TIMED_OUT', 'ABORTED'],
          stateMachineArn: [this.stateMachine.stateMachineArn],
        },
      },
      // A topic of this app gets a policy statement for events.amazonaws.com (SnsTopic's grantPublish);
      // an imported topic's policy cannot be changed here, so the rule publishes through its own role.
      targets: [
        new SnsTopic(this.alarmTopic, { authorizeUsingRole: !Resource.isOwnedResource(this.alarmTopic) }),
      ],
    });
  }

  /**
   * By default one alarm, on a metric SQS publishes for free ($0.10 an alarm metric a month): the
   * schedule's dead letters (a start that never happened has no execution event). `runMetrics` adds
   * the custom metrics' two alarms. Every alarm notifies `alarmTopic`, and `action` if given.
   */
  private createAlarms(runMetrics: boolean, action: JobDetailsArchiveProps['alarmAction']): ArchiveAlarms {
    const period = Duration.minutes(5);
    // Any occurrence in a 5-minute window alarms; no data means nothing happened.
    const alarm = (id: string, metric: IMetric, description: string) => {
      const a = new Alarm(this, id, {
        metric,
        threshold: 0,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      a.addAlarmAction(new SnsAction(this.alarmTopic));
      if (action) a.addAlarmAction(action);
      return a;
    };
    return {
      deadLetters: alarm(
        'ScheduleDeadLettersAlarm',
        this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        'The schedule could not start an archive run (its event is in the dead-letter queue)',
      ),
      ...(runMetrics
        ? {
            jobsQuarantined: alarm(
              'JobsQuarantinedAlarm',
              this.metricJobsQuarantined({ period }),
              'An archive run quarantined jobs: their details stay hot until fixed (see the run report)',
            ),
            // Published by every (daily) run's Report; a day-long period holds one value, the latest count.
            erasureRequestsOverdue: alarm(
              'ErasureRequestsOverdueAlarm',
              this.metricErasureRequestsOverdue({ period: Duration.days(1) }),
              'Erasure requests (forget a shop, redact a document) are older than erasureDeadlineDays and not complete: the run report and `jobarchive audit` list them',
            ),
          }
        : {}),
    };
  }
}
