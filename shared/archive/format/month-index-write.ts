import { deflateBlock } from './codec';
import {
  type ByteRange,
  INDEX_BLOCK_BYTES,
  type IndexBlock,
  type IndexedJob,
  jobEntries,
  type MonthIndex,
  storedCompletion,
} from './month-index';
import { INDEX_FORMAT } from './version';

/** The month index's bytes as the archiver writes them (docs/archive-format.md, "Month index"). */

const gzipLine = (value: unknown): Buffer => deflateBlock(Buffer.from(`${JSON.stringify(value)}\n`, 'utf8'));

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The shortest prefix of `first` that still sorts above `prev` (`first` > `prev`). */
const separator = (prev: string | undefined, first: string): string => {
  if (prev === undefined) return first;
  for (let n = 1; n < first.length; n++) if (first.slice(0, n) > prev) return first.slice(0, n);
  return first;
};

/**
 * A settled own part's block directory (docs/archive-format.md, "Block directory"): `dir[i]` sorts at
 * or below every job id of block i and above every id of the blocks before it (null: block i holds no
 * job record), `last` is the part's last id —
 * so a lookup finds the one block that can hold a job from the header alone and the entry is the
 * record's own (the part's commit and delete, no sources; its platform data in its block, or in the
 * block `dir_pd` names for it: `[[block, pd block], …]`). Null unless every record of the part has
 * exactly one entry, equal to that default, the jobs of a block that have
 * platform data have it in one block, and the blocks' id ranges ascend without overlap (the archiver
 * writes records in id order: archive-group.ts `byJobId`).
 */
const blockDirectory = (
  part: { size: number; job_count: number; committed_at: string; shared?: true; filters?: ByteRange },
  entries: ReadonlyArray<{ id: string; e: IndexedJob }>,
  lengths: readonly number[],
  numbers: ReadonlyMap<number, number>,
  common: { deleted_at: string | null; deleted_by: string | null },
): { dir: Array<string | null>; last: string; dir_pd?: Array<[number, number]> } | null => {
  if (part.shared || common.deleted_at === null || entries.length !== part.job_count) return null;
  if (new Set(entries.map((x) => x.id)).size !== entries.length) return null;
  const ids: string[][] = lengths.map(() => []);
  // Per block, the block its jobs' platform data is in (the same for all of them that have any).
  const pdOf = new Map<number, number>();
  for (const { id, e } of entries) {
    const settled =
      e.sources.length === 0 &&
      e.deleted_at === common.deleted_at &&
      (e.deleted_by ?? null) === common.deleted_by &&
      e.committed_at === part.committed_at &&
      e.rearchive === undefined;
    const n = numbers.get(e.offset);
    if (!settled || n === undefined) return null;
    if (e.platform_data !== null) {
      const pd = numbers.get(e.platform_data.offset);
      if (pd === undefined || (pdOf.get(n) ?? pd) !== pd) return null;
      pdOf.set(n, pd);
    }
    ids[n]?.push(id);
  }
  // A job line longer than a block is a block of its own, its platform data in the block before.
  const elsewhere = [...pdOf].filter(([n, pd]) => n !== pd).sort(([a], [b]) => a - b);
  // A block holding no job record (the platform data before a job line longer than a block) is null.
  const dir: Array<string | null> = [];
  let prev: string | undefined;
  for (const block of ids) {
    if (block.length === 0) {
      dir.push(null);
      continue;
    }
    block.sort(byCodePoint);
    const first = block[0] as string;
    if (prev !== undefined && first <= prev) return null;
    dir.push(separator(prev, first));
    prev = block[block.length - 1];
  }
  if (prev === undefined) return null;
  return { dir, last: prev, ...(elsewhere.length > 0 ? { dir_pd: elsewhere } : {}) };
};

/**
 * The blocks of one part the entries point at, as the index stores them: the compressed length of each
 * member from byte 0 on, in order (a gap no entry points into is one unnamed member's length), so an
 * entry names its block by number. Returns the lengths and each pointed-at offset's block number.
 */
