import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type LifecycleRule,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { ArchiveStorageClass } from './job-details-archive';
import { acknowledge } from './nag';

/** Key prefixes of the one bucket (README "S3 key layout"); IAM and lifecycle rules are scoped by them. */
export const PREFIX = {
  hot: 'job-details/',
  cold: 'job-details-cold/',
  index: 'job-details-index/',
  runs: 'job-details-runs/',
  state: 'job-details-state/',
} as const;
export type KeyPrefix = keyof typeof PREFIX;

/** Run scratch (planned job lists, page results, reports) is only needed for a while after the run. */
export const RUNS_EXPIRE_DAYS = 30;
const ACCESS_LOGS_EXPIRE_DAYS = 365;

const STORAGE_CLASS: Record<ArchiveStorageClass, StorageClass> = {
  GLACIER_IR: StorageClass.GLACIER_INSTANT_RETRIEVAL,
  GLACIER: StorageClass.GLACIER,
  DEEP_ARCHIVE: StorageClass.DEEP_ARCHIVE,
};

export interface DetailsBucketOptions {
  readonly archiveStorageClass: ArchiveStorageClass;
  readonly transitionAfterDays: number;
  readonly transitionSmallObjects: boolean;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * Lifecycle of the details bucket. Nothing touches `job-details/` (the archiver deletes hot objects
 * itself, after a verified commit) or `job-details-index/` (indexes must stay instantly readable: the
 * reader consults them before it knows whether a part needs a restore).
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
    // Since Sept 2024 S3 does not transition objects < 128 KB unless a rule has its own size filter.
    // A custom filter (> 1 byte) opts small parts in; see JobDetailsArchiveProps.transitionSmallObjects.
    ...(o.transitionSmallObjects ? { objectSizeGreaterThan: 1 } : {}),
  },
  { id: 'expire-run-scratch', prefix: PREFIX.runs, expiration: Duration.days(RUNS_EXPIRE_DAYS) },
];

/**
 * The details bucket and the bucket that receives its server access logs. Versioning stays off on
 * purpose: parts are immutable (new data → new part key), and when the archiver deletes a hot object
 * after a verified commit, that object must really be gone, not linger as a billed noncurrent version.
 */
export const createDetailsBucket = (
  scope: Construct,
  o: DetailsBucketOptions,
): { bucket: Bucket; logsBucket: Bucket } => {
  const logsBucket = new Bucket(scope, 'AccessLogsBucket', {
    encryption: BucketEncryption.S3_MANAGED, // log delivery cannot write to SSE-KMS targets
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(ACCESS_LOGS_EXPIRE_DAYS) }],
    removalPolicy: o.removalPolicy,
  });
  const bucket = new Bucket(scope, 'DetailsBucket', {
    encryption: BucketEncryption.S3_MANAGED,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    versioned: false,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    serverAccessLogsBucket: logsBucket,
    serverAccessLogsPrefix: 'details-bucket/',
    lifecycleRules: detailsLifecycleRules(o),
    removalPolicy: o.removalPolicy,
  });
  return { bucket, logsBucket };
};

/**
 * aws-cdk-lib renders `objectSizeGreaterThan` as a number where CloudFormation's schema says string;
 * CloudFormation coerces it, and its validator warns (W9003) about exactly that.
 */
export const acknowledgeSizeFilterCoercion = (bucket: Bucket): void => {
  acknowledge(
    bucket,
    'CloudFormation-Validate::W9003',
    'ObjectSizeGreaterThan number is coerced to string by design',
  );
};
