import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { enableNag } from '../../infra/construct/enable-nag';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { acknowledgedRules, expectTlsDeniedOnEveryBucket, logicalId, useOutdirs } from './template-helpers';

/**
 * Opting in to the S3 server access logs of the details bucket the construct creates (off by
 * default: construct.test.ts), and how long they stay: its own log bucket expiring them after
 * `accessLogsRetention`, or a bucket given (`serverAccessLogsBucket`: none created, its lifecycle
 * keeps them). cdk-nag AwsSolutions stays clean (S1: the details bucket logs either way, so its
 * acknowledgment for the unlogged default is gone). Each app is synthesized once, without bundling.
 */
const outdir = useOutdirs();

interface Built {
  stack: Stack;
  archive: JobDetailsArchive;
  template: Template;
  nagError: unknown;
}

/** One app with the nag plugin on, its one stack built by `build`. */
const synth = (build: (stack: Stack) => JobDetailsArchive): Built => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() });
  enableNag(app);
  const stack = new Stack(app, 'S');
  const archive = build(stack);
  let nagError: unknown;
  try {
    app.synth();
  } catch (err) {
    nagError = err;
  }
  return { stack, archive, template: nagError ? (undefined as never) : Template.fromStack(stack), nagError };
};

const loggingOf = (b: Built): Record<string, unknown> => {
  const details = b.template.findResources('AWS::S3::Bucket')[logicalId(b.archive.bucket, b.stack)];
  if (!details) throw new Error('details bucket not in the template');
  return details.Properties.LoggingConfiguration;
};

let own: Built;
let imported: Built;
let central: { template: Template; archive: Template; archiveStack: Stack; details: string };

beforeAll(() => {
  own = synth(
    (stack) =>
      new JobDetailsArchive(stack, 'Archive', {
        accessLogsRetention: Duration.days(30),
        serverAccessLogsPrefix: 'job-details-archive/',
      }),
  );
  imported = synth(
    (stack) =>
      new JobDetailsArchive(stack, 'Archive', {
        serverAccessLogsBucket: Bucket.fromBucketName(stack, 'Central', 'org-s3-access-logs'),
      }),
  );
  {
    // A central log bucket of the same app, in its own stack, that enforces bucket-owner ownership;
    // the app does not set '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy' (CDK would then have
    // granted log delivery by ACL, which such a bucket refuses).
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() });
    const logStack = new Stack(app, 'Logs');
    const logs = new Bucket(logStack, 'Central', { objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED });
    const archiveStack = new Stack(app, 'Archive');
    const archive = new JobDetailsArchive(archiveStack, 'Archive', { serverAccessLogsBucket: logs });
    app.synth();
    central = {
      template: Template.fromStack(logStack),
      archive: Template.fromStack(archiveStack),
      archiveStack,
      details: logicalId(archive.bucket, archiveStack),
    };
  }
});

describe('the construct’s own log bucket', () => {
  it('passes cdk-nag AwsSolutions, the details bucket logged (no S1 acknowledgment on it)', () => {
    expect(own.nagError).toBeUndefined();
    expect(acknowledgedRules(own.archive.bucket)['AwsSolutions-S1']).toBeUndefined();
  });

  it('expires the access logs after accessLogsRetention, under serverAccessLogsPrefix', () => {
    const logging = loggingOf(own) as { DestinationBucketName: { Ref: string }; LogFilePrefix: string };
    expect(logging.LogFilePrefix).toBe('job-details-archive/');
    const logBucket = own.template.findResources('AWS::S3::Bucket')[logging.DestinationBucketName.Ref];
    expect(logBucket?.Properties.LifecycleConfiguration.Rules).toEqual([
      { Id: 'expire-access-logs', ExpirationInDays: 30, Status: 'Enabled' },
    ]);
    own.template.resourceCountIs('AWS::S3::Bucket', 2);
  });

  it('lets only S3 log delivery for the details bucket write into it', () => {
    const logsId = (loggingOf(own) as { DestinationBucketName: { Ref: string } }).DestinationBucketName.Ref;
    const policy = Object.values(own.template.findResources('AWS::S3::BucketPolicy')).find(
      (p) => p.Properties.Bucket.Ref === logsId,
    );
    const allows = policy?.Properties.PolicyDocument.Statement.filter(
      (s: { Effect: string }) => s.Effect === 'Allow',
    );
    expect(allows).toEqual([
      expect.objectContaining({
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Condition: expect.objectContaining({
          ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [logicalId(own.archive.bucket, own.stack), 'Arn'] } },
        }),
      }),
    ]);
  });

  it('denies every request without TLS, on both buckets', () => {
    expectTlsDeniedOnEveryBucket(own.template, 2);
  });
});

