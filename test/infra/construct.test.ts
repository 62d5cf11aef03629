import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { ARCHIVE_ALARMS, RUN_METRICS_ALARMS } from '../../infra/cli/cost-model';
import { transitionBreakEvenBytes } from '../../infra/cli/transition-threshold';
import { type ArchiveStack, createArchiveApp } from '../../infra/construct/archive-stack';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { ARCHIVER_STEPS, type ArchiverStep } from '../../infra/construct/step-functions';
import { camelStep } from '../../infra/construct/step-names';
import { ENV } from '../../shared/config';
import { JOBS_TABLE } from '../../shared/jobs/schema';
import { ACCESS_LOGS_RETENTION_DAYS } from '../../shared/settings';
import {
  ANY_KEY,
  acknowledgedRules,
  expectTlsDeniedOnEveryBucket,
  listPrefixes,
  logicalId,
  objectAccess,
  roleIdOf,
  type Statement,
  statementsOfRole,
  tableAccess,
  useOutdirs,
} from './template-helpers';

/**
 * The standalone stack as `cdk synth` builds it (cdk-nag AwsSolutions on), minus esbuild bundling,
 * which cannot change the template's shape (test/infra/deployed-definition.test.ts checks the
 * definition with bundling on). Synthesized once for the file.
 */
let stack: ArchiveStack;
let template: Template;
let nagError: unknown;
let bucketArn: string;
let tableArn: string;
const outdir = useOutdirs();

beforeAll(() => {
  const built = createArchiveApp({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() });
  stack = built.stack;
  let assembly: CloudAssembly | undefined;
  try {
    assembly = built.app.synth(); // runs the nag plugin: any unacknowledged finding throws
  } catch (err) {
    nagError = err;
  }
  if (!assembly) throw nagError;
  template = Template.fromStack(stack);
  bucketArn = `<${logicalId(stack.archive.bucket, stack)}.Arn>`;
  tableArn = `<${logicalId(stack.archive.table, stack)}.Arn>`;
});

const G = 's3:GetObject';
const P1 = 's3:PutObject';
const P = ['s3:AbortMultipartUpload', P1];
const D = 's3:DeleteObject';

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged (synth with the plugin does not throw)', () => {
    expect(nagError).toBeUndefined();
  });
});

describe('jobs table (created)', () => {
  it('is on-demand, keyed pk/sk, TTL on ttl, with PITR and deletion protection', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      Replicas: [
        Match.objectLike({
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        }),
      ],
    });
  });

  it('has exactly the two v2 GSIs with their exact projections', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: [
        {
          IndexName: 'GSI_JobLookup_v2',
          KeySchema: [{ AttributeName: 'job_id', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
        {
          IndexName: 'GSI_JobsByStatus_v2',
          KeySchema: [
            { AttributeName: 'job_status', KeyType: 'HASH' },
            { AttributeName: 'status_created_at', KeyType: 'RANGE' },
          ],
          Projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: [...JOBS_TABLE.gsiJobsByStatus.nonKeyAttributes],
          },
        },
      ],
    });
  });
});

