import { Aws, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  type IBucket,
  type LifecycleRule,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { INDEX_RETENTION_EXTRA_DAYS, RUNS_EXPIRE_DAYS, retentionDays } from '../../shared/settings';
import { transitionBreakEvenBytes } from '../cli/transition-threshold';
import { acknowledge } from './nag';
import type { ArchiveStorageClass } from './props';

/** Key prefixes of the one bucket (docs/archive-format.md, "Data layout"); IAM and lifecycle rules are scoped by them. */
export const PREFIX = {
  hot: 'job-details/',
  cold: 'job-details-cold/',
  index: 'job-details-index/',
  runs: 'job-details-runs/',
  state: 'job-details-state/',
  erasure: 'job-details-erasure/',
} as const;
export type KeyPrefix = keyof typeof PREFIX;

/**
 * Where the details bucket this construct creates sends its server access logs, when asked to log
 * (off by default): a log bucket of its own keeping them `retentionDays`, or `bucket` (which keeps
 * them as long as its own lifecycle does).
 */
export type AccessLogTarget =
  | { readonly prefix: string; readonly retentionDays: number }
  | { readonly prefix: string; readonly bucket: IBucket };

const STORAGE_CLASS: Record<ArchiveStorageClass, StorageClass> = {
  GLACIER_IR: StorageClass.GLACIER_INSTANT_RETRIEVAL,
  GLACIER: StorageClass.GLACIER,
  DEEP_ARCHIVE: StorageClass.DEEP_ARCHIVE,
};

export interface DetailsBucketOptions {
  readonly archiveStorageClass: ArchiveStorageClass;
  readonly transitionAfterDays: number;
  /**
   * Parts larger than this (bytes) move to the class (the construct's `transitionMinimumSize`).
   * Absent: where a move pays for itself (transitionBreakEvenBytes) for the class, retention and
   * transitionAfterDays.
   */
  readonly transitionMinimumBytes?: number;
  /** 0: keep forever. */
  readonly retentionMonths: number;
  readonly removalPolicy?: RemovalPolicy;
}

/** Days a deleted or overwritten object lingers as a noncurrent version when the bucket is versioned. */
export const NONCURRENT_EXPIRE_DAYS = 7;

/**
 * On a versioned bucket the archiver's DeleteObject only adds a delete marker: without this every
 * archived hot object (and every rewritten index) would stay billed as a noncurrent version forever.
 * A second rule removes the delete markers left once their noncurrent versions are gone.
 */
export const noncurrentVersionRules = (): LifecycleRule[] => [
  { id: 'expire-noncurrent-versions', noncurrentVersionExpiration: Duration.days(NONCURRENT_EXPIRE_DAYS) },
  { id: 'remove-expired-delete-markers', expiredObjectDeleteMarker: true },
];

/**
 * Retention: parts and hot objects expire `retentionDays(months)` after they were written, month
 * indexes INDEX_RETENTION_EXTRA_DAYS later. Every commit rewrites its month's index, so an index is
 * never older than a part it names and the later horizon keeps it until its last part is gone. In
 * between, an index may name parts that expired: readers treat a missing part past the horizon as
 * expired by retention, not as damage (docs/retention.md). Hot objects of archived jobs are deleted
 * by the archiver long before; this rule only reaches the hot objects of jobs never archived.
 */
export const retentionRules = (months: number): LifecycleRule[] => {
  if (months === 0) return [];
  const days = retentionDays(months);
  return [
    { id: 'expire-archive-parts', prefix: PREFIX.cold, expiration: Duration.days(days) },
    {
      id: 'expire-month-indexes',
      prefix: PREFIX.index,
      expiration: Duration.days(days + INDEX_RETENTION_EXTRA_DAYS),
    },
    { id: 'expire-unarchived-hot-objects', prefix: PREFIX.hot, expiration: Duration.days(days) },
  ];
};

/**
 * Lifecycle of the details bucket. No transition touches `job-details/` (the archiver deletes hot
 * objects itself, after a verified commit) or `job-details-index/` (indexes must stay instantly
 * readable: the reader consults them before it knows whether a part needs a restore); with
 * `retentionMonths` all three expire (retentionRules).
 */
export const detailsLifecycleRules = (o: DetailsBucketOptions): LifecycleRule[] => [
  { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
  {
    id: 'archive-parts-to-cold-storage',
    prefix: PREFIX.cold,
    transitions: [
      {
        storageClass: STORAGE_CLASS[o.archiveStorageClass],
        transitionAfter: Duration.days(o.transitionAfterDays),
      },
    ],
    // Always a size filter of our own: without one S3 applies its default (no object under 128 KB
    // transitions, since Sept 2024); ours is where a move pays for itself (transitionBreakEvenBytes)
    // unless JobDetailsArchiveProps.transitionMinimumSize says otherwise.
    objectSizeGreaterThan:
      o.transitionMinimumBytes ??
      transitionBreakEvenBytes({
        storageClass: o.archiveStorageClass,
        retentionMonths: o.retentionMonths,
        transitionAfterDays: o.transitionAfterDays,
      }),
  },
  { id: 'expire-run-scratch', prefix: PREFIX.runs, expiration: Duration.days(RUNS_EXPIRE_DAYS) },
  ...retentionRules(o.retentionMonths),
];

/**
 * The details bucket, logging its server access to `logs`: nowhere (null, the default: no logging
 * configuration), a log bucket created here (its records expire after `retentionDays`; it is
 * returned) or a bucket given (e.g. a central log bucket, none created; `logPolicyAdded` false when
 * it is imported and its policy could not take the statement).
 * Versioning stays off on purpose: parts are immutable (new data → new part key), and when the
 * archiver deletes a hot object after a verified commit, that object must really be gone, not linger
 * as a billed noncurrent version (the noncurrent-version rules still apply should someone turn
 * versioning on later).
 */
export const createDetailsBucket = (
  scope: Construct,
  o: DetailsBucketOptions,
  logs: AccessLogTarget | null,
): { bucket: Bucket; logsBucket?: Bucket; logPolicyAdded: boolean } => {
  const logsBucket =
    logs === null || 'bucket' in logs
      ? undefined
      : new Bucket(scope, 'AccessLogsBucket', {
          encryption: BucketEncryption.S3_MANAGED, // log delivery cannot write to SSE-KMS targets
          blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
          enforceSSL: true,
          objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
          lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(logs.retentionDays) }],
          removalPolicy: o.removalPolicy,
        });
  const bucket = new Bucket(scope, 'DetailsBucket', {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    versioned: false,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    // The construct's own log bucket is in this subtree, where the bucket-policy flag is pinned.
    ...(logsBucket && logs
      ? { serverAccessLogsBucket: logsBucket, serverAccessLogsPrefix: logs.prefix }
      : {}),
    lifecycleRules: [...detailsLifecycleRules(o), ...noncurrentVersionRules()],
    removalPolicy: o.removalPolicy,
  });
  if (logs === null || !('bucket' in logs)) return { bucket, logsBucket, logPolicyAdded: true };
  // A bucket given: CDK would grant log delivery per the target's app flag
  // ('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', read where the target is defined, which the
  // construct cannot pin): without it, an ACL and ObjectWriter ownership forced onto the user's
  // bucket, or a synth error if it enforces bucket-owner ownership. A bucket-policy statement always.
  const cfn = bucket.node.defaultChild as CfnBucket;
  cfn.loggingConfiguration = {
    destinationBucketName: logs.bucket.bucketName,
    logFilePrefix: logs.prefix,
  };
  // The statement names the details bucket (aws:SourceArn), so no other bucket of the account can
  // log under the prefix. From another stack its ARN attribute would be a reference back to this
  // stack, and the two stacks would depend on each other (CDK leaves the condition out there): the
  // details bucket then gets a name both stacks compute alone (account, region, construct path).
  const otherStack = Stack.of(logs.bucket) !== Stack.of(bucket);
  const name = otherStack ? crossStackBucketName(bucket) : undefined;
  const { statementAdded } = logs.bucket.addToResourcePolicy(
    new PolicyStatement({
      principals: [new ServicePrincipal('logging.s3.amazonaws.com')],
      actions: ['s3:PutObject'],
      resources: [logs.bucket.arnForObjects(`${logs.prefix}*`)],
      conditions: {
        ArnLike: {
          'aws:SourceArn': name === undefined ? bucket.bucketArn : `arn:${Aws.PARTITION}:s3:::${name}`,
        },
        StringEquals: { 'aws:SourceAccount': Stack.of(bucket).account },
      },
    }),
  );
  if (name !== undefined && statementAdded) cfn.bucketName = name;
  return { bucket, logPolicyAdded: statementAdded };
};

