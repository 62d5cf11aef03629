import {
  type ByteRange,
  type IndexedJob,
  jobEntries,
  type MonthIndex,
  parseMonthIndexKey,
  parsePartKey,
  parseSharedIndexKey,
  parseSharedPartKey,
  partByName,
} from '../archive/format';
import { CorruptObjectError } from '../errors';

/**
 * Pure choices over month indexes: which entries belong to the job, in what order, which one holds
 * the platform data, and whether the hot prefix still needs reading.
 */

/** One archival of the job: the index that records it and the part that holds it. */
export interface ArchiveEntry {
  readonly month: string;
  readonly indexKey: string;
  readonly partKey: string;
  /** Position in the month's entry list for the job (commit order within the month). */
  readonly position: number;
  readonly entry: IndexedJob;
}

const rangeInside = (r: ByteRange, size: unknown): boolean =>
  typeof size === 'number' &&
  Number.isSafeInteger(r.offset) &&
  Number.isSafeInteger(r.length) &&
  r.offset >= 0 &&
  r.length > 0 &&
  r.offset + r.length <= size;

/**
 * The job's entries in one month index, each tied to its part's key: those the index holds, and
 * `settled`, the entries of settled parts built from their records (archive-reads.ts readSettled),
 * in the order of the parts (commit order). The index must be the one at `indexKey` (same shop and
 * month) and every range must lie inside its part; anything else is a CorruptObjectError naming the
 * index, so a damaged index never makes us read another shop's bytes.
 */
export const entriesFromIndex = (
  index: MonthIndex,
  at: { indexKey: string; shopId: string; month: string },
  jobId: string,
  settled: readonly IndexedJob[] = [],
): ArchiveEntry[] => {
  const { indexKey, shopId, month } = at;
  if (index.shop_id !== shopId || index.month !== month) {
    throw new CorruptObjectError(indexKey, `index names shop ${index.shop_id} month ${index.month}`);
  }
  const ordinal = (e: IndexedJob) => index.parts.findIndex((p) => p.name === e.part);
  const all =
    settled.length === 0
      ? jobEntries(index.jobs, jobId)
      : [...jobEntries(index.jobs, jobId), ...settled].sort((a, b) => ordinal(a) - ordinal(b));
  return all.map((entry, position) => {
    const what = `entry ${position} of job ${jobId}`;
    const part = partByName(index, entry.part);
    // A shared part (shared-index.ts) holds this shop's records as one segment of it.
    const shared = part?.shared ? parseSharedPartKey(part.key) : null;
    const parsed = part ? (shared ? { ...shared, shopId } : parsePartKey(part.key)) : null;
    if (
      !part ||
      parsed?.shopId !== shopId ||
      parsed.partName !== entry.part ||
      (shared && shared.month !== month)
    ) {
      throw new CorruptObjectError(indexKey, `${what}: part ${entry.part} is not a part of this shop`);
    }
    if (!rangeInside(entry, part.size)) {
      throw new CorruptObjectError(indexKey, `${what}: needs a byte range inside its part`);
    }
    const pd = entry.platform_data;
    if (pd !== null && (typeof pd !== 'object' || !rangeInside(pd, part.size))) {
      throw new CorruptObjectError(indexKey, `${what}: platform_data needs a byte range inside its part`);
    }
    return { month, indexKey, partKey: part.key, position, entry };
  });
};

const instant = (iso: unknown): number => (typeof iso === 'string' ? Date.parse(iso) : Number.NaN);

/** Oldest archival first: by commit time, then month, then position within the month. */
export const orderEntries = (entries: Iterable<ArchiveEntry>): ArchiveEntry[] =>
  [...entries].sort(
    (a, b) =>
      // NaN (an unparseable time) falls through to the next key rather than poisoning the sort.
      instant(a.entry.committed_at) - instant(b.entry.committed_at) ||
      (a.month < b.month ? -1 : a.month > b.month ? 1 : 0) ||
      a.position - b.position,
  );

/**
 * The newest archival that carries platform data. A later archival without any (a retry that wrote
 * none) does not erase what the earlier run recorded.
 */
export const latestWithPlatformData = (ordered: readonly ArchiveEntry[]): ArchiveEntry | undefined =>
  ordered.findLast((e) => e.entry.platform_data !== null);

const sameInstant = (a: string, b: string): boolean => {
  const ta = Date.parse(a);
  return !Number.isNaN(ta) && ta === Date.parse(b);
};

/**
 * Where a completion stands in the archive, given the job's entries (oldest first). Readers always
 * read the hot prefix first (see JobDetailsReader); this names what they find there:
 * - `skip`: the newest archival is of this very completion and its hot objects were deleted. New
 *   flushes normally mean a retry, which changes `completed_at`: anything hot now was written after
 *   that archival (a late flush), is merged in, and is named in the read's warnings.
 * - `read`: this completion is archived but not yet deleted. Hot objects are the archived ones (or
 *   copies); one that vanishes between listing and GET was deleted *because* this entry covers it.
 * - `read-then-recheck`: this completion is not archived (yet); what is hot is its only copy.
 */
export type HotPlan = 'skip' | 'read' | 'read-then-recheck';

export const hotPlan = (ordered: readonly ArchiveEntry[], completedAt: string): HotPlan => {
  const newest = ordered[ordered.length - 1];
  if (!newest || !sameInstant(newest.entry.completed_at, completedAt)) return 'read-then-recheck';
  return newest.entry.deleted_at !== null && newest.entry.deleted_at !== undefined ? 'skip' : 'read';
};

/**
 * Months that have an index, from a listing of the shop's index prefix (which also holds pending
 * manifests): newest first, not older than `from`, at most `limit`.
 */
export const newestIndexMonths = (
  keys: Iterable<string>,
  shopId: string,
  limit: number,
  from: string | null = null,
): string[] => {
  const months = new Set<string>();
  for (const key of keys) {
    const parsed = parseMonthIndexKey(key);
    if (parsed && parsed.shopId === shopId && (from === null || parsed.month >= from))
      months.add(parsed.month);
    // A month with a shared index may hold the shop packed (read as own index → shared view).
    const shared = parseSharedIndexKey(key);
    if (shared && (from === null || shared >= from)) months.add(shared);
  }
  return [...months].sort().reverse().slice(0, limit);
};
