/**
 * A CDK app as a new user writes it against the installed package: CommonJS (`.cts`, the `require`
 * side of the exports), the construct dropped onto an imported TableV2 and Bucket, cdk-nag on.
 * Synthesizes into argv[2], asserts the template, prints what it found.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { JobDetailsArchive } from 'job-details-archive/cdk';
import { enableNag } from 'job-details-archive/cdk/nag';

const outdir = process.argv[2];
if (!outdir) throw new Error('usage: cdk-app.cjs OUTDIR');

const app = new App({ outdir });
enableNag(app); // any unacknowledged finding makes synth throw
const stack = new Stack(app, 'Indexer', { env: { account: '111111111111', region: 'eu-west-1' } });
const archive = new JobDetailsArchive(stack, 'Archive', {
  table: TableV2.fromTableAttributes(stack, 'Jobs', { tableName: 'prod-jobs', grantIndexPermissions: true }),
  bucket: Bucket.fromBucketName(stack, 'Details', 'prod-job-details'),
  olderThanDays: 45,
});
const assembly = app.synth();
const template = Template.fromStack(stack);

// Imported, not created.
template.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
template.resourceCountIs('AWS::DynamoDB::Table', 0);
template.resourceCountIs('AWS::S3::Bucket', 0);
// One function per step (plan, archive-batch, tally, report, forget, redact) on the package's prebuilt bundle.
template.resourcePropertiesCountIs(
  'AWS::Lambda::Function',
  {
    Handler: Match.stringLikeRegexp('^[a-z-]+\\.handler$'),
    Runtime: 'nodejs24.x',
    Architectures: ['arm64'],
    Environment: { Variables: Match.objectLike({ ECOM_JOBS_TABLE: 'prod-jobs', JDA_OLDER_THAN_DAYS: '45' }) },
  },
  6,
);
template.hasResourceProperties('AWS::StepFunctions::StateMachine', { DefinitionString: Match.anyValue() });
template.hasResourceProperties('AWS::Scheduler::Schedule', { State: 'ENABLED' });

const bundles = readdirSync(assembly.directory).filter(
  (d) => d.startsWith('asset.') && existsSync(join(assembly.directory, d, 'plan.mjs')),
);
process.stdout.write(
  `${JSON.stringify({
    stack: stack.stackName,
    functions: Object.keys(archive.functions).sort(),
    bundledAssets: bundles.length,
    stateMachine: stack.resolve(archive.stateMachine.stateMachineName) !== undefined,
  })}\n`,
);