const partBlocks = (ranges: Iterable<ByteRange>): { lengths: number[]; numbers: Map<number, number> } => {
  const byOffset = new Map<number, number>();
  for (const r of ranges) {
    const seen = byOffset.get(r.offset);
    if (seen !== undefined && seen !== r.length)
      throw new Error(`index: two entries give the block at ${r.offset} lengths ${seen} and ${r.length}`);
    byOffset.set(r.offset, r.length);
  }
  const lengths: number[] = [];
  const numbers = new Map<number, number>();
  let at = 0;
  for (const [offset, length] of [...byOffset].sort(([a], [b]) => a - b)) {
    if (offset < at) throw new Error(`index: blocks at ${offset} and before it overlap`);
    if (offset > at) lengths.push(offset - at);
    numbers.set(offset, lengths.length);
    lengths.push(length);
    at = offset + length;
  }
  return { lengths, numbers };
};

/**
 * An entry as stored: its part by position in `parts` (absent: 0), its block (absent: 0)
 * and its platform data's (`pd_block`: absent when in the job's own block, as most are; `null`: none)
 * by number in that part's `block_bytes`, its
 * completion (`completed`: milliseconds from the month's start, storedCompletion); no status or
 * counts (the job record's), no line ranges (a lookup finds the record in the block by id), no
 * digest, no platform ref; commit and delete times only when they differ from the part's; sources
 * only until they are deleted.
 */
const storedEntry = (
  e: IndexedJob,
  month: string,
  part: {
    ordinal: number;
    committed_at: string;
    deleted_at: string | null;
    deleted_by: string | null;
    numbers: Map<number, number>;
  },
): Record<string, unknown> => ({
  // Part 0 and block 0 (most entries of most months) go without saying.
  ...(part.ordinal !== 0 ? { part: part.ordinal } : {}),
  ...(part.numbers.get(e.offset) !== 0 ? { block: part.numbers.get(e.offset) } : {}),
  // Platform data in the job's own block (most: a payload is written once per block using it) goes
  // without saying; none is null.
  ...(e.platform_data === null
    ? { pd_block: null }
    : e.platform_data.offset !== e.offset
      ? { pd_block: part.numbers.get(e.platform_data.offset) }
      : {}),
  completed: storedCompletion(month, e.completed_at),
  ...(e.sources.length > 0 ? { sources: e.sources } : {}),
  ...(e.deleted_at !== part.deleted_at ? { deleted_at: e.deleted_at } : {}),
  ...((e.deleted_by ?? null) !== part.deleted_by ? { deleted_by: e.deleted_by ?? null } : {}),
  ...(e.objects_deleted !== undefined ? { deleted: e.objects_deleted } : {}),
  ...(e.committed_at !== part.committed_at ? { committed_at: e.committed_at } : {}),
  ...(e.rearchive !== undefined ? { rearchive: e.rearchive } : {}),
});

/** The value most of a part's entries share (null when none has one): entries equal to it omit it. */
const commonValue = (values: ReadonlyArray<string | null | undefined>): string | null => {
  const tally = new Map<string, number>();
  for (const v of values) if (v) tally.set(v, (tally.get(v) ?? 0) + 1);
  let best: string | null = null;
  for (const [at, n] of tally) if (best === null || n > (tally.get(best) ?? 0)) best = at;
  return best;
};

/**
 * The index as stored (`Content-Encoding: gzip`): JSONL in gzip members. The first member is
 * the header — format, shop, month, parts (each with its blocks' lengths) — and either the jobs
 * themselves (a month whose entries fit in one block) or `blocks`: the byte range and job id range of
 * each further member, each holding the entries of a run of job ids in code-point order, ≤
 * INDEX_BLOCK_BYTES of JSON. It appends, when any part has document filters, one last member
 * `{"docs":{part position: storedDocFilters}}`, its range in the header's `docs_at` (offset from the
 * end of the header member): lookups never parse it, a search reads the header and it alone. A
 * one-member index that stays within INDEX_FIRST_READ_BYTES with them holds `docs` in that member.
 * `gzip -dc` reads it all; a lookup reads the header and one block (shared/reader/archive-reads.ts).
 */