describe('details bucket (created)', () => {
  const detailsBucket = (): Record<string, unknown> => {
    const bucket = template.findResources('AWS::S3::Bucket')[logicalId(stack.archive.bucket, stack)];
    if (!bucket) throw new Error('details bucket not in the template');
    return bucket.Properties as Record<string, unknown>;
  };
  const rules = () =>
    (detailsBucket() as { LifecycleConfiguration: { Rules: Record<string, unknown>[] } })
      .LifecycleConfiguration.Rules;

  it('is SSE-S3, private, unversioned, and writes no access logs by default (no log bucket)', () => {
    const props = detailsBucket();
    expect(props.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(props.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(props.VersioningConfiguration).toBeUndefined();
    // Opt-in, as in S3 (access-logs.test.ts): the cost model prices none by default either.
    expect(ACCESS_LOGS_RETENTION_DAYS).toBe(0);
    expect(props.LoggingConfiguration).toBeUndefined();
    expect(Object.keys(template.findResources('AWS::S3::Bucket'))).toEqual([
      logicalId(stack.archive.bucket, stack),
    ]);
    // cdk-nag's AwsSolutions-S1 on it, acknowledged with what logging would cost and how to opt in.
    expect(acknowledgedRules(stack.archive.bucket)['AwsSolutions-S1']).toMatch(
      /opt-in.*two records per archived hot object.*jobarchive cost --access-log-days N.*give accessLogsRetention or serverAccessLogsBucket/,
    );
  });

  it('denies every request without TLS', () => {
    expectTlsDeniedOnEveryBucket(template, 1);
  });

  it('aborts incomplete multipart uploads after a day, bucket-wide (so parts under job-details-cold/ too)', () => {
    const aborts = rules().filter((r) => r.AbortIncompleteMultipartUpload !== undefined);
    expect(aborts).toEqual([
      {
        Id: 'abort-incomplete-multipart-uploads',
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
        Status: 'Enabled',
      },
    ]);
  });

  it('moves archive parts to Glacier IR after 1 day, those larger than where a move pays for itself', () => {
    const cold = rules().filter((r) => r.Prefix === 'job-details-cold/');
    expect(cold).toEqual([
      expect.objectContaining({ Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 1 }] }),
    ]);
    // Kept forever (the default retention) is priced over 10 years: ~29.9 KB. Never S3's own
    // default (no filter: nothing under 128 KB moves).
    expect(cold[0]?.ObjectSizeGreaterThan).toBe(
      transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 0 }),
    );
    expect(cold[0]?.ObjectSizeGreaterThan).toBe(30_578);
    // The filter is a number where CloudFormation's schema says string: one acknowledgement, its reason.
    const acks = Object.entries(acknowledgedRules(stack.archive.bucket)).filter(([id]) =>
      id.includes('W9003'),
    );
    expect(acks).toEqual([[expect.stringContaining('W9003'), expect.stringMatching(/coerced to string/)]]);
  });

  it('expires run scratch (plans, page results, findings, reports) after 3 days, and only that', () => {
    expect(rules().filter((r) => r.ExpirationInDays !== undefined)).toEqual([
      { Id: 'expire-run-scratch', Prefix: 'job-details-runs/', ExpirationInDays: 3, Status: 'Enabled' },
    ]);
  });

  it('has no rule on hot objects or indexes without retentionMonths (bucket-wide: the multipart abort and the noncurrent-version rules)', () => {
    for (const rule of rules()) {
      const prefix = rule.Prefix as string | undefined;
      if (prefix === undefined) {
        expect([
          'abort-incomplete-multipart-uploads',
          'expire-noncurrent-versions',
          'remove-expired-delete-markers',
        ]).toContain(rule.Id);
        expect(rule.ExpirationInDays).toBeUndefined();
        continue;
      }
      expect(prefix.startsWith('job-details/')).toBe(false);
      expect(prefix.startsWith('job-details-index/')).toBe(false);
    }
  });
});

