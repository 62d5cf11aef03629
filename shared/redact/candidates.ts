import type { S3Client } from '@aws-sdk/client-s3';
import { docFilterKey } from '../archive/format';
import { documentCandidates } from '../reader/doc-candidates';
import { readerSettings } from '../reader/query';
import { newReadContext } from '../reader/s3-context';

/**
 * The committed parts of a shop-month that may list a document, by name: true when its filters match
 * (or it has none and must be read whole). Behind the reader's documentCandidates, so redaction does
 * not care where filters are kept (the month index, or a sidecar of a part built before index@5).
 */
export const partsToCheck = async (
  t: { readonly s3: S3Client; readonly bucket: string },
  shopId: string,
  month: string,
  docId: string,
): Promise<ReadonlySet<string>> => {
  const ctx = newReadContext(t.s3, t.bucket, readerSettings({}));
  const parts = (await documentCandidates(ctx, shopId, month, docId)) ?? [];
  return new Set(parts.filter((p) => p.filters === 'none' || p.blocks.length > 0).map((p) => p.part));
};

/** A part's filters sidecar (parts built before index@5): deleted with the part it describes. */
export const partFiltersKey = (shopId: string, month: string, part: string): string =>
  docFilterKey(shopId, month, part);
