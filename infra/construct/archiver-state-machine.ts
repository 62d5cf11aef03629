import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  Choice,
  Condition,
  DefinitionBody,
  DistributedMap,
  Errors,
  Fail,
  JitterType,
  JsonPath,
  LogLevel,
  ResultWriterV2,
  S3JsonLItemReader,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { RUNS_PREFIX } from '../../shared/archive/format';
import {
  ERASURE_OVERDUE_ERROR,
  RUN_INCOMPLETE_ERROR,
} from '../../shared/archive/steps/report/run-incomplete';
import { LAMBDA_SERVICE_ERRORS, TRANSIENT_ERRORS } from './retry-errors';
import type { ArchiverStep } from './step-functions';

export { LAMBDA_SERVICE_ERRORS, TRANSIENT_ERRORS };

/**
 * The Map's reader and writer, granted only the run scratch prefix: CDK's own grant every object of
 * the bucket (`bucket/*`) when the key is a JSONPath, which would let the state machine read hot
 * objects and archives it never touches.
 */
class RunScratchReader extends S3JsonLItemReader {
  constructor(
    private readonly scratch: IBucket,
    key: string,
  ) {
    super({ bucket: scratch, key });
  }
  override providePolicyStatements(): PolicyStatement[] {
    return [
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [this.scratch.arnForObjects(`${RUNS_PREFIX}*`)],
      }),
    ];
  }
}

class RunScratchWriter extends ResultWriterV2 {
  constructor(
    private readonly scratch: IBucket,
    prefix: string,
  ) {
    super({ bucket: scratch, prefix });
  }
  override providePolicyStatements(): PolicyStatement[] {
    return [
      new PolicyStatement({
        // What the ResultWriter needs (CDK's list), on the scratch prefix only.
        actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'],
        resources: [this.scratch.arnForObjects(`${RUNS_PREFIX}*`)],
      }),
    ];
  }
}

/** State names (stable: the local runner, tests and dashboards refer to them). */
export const STATE = {
  route: 'Route',
  forget: 'Forget',
  forgotten: 'Forgotten',
  redact: 'Redact',
  redacted: 'Redacted',
  plan: 'Plan',
  hasBatches: 'HasBatches',
  processBatches: 'ProcessBatches',
  archiveBatch: 'ArchiveBatch',
  tally: 'Tally',
  morePages: 'MorePages',
  report: 'Report',
  redactPending: 'RedactPending',
  runComplete: 'RunComplete',
  done: 'Done',
  runIncomplete: 'RunIncomplete',
  afterRedactions: 'AfterRedactions',
  erasureOverdue: 'ErasureOverdue',
  runFailed: 'RunFailed',
} as const;

/** The Task state each step runs in. */
export const TASK_STATE_OF: Readonly<Record<ArchiverStep, string>> = {
  plan: STATE.plan,
  'archive-batch': STATE.archiveBatch,
  tally: STATE.tally,
  report: STATE.report,
  forget: STATE.forget,
  redact: STATE.redact,
};

/**
 * Every batch is attempted; a child that fails (after its Tasks' retries) is recorded by the
 * ResultWriter and its groups are reported failed by Tally, so the run ends ArchiveRunIncomplete
 * rather than the Map aborting the other batches.
 */
export const TOLERATED_FAILURE_PERCENTAGE = 100;

