import type { S3Client } from '@aws-sdk/client-s3';
import { candidateBlocks, parseDocFilters } from '../archive/format/doc-filter';
import { docFilterKey } from '../archive/format/keys';
import { getObjectBytes } from '../s3/objects';

/**
 * Which blocks of a committed part may list a document: the numbers its document filters match, or
 * 'all' when the part has no filters (built before them: it must be read whole). The one place that
 * knows where filters are stored, so redaction does not care whether they are a sidecar object or
 * part of the month index.
 */
export const partCandidates = async (
  t: { readonly s3: S3Client; readonly bucket: string },
  at: { readonly shopId: string; readonly month: string; readonly part: string },
  docId: string,
): Promise<number[] | 'all'> => {
  const key = docFilterKey(at.shopId, at.month, at.part);
  const got = await getObjectBytes(t.s3, t.bucket, key);
  if (!got) return 'all';
  return candidateBlocks(parseDocFilters(got.bytes, key), docId);
};

/** Where a part's filters are written when a redacted copy replaces it. */
export const partFiltersKey = (shopId: string, month: string, part: string): string =>
  docFilterKey(shopId, month, part);
