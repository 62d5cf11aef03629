import type { S3Client } from '@aws-sdk/client-s3';
import { isNamedError, VerificationError } from '../errors';
import { getObjectBytes } from '../s3/objects';
import {
  type ByteRange,
  blockRanges,
  decodeLine,
  type IndexedJob,
  inflateBlock,
  type MonthIndex,
} from './format';

/**
 * The jobs of a month's settled parts, from their records: a settled part keeps only its summary in
 * the index (month-index-settle.ts), so whoever must list or count its jobs one by one (audit's known
 * job ids, the demo's listing, tests) reads the part. Each job comes back as the entry it had before
 * the part settled, less what only entries held (its `objects_deleted`): the record's block, its
 * platform data's block, `completed_at` the record's, the part's commit and the summary's delete.
 *
 * One GET per settled part (the whole object). A part in a restore class (InvalidObjectState) is not
 * read: it is named in `unread` (never "no jobs"). A missing part is a VerificationError.
 */
const settledJobs = async (
  deps: { readonly s3: S3Client; readonly bucket: string },
  index: MonthIndex,
): Promise<{ jobs: Map<string, IndexedJob[]>; unread: string[] }> => {
  const jobs = new Map<string, IndexedJob[]>();
  const unread: string[] = [];
  for (const part of index.parts) {
    const s = part.settled;
    if (!s) continue;
    let got: Awaited<ReturnType<typeof getObjectBytes>>;
    try {
      got = await getObjectBytes(deps.s3, deps.bucket, part.key);
    } catch (err) {
      if (!isNamedError(err, 'InvalidObjectState')) throw err;
      unread.push(part.key);
      continue;
    }
    if (!got) throw new VerificationError(part.key, 'a settled part of the month index is missing');
    const ranges = blockRanges(s.block_bytes);
    const pdBlock = new Map<number, number>(s.dir_pd?.map(([n, pd]) => [n, pd]) ?? []);
    ranges.forEach((r, n) => {
      if (s.dir[n] === null) return;
      const where = `${part.key} bytes ${r.offset}-${r.offset + r.length - 1}`;
      const inflated = inflateBlock(got.bytes.subarray(r.offset, r.offset + r.length), where);
      const pd = ranges[pdBlock.get(n) ?? n] as ByteRange;
      for (let start = 0; start < inflated.length; ) {
        const end = inflated.indexOf(0x0a, start);
        if (end < 0) break;
        const { record } = decodeLine(
          inflated.subarray(start, end + 1),
          `${where} line ${start}`,
          index.shop_id,
        );
        start = end + 1;
        if (record.type !== 'job') continue;
        const entry: IndexedJob = {
          part: part.name,
          offset: r.offset,
          length: r.length,
          completed_at: record.job.completed_at,
          committed_at: part.committed_at,
          platform_data: record.platform_data_ref === null ? null : { ...pd, ref: record.platform_data_ref },
          sources: [],
          deleted_at: s.deleted_at,
          ...(s.deleted_by !== null ? { deleted_by: s.deleted_by } : {}),
        };
        jobs.set(record.job_id, [...(jobs.get(record.job_id) ?? []), entry]);
      }
    });
  }
  return { jobs, unread };
};

/**
 * The month index with its settled parts' jobs back as entries (settledJobs), merged with the
 * entries it holds in the parts' commit order: what the index and its parts say together, for
 * whoever must see every job one by one. Parts in a restore class are named in `unread`.
 */
export const expandSettled = async (
  deps: { readonly s3: S3Client; readonly bucket: string },
  index: MonthIndex,
): Promise<{ index: MonthIndex; unread: string[] }> => {
  if (!index.parts.some((p) => p.settled)) return { index, unread: [] };
  const { jobs: settled, unread } = await settledJobs(deps, index);
  const order = new Map(index.parts.map((p, i) => [p.name, i]));
  const jobs: Record<string, readonly IndexedJob[]> = {};
  const ids = new Set([...Object.keys(index.jobs), ...settled.keys()]);
  for (const id of ids) {
    const own = Object.hasOwn(index.jobs, id) ? (index.jobs[id] ?? []) : [];
    jobs[id] = [...own, ...(settled.get(id) ?? [])].sort(
      (a, b) => (order.get(a.part) ?? 0) - (order.get(b.part) ?? 0),
    );
  }
  return { index: { ...index, jobs }, unread };
};