export interface ArchiverStateMachineProps {
  readonly functions: Readonly<Record<ArchiverStep, IFunction>>;
  /** Each function's own timeout; the Task waits a minute longer so the Lambda's timeout fires first. */
  readonly functionTimeouts: Readonly<Record<ArchiverStep, Duration>>;
  /** Holds the plan files the Map reads and the results it writes (`job-details-runs/`). */
  readonly bucket: IBucket;
  readonly maxConcurrency: number;
  readonly timeout: Duration;
  readonly logRetention: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The archiver's one definition (JSONPath: the local runner executes this exact ASL, emulating the
 * Distributed Map's ItemReader and ResultWriter: infra/local/distributed-map.ts).
 *
 * Route: an input `{"forget": {"shopId": …}}` goes to Forget → Forgotten (docs/erasure.md), one with
 * `{"redact": {"shopId": …, "docId": …}}` (or `{"pending": true}`) to Redact → Redacted
 * (docs/operations.md#redacting-a-document); any other input is an archival run:
 * Plan → HasBatches → ProcessBatches (Distributed Map over the page's batches) → Tally → MorePages
 *   ─cursor→ Plan; none → Report → RunComplete → Done | RunIncomplete (Fail) | RedactPending (redactions
 *   wait for a restore) → Done. A page without batches
 *   goes from HasBatches to the next Plan or to Report itself (an idle run invokes Plan and Report only).
 * Per batch (a STANDARD child): one ArchiveBatch Task archives, verifies, commits and deletes the
 * sources of every shop-month of the batch; a group's failure is reported in its result, never thrown.
 *
 * The Map reads its items from the page's plan file in S3 (ItemReader, JSONL) and writes its results
 * there (ResultWriter), so neither the page's size nor its results touch the 256 KB state. Children
 * are STANDARD: a batch holding a large shop-month runs longer than EXPRESS's 5 minutes, and at
 * 2 transitions per batch of up to 300 shop-months they cost ~$0.000001 a shop-month.
 *
 * Contract with the handlers: Plan returns `{run, page, cursor, totals, batches, groups, batchesKey,
 * resultsPrefix, planQuarantined}`; the Map adds `mapRun` (`{MapRunArn, ResultWriterDetails}`);
 * Tally returns `{run, page, cursor, totals}`.
 */
export class ArchiverStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ArchiverStateMachineProps) {
    super(scope, id);
    // DistributedMap renders `resultWriterV2` only under this feature flag; set on this construct (before
    // any child exists) so the definition does not depend on the consuming app's cdk.json.
    this.node.setContext(cxapi.STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);

    const task = (
      step: ArchiverStep,
      extra: { payload?: TaskInput; resultPath?: string; name?: string } = {},
    ) => {
      const { name, ...options } = extra;
      const t = new LambdaInvoke(this, name ?? TASK_STATE_OF[step], {
        lambdaFunction: props.functions[step],
        payloadResponseOnly: true, // Resource = the function ARN, Parameters = the payload as is
        retryOnServiceExceptions: false, // replaced by the explicit retrier below
        taskTimeout: Timeout.duration(props.functionTimeouts[step].plus(Duration.minutes(1))),
        ...options,
      });
      t.addRetry({
        errors: [...LAMBDA_SERVICE_ERRORS],
        interval: Duration.seconds(2),
        maxAttempts: 6,
        backoffRate: 2,
        maxDelay: Duration.minutes(1),
        jitterStrategy: JitterType.FULL,
      });
      t.addRetry({
        errors: [...TRANSIENT_ERRORS],
        interval: Duration.seconds(5),
        maxAttempts: 5,
        backoffRate: 2,
        maxDelay: Duration.minutes(2),
        jitterStrategy: JitterType.FULL,
      });
      return t;
    };

    const runFailed = new Fail(this, STATE.runFailed, { errorPath: '$.Error', causePath: '$.Cause' });

    // --- one batch (a child execution): its output is ArchiveBatch's `{results, overhead}` ---
    const batch = task('archive-batch');

    const processBatches = new DistributedMap(this, STATE.processBatches, {
      itemReader: new RunScratchReader(props.bucket, JsonPath.stringAt('$.batchesKey')),
      itemSelector: { run: JsonPath.objectAt('$.run'), batch: JsonPath.objectAt('$$.Map.Item.Value') },
      resultWriterV2: new RunScratchWriter(props.bucket, JsonPath.stringAt('$.resultsPrefix')),
      resultPath: '$.mapRun',
      maxConcurrency: props.maxConcurrency,
      mapExecutionType: StateMachineType.STANDARD,
      toleratedFailurePercentage: TOLERATED_FAILURE_PERCENTAGE,
    });
    processBatches.itemProcessor(batch);
    // What reaches here is the Map run itself failing (its reader or writer), which ends the run.
    processBatches.addCatch(runFailed, { errors: [Errors.ALL] });

    // --- the run: pages until the plan has no cursor ---
    const plan = task('plan', {
      payload: TaskInput.fromObject({
        state: JsonPath.entirePayload,
        execution: JsonPath.stringAt('$$.Execution.Name'),
        startTime: JsonPath.stringAt('$$.Execution.StartTime'),
      }),
    }).addCatch(runFailed, { errors: [Errors.ALL] });
    const tally = task('tally').addCatch(runFailed, { errors: [Errors.ALL] });
    const report = task('report').addCatch(runFailed, { errors: [Errors.ALL] });
    // "IsNull: false" is written as Not(IsNull: true): same meaning on AWS, and aws-local-stepfunctions
    // evaluates every type test set to false as false (the guard rejects those).
    // A run whose groups failed has processed every other group and written its report; it still
    // ends FAILED (ArchiveRunIncomplete, Cause = report key and the failures), so the failed-runs rule
    // publishes it to the alarm topic. Report sets `incomplete` only then, never in a dry run.
    // Redactions waiting for a Glacier restore (Report says how many, from the watermark's erasure
    // summary) are resumed by the scheduled run itself: Redact `{"pending": true}`, its result beside
    // the report. A run with none goes straight on (no invocation, no extra transition).
    const done = new Succeed(this, STATE.done);
    const redactPending = task('redact', {
      name: STATE.redactPending,
      payload: TaskInput.fromObject({
        redact: { pending: true },
        execution: JsonPath.stringAt('$$.Execution.Name'),
      }),
      resultPath: '$.redactions',
    }).addCatch(runFailed, { errors: [Errors.ALL] });
    // Overdue erasure requests end the run FAILED once its work (and any redactions it resumes) is
    // done: the free failed-runs rule (EventBridge → alarm topic) reaches a person, no custom metric needed.
    const erasureOverdue = new Fail(this, STATE.erasureOverdue, {
      error: ERASURE_OVERDUE_ERROR,
      causePath: '$.overdue',
    });
    redactPending.next(
      new Choice(this, STATE.afterRedactions)
        .when(Condition.isPresent('$.overdue'), erasureOverdue)
        .otherwise(done),
    );
    const runComplete = new Choice(this, STATE.runComplete)
      .when(
        Condition.isPresent('$.incomplete'),
        new Fail(this, STATE.runIncomplete, { error: RUN_INCOMPLETE_ERROR, causePath: '$.incomplete' }),
      )
      .when(Condition.numberGreaterThan('$.erasurePendingRedactions', 0), redactPending)
      .when(Condition.isPresent('$.overdue'), erasureOverdue)
      .otherwise(done);
    const hasCursor = Condition.and(
      Condition.isPresent('$.cursor'),
      Condition.not(Condition.isNull('$.cursor')),
    );
    const morePages = new Choice(this, STATE.morePages)
      .when(hasCursor, plan)
      .otherwise(report.next(runComplete));
    tally.next(morePages);
    // A page without batches has nothing for the Map or Tally (Plan wrote its results): it decides the
    // next page itself, so an idle run is Plan → HasBatches → Report (each state entered is billed).
    const hasBatches = new Choice(this, STATE.hasBatches)
      .when(Condition.numberGreaterThan('$.batches', 0), processBatches.next(tally))
      .when(hasCursor, plan)
      .otherwise(report);

    // Forget a shop (docs/erasure.md): the same machine, so the execution history, logs, alarms and
    // the failed-runs rule cover erasures too; a scheduled run's input `{}` never has `forget`.
    // Its own timeout too: forget scrubs the scratch of runs older than it (they have ended).
    const forget = task('forget', {
      payload: TaskInput.fromObject({
        forget: JsonPath.objectAt('$.forget'),
        execution: JsonPath.stringAt('$$.Execution.Name'),
        runTimeoutSeconds: props.timeout.toSeconds(),
      }),
    }).addCatch(runFailed, { errors: [Errors.ALL] });
    // Redact a document (docs/operations.md#redacting-a-document), routed the same way.
    const redact = task('redact', {
      payload: TaskInput.fromObject({
        redact: JsonPath.objectAt('$.redact'),
        execution: JsonPath.stringAt('$$.Execution.Name'),
      }),
    }).addCatch(runFailed, { errors: [Errors.ALL] });
    plan.next(hasBatches);
    const route = new Choice(this, STATE.route)
      .when(Condition.isPresent('$.forget'), forget.next(new Succeed(this, STATE.forgotten)))
      .when(Condition.isPresent('$.redact'), redact.next(new Succeed(this, STATE.redacted)))
      .otherwise(plan);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      definitionBody: DefinitionBody.fromChainable(route),
      stateMachineType: StateMachineType.STANDARD,
      timeout: props.timeout,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: true },
    });
  }
}
