import type { S3Client } from '@aws-sdk/client-s3';
import type { IndexedPart } from '../archive/format';
import { documentCandidates, partCandidates } from '../reader/doc-candidates';
import { readerSettings } from '../reader/query';
import { newReadContext } from '../reader/s3-context';

/**
 * The committed parts of a shop-month that may list a document, by name: its filters member matches,
 * or it lies in a class that needs a restore to read them (the redaction restores and checks it).
 * Behind the reader's documentCandidates, so redaction reads the filters where search does.
 */
export const partsToCheck = async (
  t: { readonly s3: S3Client; readonly bucket: string },
  shopId: string,
  month: string,
  docId: string,
): Promise<ReadonlySet<string>> => {
  const ctx = newReadContext(t.s3, t.bucket, readerSettings({}));
  const parts = (await documentCandidates(ctx, shopId, month, docId)) ?? [];
  return new Set(parts.filter((p) => p.filters === 'cold' || p.blocks.length > 0).map((p) => p.part));
};

/** Whether one committed part may list the document (its filters match, or it needs a restore to tell). */
export const partMayList = async (
  t: { readonly s3: S3Client; readonly bucket: string },
  shopId: string,
  part: IndexedPart,
  docId: string,
): Promise<boolean> => {
  const p = await partCandidates(newReadContext(t.s3, t.bucket, readerSettings({})), shopId, part, docId);
  return p.filters === 'cold' || p.blocks.length > 0;
};
