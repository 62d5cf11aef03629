import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { type KeyPrefix, PREFIX } from './details-bucket';

/**
 * What a principal may do with the objects under one prefix. Exact actions (no `s3:GetObject*`-style
 * wildcards, whose expansion also depends on the host app's feature flags):
 * - read: GetObject (also HeadObject) + ListBucket restricted to the prefix by `s3:prefix`
 * - write: PutObject + AbortMultipartUpload (large parts are multipart uploads)
 * - delete: DeleteObject (also DeleteObjects, which checks it per key)
 * - restore: RestoreObject (Glacier parts)
 */
export type ObjectAccess = 'read' | 'write' | 'delete' | 'restore';

const ACTIONS: Record<ObjectAccess, readonly string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject', 's3:AbortMultipartUpload'],
  delete: ['s3:DeleteObject'],
  restore: ['s3:RestoreObject'],
};

export const grantObjects = (
  grantee: IGrantable,
  bucket: IBucket,
  prefix: KeyPrefix,
  access: readonly ObjectAccess[],
): Grant => {
  const keys = PREFIX[prefix];
  let grant = Grant.addToPrincipal({
    grantee,
    actions: access.flatMap((a) => ACTIONS[a]),
    resourceArns: [bucket.arnForObjects(`${keys}*`)],
  });
  if (access.includes('read')) {
    grant = grant.combine(
      Grant.addToPrincipal({
        grantee,
        actions: ['s3:ListBucket'],
        resourceArns: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${keys}*`] } },
      }),
    );
  }
  // An imported bucket may be SSE-KMS; a created one is SSE-S3 (no key).
  const key = bucket.encryptionKey;
  if (key) {
    const writes = access.includes('write');
    const k = writes ? key.grantEncryptDecrypt(grantee) : key.grantDecrypt(grantee);
    grant = grant.combine(k);
  }
  return grant;
};