/**
 * The details bucket's name when its access-log bucket is a bucket of another stack:
 * `jda-{account}-{region}-{16 hex of the construct path}` (at most 48 characters), from pseudo
 * parameters each stack resolves alone (S3 requires the log bucket in the same account and region),
 * so the log bucket's policy can name the details bucket without a cross-stack reference.
 */
const crossStackBucketName = (bucket: Bucket): string =>
  `jda-${Aws.ACCOUNT_ID}-${Aws.REGION}-${bucket.node.addr.slice(2, 18)}`;

/**
 * aws-cdk-lib renders `objectSizeGreaterThan` as a number where CloudFormation's schema says string;
 * CloudFormation coerces it, and its validator warns (W9003) about exactly that. The parts' rule
 * always carries the filter (`transitionMinimumSize`), so every details bucket given the rules is
 * acknowledged.
 */
export const acknowledgeSizeFilterCoercion = (bucket: Bucket): void => {
  acknowledge(
    bucket,
    'CloudFormation-Validate::W9003',
    'ObjectSizeGreaterThan number is coerced to string by design',
  );
};

/** Whether versioning is enabled on a bucket of this app (from its CloudFormation resource). */
export const isVersioned = (bucket: Bucket): boolean => {
  const cfn = bucket.node.defaultChild as CfnBucket | undefined;
  const v = cfn?.versioningConfiguration as CfnBucket.VersioningConfigurationProperty | undefined;
  return v?.status === 'Enabled';
};
