import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { App, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { enableNag } from '../../infra/construct/enable-nag';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { ArchiveStorageClass } from '../../infra/construct/props';
import { camelStep } from '../../infra/construct/step-names';
import { ENV } from '../../shared/config';
import {
  ANY_KEY,
  listPrefixes,
  logicalId,
  objectAccess,
  roleIdOf,
  statementsOfRole,
  tableAccess,
  useOutdirs,
} from './template-helpers';

/**
 * The construct dropped into an existing estate: an imported table and bucket (cdk-nag on), and a
 * bucket owned elsewhere in the same app (lifecycle rules added to it; the grant* methods).
 * Two apps, each synthesized once, without bundling.
 */
const IMPORTED_TABLE_ARN =
  'arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/prod-EcomIndexerJobsTable';
const IMPORTED_BUCKET_ARN = 'arn:<AWS::Partition>:s3:::prod-job-details';

let imported: { stack: Stack; archive: JobDetailsArchive; template: Template; nagError: unknown };
let owned: {
  stack: Stack;
  archive: JobDetailsArchive;
  template: Template;
  bucket: Bucket;
  reader: Role;
  writer: Role;
};

const outdir = useOutdirs();

beforeAll(() => {
  {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() });
    enableNag(app);
    const stack = new Stack(app, 'Imported');
    const archive = new JobDetailsArchive(stack, 'Archive', {
      table: TableV2.fromTableAttributes(stack, 'Jobs', {
        tableName: 'prod-EcomIndexerJobsTable',
        grantIndexPermissions: true,
      }),
      bucket: Bucket.fromBucketName(stack, 'Details', 'prod-job-details'),
      maxConcurrency: 25,
      schedule: { expression: 'cron(30 1 ? * MON-FRI *)', timeZone: 'Europe/Berlin', enabled: false },
      alarmTopic: Topic.fromTopicArn(stack, 'Pager', 'arn:aws:sns:us-east-1:111111111111:pager'),
      stepMemoryMb: { archiveBatch: 3008 },
    });
    let nagError: unknown;
    try {
      app.synth();
    } catch (err) {
      nagError = err;
    }
    imported = {
      stack,
      archive,
      template: nagError ? (undefined as never) : Template.fromStack(stack),
      nagError,
    };
  }
  {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() });
    const stack = new Stack(app, 'Owned');
    const bucket = new Bucket(stack, 'TheirBucket');
    const archive = new JobDetailsArchive(stack, 'Archive', {
      bucket,
      archiveStorageClass: ArchiveStorageClass.GLACIER,
      transitionAfterDays: 0,
      transitionMinimumSize: Size.bytes(1), // every part moves
      // An alarm action alone (no alarmTopic): failed runs cannot reach it (they are events, not alarms).
      alarmAction: new SnsAction(new Topic(stack, 'Ops')),
    });
    const reader = new Role(stack, 'ForensicApi', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    });
    const writer = new Role(stack, 'Indexer', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    archive.grantRead(reader);
    archive.grantWrite(writer);
    owned = { stack, archive, template: Template.fromStack(stack), bucket, reader, writer };
  }
});

describe('with an imported table and bucket', () => {
  it('passes cdk-nag AwsSolutions', () => {
    expect(imported.nagError).toBeUndefined();
  });

  it('creates neither a table nor a bucket, and points the functions at the existing ones', () => {
    imported.template.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
    imported.template.resourceCountIs('AWS::DynamoDB::Table', 0);
    imported.template.resourceCountIs('AWS::S3::Bucket', 0);
    imported.template.allResourcesProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          [ENV.bucket]: 'prod-job-details',
          [ENV.table]: 'prod-EcomIndexerJobsTable',
        }),
      },
    });
  });

  it('scopes permissions to the imported ARNs', () => {
    const st = (step: 'plan' | 'archive-batch') =>
      statementsOfRole(
        imported.template,
        roleIdOf(imported.archive.functions[camelStep(step)], imported.stack),
      );
    expect(tableAccess(st('plan'))).toEqual({
      [`${IMPORTED_TABLE_ARN}/index/GSI_JobsByStatus_v2`]: ['dynamodb:Query'],
      // The watermark's retry list, read by key.
      [IMPORTED_TABLE_ARN]: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
    });
    expect(tableAccess(st('archive-batch'))).toEqual({
      [IMPORTED_TABLE_ARN]: ['dynamodb:BatchGetItem', 'dynamodb:Query'],
    });
    expect(Object.keys(objectAccess(st('archive-batch'), IMPORTED_BUCKET_ARN)).sort()).toEqual([
      'job-details-cold/',
      'job-details-index/',
      'job-details-index/*/*/docs/',
      'job-details-index/*/*/index.json',
      'job-details-index/*/*/pending/',
      'job-details-runs/',
      'job-details-state/',
      'job-details/',
    ]);
  });

  it('warns that lifecycle rules must be added to the imported bucket', () => {
    Annotations.fromStack(imported.stack).hasWarning(
      '/Imported/Archive',
      Match.stringLikeRegexp('add detailsLifecycleRules'),
    );
  });

  it('applies the schedule, concurrency, memory and alarm topic props', () => {
    imported.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(30 1 ? * MON-FRI *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      State: 'DISABLED',
    });
    const [machine] = Object.values(imported.template.findResources('AWS::StepFunctions::StateMachine'));
    expect(JSON.stringify(machine?.Properties.DefinitionString)).toContain('\\"MaxConcurrency\\":25');
    const fnId = logicalId(imported.archive.functions.archiveBatch, imported.stack);
    expect(imported.template.findResources('AWS::Lambda::Function')[fnId]?.Properties.MemorySize).toBe(3008);
    const alarms = Object.values(imported.template.findResources('AWS::CloudWatch::Alarm'));
    // The default alarm, on a free metric: the schedule's dead letters.
    expect(alarms).toHaveLength(1);
    for (const a of alarms)
      expect(a.Properties.AlarmActions).toEqual(['arn:aws:sns:us-east-1:111111111111:pager']);
    imported.template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it("publishes failed runs to the imported topic through the rule's own role (its policy is not ours)", () => {
    const rules = Object.values(imported.template.findResources('AWS::Events::Rule'));
    expect(rules).toHaveLength(1);
    const [target] = (rules[0]?.Properties.Targets ?? []) as {
      Arn: unknown;
      RoleArn: { 'Fn::GetAtt': [string, string] };
    }[];
    expect(target?.Arn).toBe('arn:aws:sns:us-east-1:111111111111:pager');
    const roleId = target?.RoleArn['Fn::GetAtt'][0] as string;
    expect(statementsOfRole(imported.template, roleId)).toEqual([
      { effect: 'Allow', actions: ['sns:Publish'], resources: ['arn:aws:sns:us-east-1:111111111111:pager'] },
    ]);
    const role = imported.template.findResources('AWS::IAM::Role')[roleId];
    expect(JSON.stringify(role?.Properties.AssumeRolePolicyDocument)).toContain('events.amazonaws.com');
  });
});