export const serializeMonthIndex = (index: MonthIndex): Buffer => {
  const all = Object.values(index.jobs).flat();
  const byPart = new Map<string, IndexedJob[]>();
  for (const e of all) {
    const of = byPart.get(e.part);
    if (of) of.push(e);
    else byPart.set(e.part, [e]);
  }
  const idsByPart = new Map<string, Array<{ id: string; e: IndexedJob }>>();
  for (const [id, list] of Object.entries(index.jobs))
    for (const e of list) {
      const of = idsByPart.get(e.part);
      if (of) of.push({ id, e });
      else idsByPart.set(e.part, [{ id, e }]);
    }
  const parts = index.parts.map((p, ordinal) => {
    const entries = byPart.get(p.name) ?? [];
    const { lengths, numbers } = partBlocks(
      entries.flatMap((e) => (e.platform_data ? [e, e.platform_data] : [e])),
    );
    // What most entries share; entries equal to it say nothing. The deleting run is most often the
    // committing one, and a part is most often one block: both left out then.
    const deletedAt = commonValue(entries.map((e) => e.deleted_at));
    const deletedBy = deletedAt === null ? null : commonValue(entries.map((e) => e.deleted_by));
    // One block, all of the part before its filters member: `block_bytes` goes without saying.
    const oneBlock = lengths.length === 1 && lengths[0] === p.size - (p.filters?.length ?? 0);
    const directory = blockDirectory(p, idsByPart.get(p.name) ?? [], lengths, numbers, {
      deleted_at: deletedAt,
      deleted_by: deletedBy,
    });
    return {
      stored: {
        name: p.name,
        size: p.size,
        etag: p.etag,
        run_id: p.run_id,
        committed_at: p.committed_at,
        job_count: p.job_count,
        ...(p.shared ? { shared: true } : {}),
        deleted_at: deletedAt,
        ...(deletedAt !== null && deletedBy !== p.run_id ? { deleted_by: deletedBy } : {}),
        ...(oneBlock ? {} : { block_bytes: lengths }),
        ...(p.filters ? { filters_bytes: p.filters.length } : {}),
        ...(directory ?? {}),
      },
      common: { deleted_at: deletedAt, deleted_by: deletedBy },
      numbers,
      ordinal,
    };
  });
  // Each part's view for its entries, built once (not once per entry).
  const partOf = new Map(
    parts.map((p) => [
      p.stored.name,
      { committed_at: p.stored.committed_at, ...p.common, numbers: p.numbers, ordinal: p.ordinal },
    ]),
  );
  const { jobs: _jobs, parts: _parts, ...head } = index;
  const ids = Object.keys(index.jobs).sort(byCodePoint);
  const chunks: Array<Record<string, unknown>> = [];
  let current: Record<string, unknown> = {};
  let size = 0;
  for (const id of ids) {
    const entries = jobEntries(index.jobs, id).map((e) => {
      const p = partOf.get(e.part);
      if (!p) throw new Error(`index: entry of job ${id} names part ${e.part}, which is not in the index`);
      return storedEntry(e, index.month, p);
    });
    const bytes = JSON.stringify(id).length + JSON.stringify(entries).length + 2;
    if (size > 0 && size + bytes > INDEX_BLOCK_BYTES) {
      chunks.push(current);
      current = {};
      size = 0;
    }
    current[id] = entries;
    size += bytes;
  }
  if (size > 0 || chunks.length === 0) chunks.push(current);
  const header = { ...head, format: INDEX_FORMAT, parts: parts.map((p) => p.stored) };
  if (chunks.length === 1) return gzipLine({ ...header, jobs: chunks[0] });
  const members = chunks.map((jobs) => gzipLine({ jobs }));
  let offset = 0;
  const blocks: IndexBlock[] = chunks.map((jobs, i) => {
    const keys = Object.keys(jobs);
    const length = (members[i] as Buffer).length;
    const b = { first: keys[0] as string, last: keys[keys.length - 1] as string, offset, length };
    offset += length;
    return b;
  });
  return Buffer.concat([gzipLine({ ...header, blocks }), ...members]);
};

/** Object headers of a stored index. */
export const MONTH_INDEX_HEADERS = { ContentType: 'application/json', ContentEncoding: 'gzip' } as const;
