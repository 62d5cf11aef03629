import { CorruptObjectError, VerificationError } from '../../../errors';
import { getObjectBytes } from '../../../s3/objects';
import {
  INTENT_FORMAT,
  type PendingPart,
  parseStagingDoc,
  parseVerifiedPart,
  type VerifiedPart,
} from '../../format/staging';
import type { StepDeps } from '../context';

/**
 * The pending manifest as the archive step writes it: staging.ts `PendingPart` plus the ETag S3 gave
 * the uploaded part (known only after the upload, so PartBuilder cannot fill it in).
 */
export type StagedPart = PendingPart & { readonly etag: string };

export const readStagedPart = async (deps: StepDeps, key: string): Promise<StagedPart | null> => {
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) return null;
  const staged = parseStagingDoc(got.bytes, key);
  // Only the intent: the run that wrote it died before its upload finished.
  if (staged.format === INTENT_FORMAT) throw new VerificationError(key, 'the part was never fully uploaded');
  const doc = staged as StagedPart;
  if (typeof doc.etag !== 'string' || doc.etag === '')
    throw new CorruptObjectError(key, 'pending manifest has no part ETag');
  return doc;
};

export const readVerifiedPart = async (deps: StepDeps, key: string): Promise<VerifiedPart | null> => {
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  return got ? parseVerifiedPart(got.bytes, key) : null;
};