describe('with a bucket owned elsewhere in the app', () => {
  it('with only an alarmAction: the alarms notify it and the own topic, failed runs go to the own topic, synth warns', () => {
    const ownTopic = { Ref: logicalId(owned.archive.alarmTopic, owned.stack) };
    const ops = { Ref: logicalId(owned.stack.node.findChild('Ops'), owned.stack) };
    const [alarm] = Object.values(owned.template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarm?.Properties.AlarmActions).toEqual([ownTopic, ops]);
    const [rule] = Object.values(owned.template.findResources('AWS::Events::Rule'));
    expect(rule?.Properties.Targets).toEqual([expect.objectContaining({ Arn: ownTopic })]);
    Annotations.fromStack(owned.stack).hasWarning(
      '/Owned/Archive',
      Match.stringLikeRegexp('alarmAction notifies the CloudWatch alarms only'),
    );
  });

  it('adds the lifecycle rules to it: Glacier FR on day 0, small parts included (transitionMinimumSize 1 byte)', () => {
    const bucket = owned.template.findResources('AWS::S3::Bucket')[logicalId(owned.bucket, owned.stack)];
    const rules = bucket?.Properties.LifecycleConfiguration.Rules as Record<string, unknown>[];
    expect(rules).toContainEqual(
      expect.objectContaining({
        Prefix: 'job-details-cold/',
        ObjectSizeGreaterThan: 1,
        Transitions: [{ StorageClass: 'GLACIER', TransitionInDays: 0 }],
      }),
    );
    expect(rules.map((r) => r.Id).sort()).toEqual([
      'abort-incomplete-multipart-uploads',
      'archive-parts-to-cold-storage',
      'expire-run-scratch',
    ]);
  });

  it('grantRead: objects of job-details/, -cold/ and -index/, restore of parts, 404 for missing keys, table reads', () => {
    const bucketArn = `<${logicalId(owned.bucket, owned.stack)}.Arn>`;
    const st = statementsOfRole(owned.template, logicalId(owned.reader, owned.stack));
    expect(objectAccess(st, bucketArn)).toEqual({
      'job-details/': ['s3:GetObject'],
      'job-details-cold/': ['s3:GetObject', 's3:RestoreObject'],
      'job-details-index/': ['s3:GetObject'],
    });
    // ANY_KEY: a reader GETs month indexes and platform data that may not exist; S3 answers 404
    // for those only to a caller that may list the bucket.
    expect(listPrefixes(st, bucketArn)).toEqual([
      ANY_KEY,
      'job-details-cold/*',
      'job-details-index/*',
      'job-details/*',
    ]);
    const tableArn = `<${logicalId(owned.archive.table, owned.stack)}.Arn>`;
    const table = tableAccess(st);
    expect(table[tableArn]).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    expect(table[tableArn]).not.toContain('dynamodb:PutItem');
  });

  it('grantWrite: PutObject on job-details/ only, table read/write', () => {
    const bucketArn = `<${logicalId(owned.bucket, owned.stack)}.Arn>`;
    const st = statementsOfRole(owned.template, logicalId(owned.writer, owned.stack));
    expect(objectAccess(st, bucketArn)).toEqual({
      'job-details/': ['s3:AbortMultipartUpload', 's3:PutObject'],
    });
    expect(listPrefixes(st, bucketArn)).toEqual([]);
    const tableArn = `<${logicalId(owned.archive.table, owned.stack)}.Arn>`;
    expect(tableAccess(st)[tableArn]).toEqual(
      expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']),
    );
  });
});

test('importing the construct does not load cdk-nag (its acknowledgments use aws-cdk-lib alone)', () => {
  const script = [
    "require('tsx/cjs');",
    "require('./infra/construct/job-details-archive');",
    "process.stdout.write(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('/node_modules/cdk-nag/'))));",
  ].join('\n');
  const r = spawnSync(process.execPath, ['-e', script], {
    cwd: resolve(__dirname, '../..'),
    encoding: 'utf8',
  });
  expect(r.status).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual([]);
});