describe('step functions', () => {
  it.each(ARCHIVER_STEPS)('%s: Node 24 on arm64, tracing, its own log group with retention', (step) => {
    const fnId = logicalId(stack.archive.functions[camelStep(step)], stack);
    const fn = template.findResources('AWS::Lambda::Function')[fnId]?.Properties as Record<string, unknown>;
    expect(fn.Runtime).toBe('nodejs24.x');
    expect(fn.Architectures).toEqual(['arm64']);
    expect(fn.Handler).toBe(`${step}.handler`);
    expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
    const heavy = step === 'archive-batch' || step === 'forget' || step === 'redact';
    expect(fn.MemorySize).toBe(heavy && step !== 'archive-batch' ? 1024 : 512);
    expect(fn.Timeout).toBe(heavy ? 900 : 300);
    const logGroupId = (fn.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    expect(template.findResources('AWS::Logs::LogGroup')[logGroupId]?.Properties).toEqual(
      expect.objectContaining({ RetentionInDays: 90 }),
    );
  });

  it('receive the settings under the names shared/config.ts reads', () => {
    const vars = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (f) => (f.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables,
    );
    expect(vars).toHaveLength(ARCHIVER_STEPS.length);
    for (const v of vars) {
      expect(v).toEqual({
        [ENV.bucket]: { Ref: logicalId(stack.archive.bucket, stack) },
        [ENV.table]: { Ref: logicalId(stack.archive.table, stack) },
        [ENV.olderThanDays]: '30',
        [ENV.graceHours]: '0',
        [ENV.jobTtlDays]: '90',
        [ENV.readConcurrency]: '32',
        [ENV.planPageGroups]: '10000',
        [ENV.planPageJobs]: '100000',
        [ENV.batchGroups]: '300',
        [ENV.batchJobs]: '5000',
        [ENV.packBelowKb]: '128',
        [ENV.wholeMonths]: 'true',
        [ENV.erasureDeadlineDays]: '30',
        [ENV.restoreTier]: 'Standard',
        [ENV.restoreDays]: '7',
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: stack.archive.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: 'JobDetailsArchive',
      });
    }
  });

  it('have no AWS managed policy (their roles may only write their own log group)', () => {
    for (const step of ARCHIVER_STEPS) {
      const role =
        template.findResources('AWS::IAM::Role')[roleIdOf(stack.archive.functions[camelStep(step)], stack)];
      expect(role?.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('least privilege per step', () => {
  const statements = (step: ArchiverStep): Statement[] =>
    statementsOfRole(template, roleIdOf(stack.archive.functions[camelStep(step)], stack));

  const PENDING = 'job-details-index/*/*/pending/';
  const INDEX = 'job-details-index/*/*/index.json';
  /**
   * Exactly the calls each step makes (shared/archive/steps), by key pattern: `objects` (resource
   * without its trailing `*`) → actions, `lists` → the `s3:prefix` values ListBucket is granted for.
   */
  const expected: Record<
    ArchiverStep,
    { objects: Record<string, string[]>; lists: string[]; table: Record<string, string[]> }
  > = {
    // Query the GSI; PUT planned-jobs lists and plan findings.
    // Read the watermark (its erasure summary names the forgotten shops), BatchGetItem (or Query)
    // its retry list's rows, list the page's hot objects.
    plan: {
      objects: { 'job-details-runs/': [P1], 'job-details-state/': [G] },
      lists: ['job-details-state/*', 'job-details/*'],
      table: {
        [`${'<T>'}/index/${JOBS_TABLE.gsiJobsByStatus.name}`]: ['dynamodb:Query'],
        '<T>': ['dynamodb:BatchGetItem', 'dynamodb:Query'],
      },
    },
    // Per group of its batch: BatchGetItem (or Query) rows; list + GET hot objects; multipart upload, GET back,
    // list and GC parts; read + PUT the index; PUT/DELETE staging docs; delete hot objects
    // conditionally on their ETag (GetObject + DeleteObject); GET planned jobs, PUT findings.
    'archive-batch': {
      objects: {
        'job-details/': [D, G].sort(),
        'job-details-cold/': [D, G, ...P].sort(),
        'job-details-index/': [G],
        [INDEX]: [P1],
        [PENDING]: [D, P1].sort(),
        'job-details-index/*/*/docs/': [P1],
        'job-details-runs/': [D, G, P1].sort(),
        // The watermark's erasure summary (forgotten shops; docs/erasure.md).
        'job-details-state/': [G],
      },
      lists: [ANY_KEY, 'job-details-cold/*', 'job-details-index/*', 'job-details/*'],
      table: { '<T>': ['dynamodb:BatchGetItem', 'dynamodb:Query'] },
    },
    // GET the Map run's manifest and result files; PUT the page results.
    tally: { objects: { 'job-details-runs/': [G, P1].sort() }, lists: [], table: {} },
    // ... and read + conditionally PUT the watermark.
    // ... and its own scratch, of shops forgotten while it ran (list markers, GET the requests they
    // name, rewrite, delete); overdue requests come from the watermark's erasure summary.
    report: {
      objects: {
        'job-details-runs/': [D, G, P1].sort(),
        'job-details-state/': [G, P1].sort(),
        'job-details-erasure/requests/': [G],
      },
      lists: ['job-details-runs/*', 'job-details-state/*'],
      table: {},
    },
    // Forget a shop: its rows (Query, DeleteItem), hot objects (list, HEAD, delete), archive (list,
    // delete), watermark retries, and the ledger, receipt and tombstone.
    forget: {
      objects: {
        'job-details/': [D, G].sort(),
        'job-details-cold/': [D],
        'job-details-cold/_shared/': [G, P1].sort(),
        'job-details-index/': [D],
        'job-details-index/_shared/': [G, P1].sort(),
        'job-details-state/': [G, P1].sort(),
        'job-details-erasure/': [D, G, P1].sort(),
        // Run scratch naming the shop: rewritten without it, or deleted; a marker in runs still going.
        'job-details-runs/': [D, G, P1].sort(),
      },
      lists: [
        ANY_KEY,
        'job-details-cold/*',
        'job-details-erasure/*',
        'job-details-index/*',
        'job-details-runs/*',
        'job-details-state/*',
        'job-details/*',
      ],
      table: { '<T>': ['dynamodb:DeleteItem', 'dynamodb:Query'] },
    },
    // Redact a document: the shop's rows (Query), its flush objects rewritten in place, parts read,
    // restored, written and deleted, indexes (and journals, old sidecars) read, written and deleted,
    // the ledger and the watermark's erasure summary.
    redact: {
      objects: {
        'job-details/': [G, P1].sort(),
        'job-details-cold/': [D, G, P1, 's3:RestoreObject'].sort(),
        'job-details-index/': [D, G, P1].sort(),
        'job-details-erasure/': [G, P1].sort(),
        'job-details-state/': [G, P1].sort(),
      },
      lists: [
        ANY_KEY,
        'job-details-cold/*',
        'job-details-erasure/*',
        'job-details-index/*',
        'job-details-state/*',
        'job-details/*',
      ],
      table: { '<T>': ['dynamodb:Query', 'dynamodb:UpdateItem'] },
    },
  };

  it.each(ARCHIVER_STEPS)('%s: exactly its key patterns, listings and table calls', (step) => {
    const st = statements(step);
    const want = expected[step];
    expect(objectAccess(st, bucketArn)).toEqual(want.objects);
    expect(listPrefixes(st, bucketArn)).toEqual([...want.lists].sort());
    const table = Object.fromEntries(
      Object.entries(want.table).map(([k, v]) => [k.replace('<T>', tableArn), v]),
    );
    expect(tableAccess(st)).toEqual(table);
  });

  it('the multipart upload can be aborted only where parts are written', () => {
    for (const step of ARCHIVER_STEPS) {
      const aborts = Object.entries(objectAccess(statements(step), bucketArn)).filter(([, a]) =>
        a.includes('s3:AbortMultipartUpload'),
      );
      expect(aborts.map(([k]) => k)).toEqual(step === 'archive-batch' ? ['job-details-cold/'] : []);
    }
  });

  it.each(ARCHIVER_STEPS)('%s: no s3:* and no Resource "*" except X-Ray', (step) => {
    for (const st of statements(step)) {
      expect(st.effect).toBe('Allow');
      expect(st.actions).not.toContain('s3:*');
      for (const a of st.actions)
        if (a.startsWith('s3:') || a.startsWith('dynamodb:')) expect(a).not.toContain('*');
      if (st.resources.includes('*'))
        expect(st.actions).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
  });
});

describe('state machine resource', () => {
  it('is STANDARD, logs ALL to its own log group with retention, traces, times out after 12 h', () => {
    const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const props = machine?.Properties as Record<string, unknown>;
    expect(props.StateMachineType).toBe('STANDARD');
    expect(props.TracingConfiguration).toEqual({ Enabled: true });
    const logging = props.LoggingConfiguration as {
      Level: string;
      IncludeExecutionData: boolean;
      Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [string, string] } } }];
    };
    expect(logging.Level).toBe('ALL');
    expect(logging.IncludeExecutionData).toBe(true);
    const logGroupId = logging.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn['Fn::GetAtt'][0];
    expect(template.findResources('AWS::Logs::LogGroup')[logGroupId]?.Properties).toEqual(
      expect.objectContaining({ RetentionInDays: 90 }),
    );
    expect(JSON.stringify(props.DefinitionString)).toContain('\\"TimeoutSeconds\\":43200');
  });

  it('may invoke exactly the seven step functions', () => {
    const role = stack.archive.stateMachine.role;
    const invoked = statementsOfRole(template, logicalId(role, stack))
      .filter((st) => st.actions.includes('lambda:InvokeFunction'))
      .flatMap((st) => st.resources)
      .filter((r) => !r.endsWith(':*'))
      .sort();
    expect(invoked).toEqual(
      ARCHIVER_STEPS.map((s) => `<${logicalId(stack.archive.functions[camelStep(s)], stack)}.Arn>`).sort(),
    );
  });
});

describe('schedule', () => {
  it('starts the state machine daily at 03:00 UTC with input {} and a retry policy', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 3 * * ? *)',
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
      Target: Match.objectLike({
        Arn: { Ref: logicalId(stack.archive.stateMachine, stack) },
        Input: '{}',
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3600 },
        DeadLetterConfig: { Arn: { 'Fn::GetAtt': [logicalId(stack.archive.deadLetterQueue, stack), 'Arn'] } },
      }),
    });
  });

  it('has a TLS-only, encrypted dead-letter queue', () => {
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('alarms', () => {
  const alarmOn = (t: Template, metricName: string, namespace: string) =>
    Object.values(t.findResources('AWS::CloudWatch::Alarm')).filter(
      (a) => a.Properties.MetricName === metricName && a.Properties.Namespace === namespace,
    );
  /** Every metric an alarm watches (an alarm on metric math pays for each). */
  const alarmMetrics = (t: Template) =>
    Object.values(t.findResources('AWS::CloudWatch::Alarm')).flatMap((a) =>
      a.Properties.Metrics
        ? (a.Properties.Metrics as { MetricStat?: { Metric: { Namespace: string } } }[]).flatMap((m) =>
            m.MetricStat ? [m.MetricStat.Metric.Namespace] : [],
          )
        : [a.Properties.Namespace as string],
    );

  it('by default cost $0.10 a month: one alarm, on a metric AWS publishes for free (what the cost model counts)', () => {
    const namespaces = alarmMetrics(template);
    expect(namespaces).toEqual(['AWS/SQS']); // the schedule's dead letters; no custom metric ($0.30 each)
    expect(namespaces).toHaveLength(ARCHIVE_ALARMS);
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function')))
      expect(fn.Properties.Environment?.Variables?.JDA_RUN_METRICS).toBeUndefined();
  });

  it('fires when the schedule dead-letter queue holds a message, on the alarm topic', () => {
    const alarms = alarmOn(template, 'ApproximateNumberOfMessagesVisible', 'AWS/SQS');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]?.Properties).toEqual(
      expect.objectContaining({
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        Statistic: 'Maximum',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: logicalId(stack.archive.alarmTopic, stack) }],
      }),
    );
  });

  it('no alarm on execution metrics: failed, timed-out and aborted runs go through one free EventBridge rule', () => {
    expect(alarmMetrics(template)).not.toContain('AWS/States');
    const rules = Object.values(template.findResources('AWS::Events::Rule'));
    expect(rules).toHaveLength(1);
    expect(rules[0]?.Properties).toEqual(
      expect.objectContaining({
        State: 'ENABLED',
        // The default bus: AWS service events are free there (no EventBusName).
        EventPattern: {
          source: ['aws.states'],
          'detail-type': ['Step Functions Execution Status Change'],
          detail: {
            status: ['FAILED', 'TIMED_OUT', 'ABORTED'],
            stateMachineArn: [{ Ref: logicalId(stack.archive.stateMachine, stack) }],
          },
        },
        Targets: [expect.objectContaining({ Arn: { Ref: logicalId(stack.archive.alarmTopic, stack) } })],
      }),
    );
    expect(rules[0]?.Properties.EventBusName).toBeUndefined();
    expect(rules[0]?.Properties.Targets[0].RoleArn).toBeUndefined(); // the topic policy lets it publish
  });

  it('creates the alarm topic (SSL only) and lets EventBridge and CloudWatch publish to it', () => {
    const topicId = logicalId(stack.archive.alarmTopic, stack);
    expect(Object.keys(template.findResources('AWS::SNS::Topic'))).toEqual([topicId]);
    const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy')).filter((p) =>
      (p.Properties.Topics as unknown[]).some((t) => JSON.stringify(t) === JSON.stringify({ Ref: topicId })),
    );
    expect(policies).toHaveLength(1);
    const statements = policies[0]?.Properties.PolicyDocument.Statement as Record<string, unknown>[];
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sns:Publish',
        Principal: { Service: 'events.amazonaws.com' },
        Resource: { Ref: topicId },
      }),
    );
    expect(statements).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    // CloudWatch alarms publish to a topic of the same account without a policy statement.
  });

  it('the standalone stack outputs the topic to subscribe to', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.AlarmTopicArn?.Value).toEqual({ Ref: logicalId(stack.archive.alarmTopic, stack) });
  });

  it('are exposed on the construct', () => {
    expect(Object.keys(stack.archive.alarms)).toEqual(['deadLetters']);
    expect(stack.archive.failedRuns.node.defaultChild).toBeDefined();
  });

  describe('runMetrics: true (opt-in: 8 custom metrics and 2 more alarms)', () => {
    let opted: Template;
    let archive: JobDetailsArchive;
    beforeAll(() => {
      const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() }), 'S');
      archive = new JobDetailsArchive(s, 'A', { runMetrics: true });
      opted = Template.fromStack(s);
    });

    it('the functions publish the run figures', () => {
      const fns = Object.values(opted.findResources('AWS::Lambda::Function'));
      expect(fns.length).toBeGreaterThan(0);
      for (const fn of fns) expect(fn.Properties.Environment?.Variables?.JDA_RUN_METRICS).toBe('true');
    });

    it('adds the alarms the cost model counts, none on execution metrics (the rule covers aborts too)', () => {
      const namespaces = alarmMetrics(opted);
      expect(namespaces).toHaveLength(ARCHIVE_ALARMS + RUN_METRICS_ALARMS);
      expect(namespaces.filter((n) => n === 'JobDetailsArchive')).toHaveLength(RUN_METRICS_ALARMS);
      expect(namespaces).not.toContain('AWS/States');
      expect(Object.values(opted.findResources('AWS::Events::Rule'))).toHaveLength(1);
    });

    it("watch the quarantine metric the Report step publishes, under this construct's service name", () => {
      opted.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'JobDetailsArchive',
        MetricName: 'JobsQuarantined',
        Dimensions: [{ Name: 'service', Value: archive.serviceName }],
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
      });
    });

    it('watch the overdue erasure requests every Report publishes (one value a day, the latest count)', () => {
      opted.hasResourceProperties(
        'AWS::CloudWatch::Alarm',
        Match.objectLike({
          Namespace: 'JobDetailsArchive',
          MetricName: 'ErasureRequestsOverdue',
          Dimensions: [{ Name: 'service', Value: archive.serviceName }],
          Statistic: 'Maximum',
          Period: 86400,
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
          AlarmDescription: Match.stringLikeRegexp('erasureDeadlineDays'),
        }),
      );
      expect(Object.keys(archive.alarms).sort()).toEqual([
        'deadLetters',
        'erasureRequestsOverdue',
        'jobsQuarantined',
      ]);
    });
  });
});
