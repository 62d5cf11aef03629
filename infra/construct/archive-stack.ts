import { App, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { InvalidInputError } from '../../shared/errors';
import { JobDetailsArchive } from './job-details-archive';
import { lifecycleRulesData } from './lifecycle-data';
import type { JobDetailsArchiveProps } from './props';

export const ARCHIVE_STACK_NAME = 'JobDetailsArchive';

export interface ArchiveStackProps extends StackProps {
  /** Props of the one construct in the stack (its `table` and `bucket` win over the names below). */
  readonly archive?: JobDetailsArchiveProps;
  /**
   * Name of an existing jobs table to archive from (imported; it must have the keys and GSIs of
   * shared/jobs/schema.ts, which cannot be checked at synth for an imported table).
   * @default - a new table
   */
  readonly tableName?: string;
  /**
   * Name of an existing details bucket (imported). Its lifecycle rules must be applied where it is
   * defined: the stack outputs them as data (`DetailsBucketLifecycleRules`).
   * @default - a new bucket with its lifecycle rules
   */
  readonly bucketName?: string;
}

/**
 * A standalone deployment of the archiver (env-agnostic by default): its own table and bucket, or an
 * existing table and bucket named by `tableName` / `bucketName` (the app's `-c tableName=… -c
 * bucketName=…`), for teams that keep the archiver apart from the stack that owns them.
 */
export class ArchiveStack extends Stack {
  readonly archive: JobDetailsArchive;

  constructor(scope: Construct, id: string, props: ArchiveStackProps = {}) {
    super(scope, id, {
      description: 'job-details-archive: cold-tier archiver of per-job diagnostic data',
      ...props,
    });
    const tableName = checkName('tableName', props.tableName, /^[a-zA-Z0-9_.-]{3,255}$/);
    const bucketName = checkName('bucketName', props.bucketName, /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/);
    const archive: JobDetailsArchiveProps = {
      ...(tableName !== undefined
        ? {
            table: TableV2.fromTableAttributes(this, 'JobsTable', { tableName, grantIndexPermissions: true }),
          }
        : {}),
      ...(bucketName !== undefined
        ? { bucket: Bucket.fromBucketName(this, 'DetailsBucket', bucketName) }
        : {}),
      ...props.archive,
    };
    this.archive = new JobDetailsArchive(this, 'Archive', archive);
    new CfnOutput(this, 'AlarmTopicArn', {
      description:
        'Failed, timed-out and aborted runs (EventBridge events) and the alarms notify this SNS topic: subscribe a person to it',
      value: this.archive.alarmTopic.topicArn,
    });
    if (!(this.archive.bucket instanceof Bucket)) {
      new CfnOutput(this, 'DetailsBucketLifecycleRules', {
        description:
          'Lifecycle rules the imported details bucket needs (CloudFormation LifecycleConfiguration.Rules): apply them where the bucket is defined',
        value: JSON.stringify(lifecycleRulesData(this.archive.bucketLifecycleRules)),
      });
    }
  }
}

const checkName = (field: string, v: unknown, pattern: RegExp): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !pattern.test(v)) {
    throw new InvalidInputError(field, `expected a name matching ${pattern}, got ${JSON.stringify(v)}`);
  }
  return v;
};

export interface ArchiveAppOptions {
  /** Extra app context, e.g. `{ 'aws:cdk:bundling-stacks': [] }` to skip esbuild. */
  readonly context?: Record<string, unknown>;
  readonly archive?: JobDetailsArchiveProps;
  /** Run cdk-nag AwsSolutions during synth (any finding throws). @default true */
  readonly nag?: boolean;
  /** Cloud assembly directory. @default - `CDK_OUTDIR` (set by the CLI), else a new temp dir */
  readonly outdir?: string;
}

/** Context keys of the app (`cdk deploy -c tableName=… -c bucketName=…`): an existing table and bucket. */
export const CONTEXT_KEYS = ['tableName', 'bucketName'] as const;

/**
 * The app exactly as `cdk synth` builds it (infra/construct/app.ts); tests and the local runner build
 * it too. Context `tableName` / `bucketName` deploy onto an existing table and bucket.
 */
export const createArchiveApp = (opts: ArchiveAppOptions = {}): { app: App; stack: ArchiveStack } => {
  const app = new App({ context: opts.context, outdir: opts.outdir });
  // Loaded only when asked for: cdk-nag is a devDependency here and an optional peer of the package,
  // and the CLI's local runs synthesize without it.
  if (opts.nag ?? true) (require('./enable-nag') as typeof import('./enable-nag')).enableNag(app);
  const [tableName, bucketName] = CONTEXT_KEYS.map((k) => app.node.tryGetContext(k) as unknown);
  const stack = new ArchiveStack(app, ARCHIVE_STACK_NAME, {
    archive: opts.archive,
    ...(tableName !== undefined ? { tableName: tableName as string } : {}),
    ...(bucketName !== undefined ? { bucketName: bucketName as string } : {}),
  });
  return { app, stack };
};
