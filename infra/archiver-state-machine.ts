import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
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
  Pass,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { RUN_INCOMPLETE_ERROR } from '../shared/archive/steps/report';
import type { ArchiverStep } from './step-functions';

/** Errors the Lambda service itself raises around an invocation. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

/** Error names a step may throw that are worth retrying (AWS SDK throttling/5xx, our lost races). */
export const TRANSIENT_ERRORS = [
  'ThrottlingException',
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'ConcurrentModificationError',
  'RequestTimeout',
  'TimeoutError',
  // DynamoDB throttling/5xx once the SDK's own retries are spent (plan's GSI Query, archive's BatchGetItem).
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
] as const;

/** State names (stable: the local runner, tests and dashboards refer to them). */
export const STATE = {
  plan: 'Plan',
  processGroups: 'ProcessGroups',
  archiveGroup: 'ArchiveGroup',
  hasPart: 'HasPart',
  verifyPart: 'VerifyPart',
  commitPart: 'CommitPart',
  deleteSources: 'DeleteSources',
  groupDone: 'GroupDone',
  groupFailed: 'GroupFailed',
  tally: 'Tally',
  morePages: 'MorePages',
  report: 'Report',
  runComplete: 'RunComplete',
  done: 'Done',
  runIncomplete: 'RunIncomplete',
  runFailed: 'RunFailed',
} as const;

/** The Task state each step runs in. */
export const TASK_STATE_OF: Readonly<Record<ArchiverStep, string>> = {
  plan: STATE.plan,
  'archive-group': STATE.archiveGroup,
  'verify-part': STATE.verifyPart,
  'commit-part': STATE.commitPart,
  'delete-sources': STATE.deleteSources,
  tally: STATE.tally,
  report: STATE.report,
};

export interface ArchiverStateMachineProps {
  readonly functions: Readonly<Record<ArchiverStep, IFunction>>;
  /** Each function's own timeout; the Task waits a minute longer so the Lambda's timeout fires first. */
  readonly functionTimeouts: Readonly<Record<ArchiverStep, Duration>>;
  readonly maxConcurrency: number;
  readonly timeout: Duration;
  readonly logRetention: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The archiver's one definition (JSONPath only: the local runner executes this exact ASL).
 *
 * Plan → ProcessGroups (Distributed Map over the page's groups) → Tally → MorePages ─cursor→ Plan
 *                                        └─ none → Report → RunComplete → Done | RunIncomplete (Fail)
 * Per group: ArchiveGroup → HasPart → VerifyPart → CommitPart → DeleteSources → GroupDone; a failing
 * Task in a group goes to GroupFailed, so one bad group never fails the others and is still reported.
 *
 * Contract with the handlers: Plan returns `{run, page, cursor, groups, planQuarantined, totals}`;
 * ArchiveGroup returns `{partKey?: string, summary, …}`; DeleteSources `{summary, …}`; Tally returns
 * `{run, page, cursor, totals}`.
 */
export class ArchiverStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ArchiverStateMachineProps) {
    super(scope, id);

    const task = (step: ArchiverStep, extra: { payload?: TaskInput; resultPath?: string } = {}) => {
      const t = new LambdaInvoke(this, TASK_STATE_OF[step], {
        lambdaFunction: props.functions[step],
        payloadResponseOnly: true, // Resource = the function ARN, Parameters = the payload as is
        retryOnServiceExceptions: false, // replaced by the explicit retrier below
        taskTimeout: Timeout.duration(props.functionTimeouts[step].plus(Duration.minutes(1))),
        ...extra,
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

    // --- one group (a child execution of the Distributed Map) ---
    // Its result joins the page's results in the parent's state (256 KB, no ResultWriter locally), so
    // only what Tally and Report read leaves the group: shop and month, the steps' count summaries,
    // or the caught error (handlers keep their Cause short: functions/bounded-errors.ts).
    const groupRef = {
      shopId: JsonPath.stringAt('$.group.shopId'),
      month: JsonPath.stringAt('$.group.month'),
    };
    const groupFailed = new Pass(this, STATE.groupFailed, {
      parameters: {
        group: groupRef,
        failed: true,
        error: JsonPath.stringAt('$.error.Error'),
        cause: JsonPath.stringAt('$.error.Cause'),
      },
    });
    const groupTask = (step: ArchiverStep, resultPath: string) =>
      task(step, { resultPath }).addCatch(groupFailed, { errors: [Errors.ALL], resultPath: '$.error' });

    const archiveGroup = groupTask('archive-group', '$.archive');
    const verifyPart = groupTask('verify-part', '$.verify');
    const commitPart = groupTask('commit-part', '$.commit');
    const deleteSources = groupTask('delete-sources', '$.delete');
    const groupDone = new Pass(this, STATE.groupDone, {
      parameters: {
        group: groupRef,
        archive: JsonPath.objectAt('$.archive.summary'),
        delete: JsonPath.objectAt('$.delete.summary'),
      },
    });
    deleteSources.next(groupDone);
    const hasPart = new Choice(this, STATE.hasPart)
      .when(
        Condition.and(Condition.isPresent('$.archive.partKey'), Condition.isString('$.archive.partKey')),
        verifyPart.next(commitPart).next(deleteSources),
      )
      .otherwise(deleteSources);

    // Distributed: each group is its own STANDARD child execution, so the parent's history grows with
    // pages, not groups (~18 events a page; see PLAN_PAGE_GROUPS_MAX in shared/config.ts).
    const processGroups = new DistributedMap(this, STATE.processGroups, {
      itemsPath: '$.groups',
      itemSelector: { run: JsonPath.objectAt('$.run'), group: JsonPath.objectAt('$$.Map.Item.Value') },
      resultPath: '$.results',
      maxConcurrency: props.maxConcurrency,
      mapExecutionType: StateMachineType.STANDARD,
    });
    processGroups.itemProcessor(archiveGroup.next(hasPart));
    // Groups catch their own failures; what reaches here is the Map itself failing (e.g. its results
    // outgrowing the 256 KB state limit), which ends the run with that error, like any run-level Task.
    processGroups.addCatch(runFailed, { errors: [Errors.ALL] });

    // --- the run: pages of groups until the plan has no cursor ---
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
    // ends FAILED (ArchiveRunIncomplete, Cause = report key and the failures), so the failed-execution
    // alarm fires. Report sets `incomplete` only then, never in a dry run.
    const runComplete = new Choice(this, STATE.runComplete)
      .when(
        Condition.isPresent('$.incomplete'),
        new Fail(this, STATE.runIncomplete, { error: RUN_INCOMPLETE_ERROR, causePath: '$.incomplete' }),
      )
      .otherwise(new Succeed(this, STATE.done));
    const morePages = new Choice(this, STATE.morePages)
      .when(Condition.and(Condition.isPresent('$.cursor'), Condition.not(Condition.isNull('$.cursor'))), plan)
      .otherwise(report.next(runComplete));

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      definitionBody: DefinitionBody.fromChainable(plan.next(processGroups).next(tally).next(morePages)),
      stateMachineType: StateMachineType.STANDARD,
      timeout: props.timeout,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: true },
    });
  }
}