describe('serverAccessLogsBucket', () => {
  it('imported: passes cdk-nag AwsSolutions (the details bucket logs to it; no S1 acknowledgment)', () => {
    expect(imported.nagError).toBeUndefined();
    expect(acknowledgedRules(imported.archive.bucket)['AwsSolutions-S1']).toBeUndefined();
  });

  it('imported: no log bucket is created; the details bucket logs to it under details-bucket/', () => {
    imported.template.resourceCountIs('AWS::S3::Bucket', 1);
    expect(loggingOf(imported)).toEqual({
      DestinationBucketName: 'org-s3-access-logs',
      LogFilePrefix: 'details-bucket/',
    });
  });

  it('imported: a synth warning names the policy statement its owner must add (its policy cannot be changed here)', () => {
    const annotations = Annotations.fromStack(imported.stack);
    annotations.hasWarning(
      '*',
      Match.stringLikeRegexp(
        'serverAccessLogsBucket\\) is imported.*logging\\.s3\\.amazonaws\\.com.*s3:PutObject on org-s3-access-logs/details-bucket/\\*.*aws:SourceAccount',
      ),
    );
    // CDK's own (which says nothing of what to add) is not raised: the construct grants by itself.
    expect(annotations.findWarning('*', Match.stringLikeRegexp('Unable to add necessary logging'))).toEqual(
      [],
    );
  });

  it('a Bucket of the app: its policy lets S3 log delivery of this account write under the prefix, by policy not ACL, whatever the app’s flag', () => {
    central.archive.resourceCountIs('AWS::S3::Bucket', 1);
    const details = central.archive.findResources('AWS::S3::Bucket')[central.details]?.Properties;
    expect(details?.LoggingConfiguration).toEqual({
      DestinationBucketName: { 'Fn::ImportValue': expect.stringMatching(/^Logs:ExportsOutputRefCentral/) },
      LogFilePrefix: 'details-bucket/',
    });
    const [bucket] = Object.values(central.template.findResources('AWS::S3::Bucket'));
    expect(bucket?.Properties.AccessControl).toBeUndefined();
    expect(bucket?.Properties.OwnershipControls).toEqual({
      Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }],
    });
    const [policy] = Object.values(central.template.findResources('AWS::S3::BucketPolicy'));
    expect(policy?.Properties.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Resource: {
          'Fn::Join': [
            '',
            [{ 'Fn::GetAtt': [expect.stringMatching(/^Central/), 'Arn'] }, '/details-bucket/*'],
          ],
        },
        // Only the details bucket may log there: its ARN from the name both stacks compute alone
        // (its ARN attribute would make the two stacks depend on each other).
        Condition: {
          ArnLike: {
            'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ...crossStackName]] },
          },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
    ]);
    // The details bucket has that very name.
    const arn = policy?.Properties.PolicyDocument.Statement[0].Condition.ArnLike['aws:SourceArn'];
    const arnJoin = (arn as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    expect(details?.BucketName).toEqual({
      'Fn::Join': ['', ['jda-', { Ref: 'AWS::AccountId' }, '-', { Ref: 'AWS::Region' }, arnJoin[6]]],
    });
    // No reference from the log stack back to the archive's: the stacks deploy in one order.
    expect(JSON.stringify(central.template.toJSON())).not.toMatch(/ImportValue/);
  });
});

/** `jda-{account}-{region}-{16 hex}`, as a Fn::Join list after `arn:{partition}`. */
const crossStackName = [
  ':s3:::jda-',
  { Ref: 'AWS::AccountId' },
  '-',
  { Ref: 'AWS::Region' },
  expect.stringMatching(/^-[0-9a-f]{16}$/),
];

describe('serverAccessLogsBucket in the same stack', () => {
  it('its policy names both the account and the details bucket (aws:SourceAccount and aws:SourceArn, as the S3 user guide’s statement)', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() });
    const stack = new Stack(app, 'One');
    const logs = new Bucket(stack, 'Logs', { objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED });
    const archive = new JobDetailsArchive(stack, 'Archive', { serverAccessLogsBucket: logs });
    const template = Template.fromStack(stack);
    const policy = Object.values(template.findResources('AWS::S3::BucketPolicy')).find(
      (p) => p.Properties.Bucket.Ref === logicalId(logs, stack),
    );
    expect(
      policy?.Properties.PolicyDocument.Statement.filter((s: { Effect: string }) => s.Effect === 'Allow'),
    ).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'logging.s3.amazonaws.com' },
        Action: 's3:PutObject',
        Resource: {
          'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(logs, stack), 'Arn'] }, '/details-bucket/*']],
        },
        Condition: {
          ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [logicalId(archive.bucket, stack), 'Arn'] } },
          StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        },
      },
    ]);
  });
});
