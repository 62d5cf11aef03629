import type { S3Client } from '@aws-sdk/client-s3';
import {
  documentListings,
  parseMonthIndex,
  parseMonthIndexKey,
  parseSharedIndex,
  SHARED_INDEX_PREFIX,
} from '../../../shared/archive/format';
import { JobDetailsReader } from '../../../shared/reader';
import { getObjectBytes, type ListedObject } from '../../../shared/s3/objects';
import { type BenchJob, prng, shopMonth } from './workload';

/**
 * Find by document on a shop with `months` archived months (the design mix: doc ids never repeat):
 * S3 requests, bytes and false-positive blocks per search, for documents that are there (one per
 * sampled job) and documents that are not.
 */
export interface SearchResult {
  readonly months: number;
  readonly jobs: number;
  readonly searches: number;
  /** Per search, averaged. */
  readonly requests: number;
  readonly bytes: number;
  readonly blocksRead: number;
  readonly falsePositiveBlocks: number;
  /** Absent documents: false-positive blocks per block whose filter was consulted. */
  readonly falsePositiveRate: number;
  readonly blocksPerSearch: number;
  /** Worst search's requests (its List included) beyond 2 per month + 1 per block read (0: within the bound). */
  readonly requestsOverBound: number;
  readonly missed: number;
  readonly filterBytes: number;
  readonly partBytes: number;
}

/**
 * Bytes of document filters at rest: each part's filters member (its last gzip member, in the part's
 * class), as the month indexes and shared indexes name them (`filters_bytes`).
 */
export const filterBytesAtRest = async (
  s3: S3Client,
  bucket: string,
  objects: readonly Pick<ListedObject, 'key' | 'size'>[],
): Promise<number> => {
  let total = 0;
  for (const o of objects) {
    if (o.key.startsWith(SHARED_INDEX_PREFIX) && o.key.endsWith('/shared.json')) {
      const got = await getObjectBytes(s3, bucket, o.key);
      if (!got) continue;
      for (const p of parseSharedIndex(got.bytes, o.key).parts) total += p.filters_bytes ?? 0;
      continue;
    }
    if (!parseMonthIndexKey(o.key)) continue;
    const got = await getObjectBytes(s3, bucket, o.key);
    if (!got) continue;
    for (const p of parseMonthIndex(got.bytes, o.key).parts) total += p.filters?.length ?? 0;
  }
  return total;
};

export const monthsBefore = (last: string, n: number): string[] => {
  const [y, m] = last.split('-').map(Number) as [number, number];
  return Array.from({ length: n }, (_, i) => {
    const d = new Date(Date.UTC(y, m - 1 - (n - 1 - i), 1));
    return d.toISOString().slice(0, 7);
  });
};

export function* searchShop(seed: number, shopId: string, months: readonly string[], jobsPerMonth: number) {
  for (const [i, month] of months.entries()) yield* shopMonth(seed + i, shopId, month, jobsPerMonth);
}

export const measureSearch = async (
  s3: S3Client,
  bucket: string,
  shopId: string,
  listed: readonly BenchJob[],
  sample: number,
  sizes: { filterBytes: number; partBytes: number; months: number },
): Promise<SearchResult> => {
  const reader = new JobDetailsReader(s3, bucket);
  const r = prng(sample * 7919 + listed.length);
  const withDocs = listed.filter((j) => j.flushes.length > 0);
  const present: { doc: string; jobId: string }[] = [];
  for (let i = 0; i < sample && withDocs.length > 0; i++) {
    const j = withDocs[r.int(0, withDocs.length - 1)] as BenchJob;
    const docs = j.flushes.flatMap((f) => documentListings(f).map((l) => l.doc_id));
    const doc = docs[r.int(0, docs.length - 1)];
    if (doc) present.push({ doc, jobId: j.jobId });
  }
  const absent = Array.from(
    { length: sample },
    (_, i) => `gid://shopify/Product/9${String(i).padStart(12, '0')}`,
  );
  const sum = {
    requests: 0,
    bytes: 0,
    blocksRead: 0,
    fp: 0,
    searches: 0,
    blocksFiltered: 0,
    absentFp: 0,
    absentBlocks: 0,
  };
  let missed = 0;
  let maxAllowed = 0;
  for (const [doc, want] of [
    ...present.map((p) => [p.doc, p.jobId] as const),
    ...absent.map((d) => [d, null] as const),
  ]) {
    const res = await reader.findDocument({ shopId, docId: doc });
    const p = res.provenance;
    sum.searches++;
    sum.requests += p.requests;
    sum.bytes += p.bytes;
    sum.blocksRead += p.blocksRead;
    sum.fp += p.falsePositiveBlocks;
    if (want !== null && !res.jobs.some((j) => j.jobId === want)) missed++;
    sum.blocksFiltered += p.blocksFiltered;
    if (want === null) {
      sum.absentFp += p.falsePositiveBlocks;
      sum.absentBlocks += p.blocksFiltered;
    }
    // The bound, the List included: 2 per month searched + 1 per block read.
    maxAllowed = Math.max(maxAllowed, p.requests - (2 * p.monthsSearched + p.blocksRead));
  }
  const n = Math.max(1, sum.searches);
  return {
    months: sizes.months,
    jobs: listed.length,
    searches: sum.searches,
    requests: sum.requests / n,
    bytes: Math.round(sum.bytes / n),
    blocksRead: sum.blocksRead / n,
    falsePositiveBlocks: sum.fp / n,
    falsePositiveRate: sum.absentFp / Math.max(1, sum.absentBlocks),
    blocksPerSearch: sum.blocksFiltered / n,
    requestsOverBound: maxAllowed,
    missed,
    filterBytes: sizes.filterBytes,
    partBytes: sizes.partBytes,
  };
};
