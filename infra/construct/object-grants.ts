import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { InvalidInputError } from '../../shared/errors';
import { type KeyPrefix, PREFIX } from './details-bucket';

/**
 * What a principal may do with the objects under one prefix. Exact actions (no `s3:GetObject*`-style
 * wildcards, whose expansion also depends on the host app's feature flags):
 * - get: GetObject (also HeadObject, and the ETag check of a conditional delete)
 * - list: ListBucket restricted to the prefix by `s3:prefix` — for listing, and so that a GET of a
 *   missing key answers 404 (NoSuchKey) rather than 403
 * - read: get + list
 * - put: PutObject (also Create/UploadPart/CompleteMultipartUpload)
 * - write: put + AbortMultipartUpload (for multipart uploads)
 * - delete: DeleteObject (also DeleteObjects, which checks it per key)
 * - restore: RestoreObject (Glacier parts)
 */
export type ObjectAccess = 'get' | 'list' | 'read' | 'put' | 'write' | 'delete' | 'restore';

const ACTIONS: Record<ObjectAccess, readonly string[]> = {
  get: ['s3:GetObject'],
  list: [],
  read: ['s3:GetObject'],
  put: ['s3:PutObject'],
  write: ['s3:PutObject', 's3:AbortMultipartUpload'],
  delete: ['s3:DeleteObject'],
  restore: ['s3:RestoreObject'],
};

/** The object ARN pattern a grant covers: the prefix, then `keys` (default every key below it). */
export const objectArn = (bucket: IBucket, prefix: KeyPrefix, keys = '*'): string =>
  bucket.arnForObjects(`${PREFIX[prefix]}${keys}`);

/**
 * Grants `access` to the objects matching `${prefix}${keys}`; listing (`list`, `read`) is always of
 * the whole prefix, the narrowest `s3:prefix` condition that still lets a listing of any group in it.
 */
export const grantObjects = (
  grantee: IGrantable,
  bucket: IBucket,
  prefix: KeyPrefix,
  access: readonly ObjectAccess[],
  keys = '*',
): Grant => {
  const actions = [...new Set(access.flatMap((a) => ACTIONS[a]))];
  let grant =
    actions.length > 0
      ? Grant.addToPrincipal({ grantee, actions, resourceArns: [objectArn(bucket, prefix, keys)] })
      : undefined;
  if (access.includes('read') || access.includes('list')) {
    const list = Grant.addToPrincipal({
      grantee,
      actions: ['s3:ListBucket'],
      resourceArns: [bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${PREFIX[prefix]}*`] } },
    });
    grant = grant ? grant.combine(list) : list;
  }
  if (!grant) throw new InvalidInputError('access', `no access given for ${prefix}`);
  // An imported bucket may be SSE-KMS; a created one is SSE-S3 (no key).
  const key = bucket.encryptionKey;
  if (key && actions.length > 0) {
    const writes = access.includes('write') || access.includes('put');
    const k = writes ? key.grantEncryptDecrypt(grantee) : key.grantDecrypt(grantee);
    grant = grant.combine(k);
  }
  return grant;
};

/**
 * Bucket-wide `s3:ListBucket` without a prefix condition, for principals that GET keys which may
 * legitimately be absent (a month index before its first commit, a job without platform data). S3
 * answers such a GET with 404 only when the caller may list the bucket; a GET carries no `s3:prefix`,
 * so the prefix-conditioned grant above does not count and S3 would answer 403 AccessDenied — which
 * our code rightly refuses to read as "absent". Listing reveals key names, never contents.
 */
export const grantMissingKeysAre404 = (grantee: IGrantable, bucket: IBucket): Grant =>
  Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [bucket.bucketArn] });
