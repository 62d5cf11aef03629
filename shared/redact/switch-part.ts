import type { ByteRange, IndexedJob, IndexedPart, MonthIndex } from '../archive/format';

/**
 * Pure: the month index with part `oldName` replaced by its redacted copy. The new part has the same
 * members in the same order (redact-part.ts), so each entry keeps its block and platform-data block by
 * number and gets that member's new byte range (an entry holds no counts: the record has them). The part keeps
 * its place, run, commit time and counters; its name, key, size, ETag and filters are the new object's.
 * Returns null when the index no longer names `oldName` (already switched, or the part is gone).
 */
export interface PartSwitch {
  readonly oldName: string;
  readonly oldMembers: readonly number[];
  readonly part: Pick<IndexedPart, 'name' | 'key' | 'size' | 'etag'>;
  readonly newMembers: readonly number[];
  /** The new part's filters member (rebuilt from its redacted records); absent: it has none. */
  readonly filters?: ByteRange;
  /** Where the old / new members start in their object (a shop's segment of a shared part; else 0). */
  readonly oldBase?: number;
  readonly newBase?: number;
}

const ranges = (lengths: readonly number[], base = 0): ByteRange[] => {
  let at = base;
  return lengths.map((length) => {
    const r = { offset: at, length };
    at += length;
    return r;
  });
};

const withoutFilters = ({ filters: _f, ...p }: IndexedPart): IndexedPart => p;

export const switchPart = (index: MonthIndex, s: PartSwitch, at: string): MonthIndex | null => {
  const i = index.parts.findIndex((p) => p.name === s.oldName);
  const old = index.parts[i];
  if (!old) return null;
  if (s.oldMembers.length !== s.newMembers.length)
    throw new Error(`redact: ${s.oldMembers.length} members became ${s.newMembers.length}`);
  const before = ranges(s.oldMembers, s.oldBase);
  const after = ranges(s.newMembers, s.newBase);
  const blockAt = new Map(before.map((r, n) => [r.offset, n]));
  const moved = (r: ByteRange, what: string): ByteRange => {
    const n = blockAt.get(r.offset);
    const to = n === undefined ? undefined : after[n];
    if (!to)
      throw new Error(`redact: ${what} points at byte ${r.offset}, no member of ${s.oldName} starts there`);
    return to;
  };
  const jobs: Record<string, readonly IndexedJob[]> = {};
  for (const [jobId, entries] of Object.entries(index.jobs))
    jobs[jobId] = entries.map((e) => {
      if (e.part !== s.oldName) return e;
      return {
        ...e,
        part: s.part.name,
        ...moved(e, `job ${jobId}`),
        ...(e.platform_data
          ? {
              platform_data: {
                ...e.platform_data,
                ...moved(e.platform_data, `job ${jobId}'s platform data`),
              },
            }
          : {}),
      };
    });
  // A settled part's summary (no entries): same records in the same blocks, so the same directory;
  // each block's length is its new member's (the blocks still tile the part from byte 0).
  const settled = old.settled && {
    ...old.settled,
    block_bytes: ranges(old.settled.block_bytes).map((r, n) => {
      const to = moved(r, `block ${n} of the settled part`);
      return to.length;
    }),
  };
  const parts = index.parts.map((p, n) =>
    n === i
      ? {
          ...withoutFilters(p),
          ...(settled ? { settled } : {}),
          name: s.part.name,
          key: s.part.key,
          size: s.part.size,
          etag: s.part.etag,
          ...(s.filters ? { filters: s.filters } : {}),
        }
      : p,
  );
  return { ...index, updated_at: at, parts, jobs };
};
