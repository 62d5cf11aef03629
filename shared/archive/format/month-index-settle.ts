import { CorruptObjectError } from '../../errors';
import { golombEncode, golombFilter, golombMayContain, golombValues } from './doc-filter';
import {
  type ByteRange,
  type IndexedJob,
  type IndexedPart,
  JOB_FILTER_K,
  type JobFilter,
  jobEntries,
  type MonthIndex,
  type SettledPart,
} from './month-index';
import { blockRanges } from './shared-blocks';

/**
 * Settling a part (docs/archive-format.md, "Settled parts"): once every record of an own part has
 * exactly one entry, deleted with the part, no sources left, no `rearchive`, and its blocks hold
 * ascending disjoint id ranges, its entries say nothing the records and the part do not: the part
 * keeps a summary (`IndexedPart.settled`: block directory, last id, block lengths, its delete) and
 * its entries leave the index. `settlePart` is that one transition; `settledCandidates` is the one
 * question a settled part answers without its records ("which block may hold this job?").
 */

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The shortest prefix of `first` that still sorts above `prev` (`first` > `prev`). */
const separator = (prev: string | undefined, first: string): string => {
  if (prev === undefined) return first;
  for (let n = 1; n < first.length; n++) if (first.slice(0, n) > prev) return first.slice(0, n);
  return first;
};

/**
 * The blocks of one part the entries point at, as the index stores them: the compressed length of each
 * member from byte 0 on, in order (a gap no entry points into is one unnamed member's length), so an
 * entry names its block by number. Returns the lengths and each pointed-at offset's block number.
 */
export const partBlocks = (
  ranges: Iterable<ByteRange>,
): { lengths: number[]; numbers: Map<number, number> } => {
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

/** The value most of a part's entries share (null when none has one): entries equal to it omit it. */
export const commonValue = (values: ReadonlyArray<string | null | undefined>): string | null => {
  const tally = new Map<string, number>();
  for (const v of values) if (v) tally.set(v, (tally.get(v) ?? 0) + 1);
  let best: string | null = null;
  for (const [at, n] of tally) if (best === null || n > (tally.get(best) ?? 0)) best = at;
  return best;
};

/**
 * A settled own part's block directory (docs/archive-format.md, "Settled parts"): `dir[i]` sorts at
 * or below every job id of block i and above every id of the blocks before it (null: block i holds no
 * job record), `last` is the part's last id — so a lookup finds the one block that can hold a job from
 * the header alone and the entry is the record's own (the part's commit and delete, no sources; its
 * platform data in its block, or in the block `dir_pd` names for it: `[[block, pd block], …]`). Null
 * unless every record of the part has exactly one entry, equal to that default, the jobs of a block
 * that have platform data have it in one block, and the blocks' id ranges ascend without overlap (the
 * archiver writes records in id order: archive-group.ts `byJobId`).
 */
export const blockDirectory = (
  part: { job_count: number; committed_at: string; shared?: true },
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

/** Every entry of the index pointing at `part`, with its job id. */
const entriesOfPart = (index: MonthIndex, part: string): Array<{ id: string; e: IndexedJob }> => {
  const out: Array<{ id: string; e: IndexedJob }> = [];
  for (const [id, list] of Object.entries(index.jobs))
    for (const e of list) if (e.part === part) out.push({ id, e });
  return out;
};

/**
 * The settled summary of an unsettled part from its entries (block directory, lengths, the delete
 * they share), or null when the part does not meet the condition (blockDirectory).
 */
export const settlementOf = (
  part: IndexedPart,
  entries: ReadonlyArray<{ id: string; e: IndexedJob }>,
): SettledPart | null => {
  if (part.settled) return part.settled;
  const { lengths, numbers } = partBlocks(
    entries.flatMap(({ e }) => (e.platform_data ? [e, e.platform_data] : [e])),
  );
  const deletedAt = commonValue(entries.map(({ e }) => e.deleted_at));
  const deletedBy = deletedAt === null ? null : commonValue(entries.map(({ e }) => e.deleted_by));
  const directory = blockDirectory(part, entries, lengths, numbers, {
    deleted_at: deletedAt,
    deleted_by: deletedBy,
  });
  if (directory === null || deletedAt === null) return null;
  return {
    ...directory,
    block_bytes: lengths,
    deleted_at: deletedAt,
    deleted_by: deletedBy,
    // Its job ids (one entry per record, ids distinct: job_count of them), hashed as doc-filter's `g`.
    job_filter: { k: JOB_FILTER_K, bytes: golombFilter(new Set(entries.map(({ id }) => id)), JOB_FILTER_K) },
  };
};

/**
 * The same set with a Rice parameter one lower: each value halved (⌊h1·n·2^(k−1)/2^32⌋ is the k-bit
 * value halved), twice the false matches for ~1 bit a job less. The filter must have been checked.
 */
export const thinJobFilter = (f: JobFilter, jobCount: number): JobFilter => {
  const values = golombValues(f.bytes, jobCount, f.k);
  if (values === null) throw new Error('thinJobFilter: the filter does not hold its job count');
  return {
    k: f.k - 1,
    bytes: golombEncode(
      values.map((v) => Math.floor(v / 2)),
      f.k - 1,
    ),
  };
};

/**
 * The index with `partName` settled: its summary on the part (`settled`), its entries gone. The
 * index itself (the same object) when the part is not in it, already settled, or does not meet the
 * condition (blockDirectory: a part that does not stays unsettled, its entries kept).
 */
export const settlePart = (index: MonthIndex, partName: string): MonthIndex => {
  const at = index.parts.findIndex((p) => p.name === partName);
  const part = index.parts[at];
  if (!part || part.settled) return index;
  const entries = entriesOfPart(index, partName);
  const settled = settlementOf(part, entries);
  if (settled === null) return index;
  const jobs: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  for (const { id } of entries) {
    const rest = jobEntries(jobs, id).filter((e) => e.part !== partName);
    if (rest.length > 0) jobs[id] = rest;
    else delete jobs[id];
  }
  const parts = index.parts.map((p, i) => (i === at ? { ...p, settled } : p));
  return { ...index, parts, jobs };
};

/** Where a settled part's block may hold a job (settledCandidates). */
export interface SettledCandidate {
  readonly part: IndexedPart;
  /** The block's number in the part and its byte range. */
  readonly block: number;
  readonly range: ByteRange;
  /** Every job id of the block sorts at or above `from` and below `below` (absent: up to the part's `last`). */
  readonly from: string;
  readonly below?: string;
  /** The block holding the platform data of the block's jobs, when not the block itself (`dir_pd`). */
  readonly pdBlock?: number;
  readonly pdRange?: ByteRange;
}

/** The byte range of block `n` of a part whose blocks have these lengths. */
const rangeOf = (lengths: readonly number[], n: number): ByteRange => blockRanges(lengths)[n] as ByteRange;

/**
 * The block of a settled part that can hold `jobId` by its directory (undefined: outside the part's
 * id range, so not in the part). With `edges`, an id outside that range gets the nearest edge block
 * instead (the first for one below it, the last for one above): the range may be what is damaged.
 * The summary must have been checked (checkSettled).
 */
export const directoryBlock = (
  s: Pick<SettledPart, 'dir' | 'last' | 'dir_pd' | 'block_bytes'>,
  jobId: string,
  edges = false,
): Omit<SettledCandidate, 'part'> | undefined => {
  const first = s.dir.findIndex((d) => d !== null);
  if (first < 0) return undefined;
  if (!edges && (jobId < (s.dir[first] as string) || jobId > s.last)) return undefined;
  let block = first;
  for (let i = first + 1; i < s.dir.length; i++) {
    const d = s.dir[i];
    if (d !== null && d !== undefined && d <= jobId) block = i;
  }
  const below = s.dir.slice(block + 1).find((d) => d !== null) ?? undefined;
  const pdBlock = s.dir_pd?.find(([n]) => n === block)?.[1];
  return {
    block,
    range: rangeOf(s.block_bytes, block),
    from: s.dir[block] as string,
    ...(below !== undefined ? { below } : {}),
    ...(pdBlock !== undefined ? { pdBlock, pdRange: rangeOf(s.block_bytes, pdBlock) } : {}),
  };
};

/**
 * The blocks of the month's settled parts that may hold `jobId`: one per settled part whose id range
 * covers it and whose job filter (when it has one) matches it, in the parts' order (an absent job
 * matches a part's filter 1 time in 2^k). A part whose filter matches an id outside its stated range
 * gives its nearest edge block (a damaged `last` or first `dir` id would otherwise hide the jobs past
 * it; reading the block either finds a record outside its range, which settledEntry refuses as
 * damage, or not the job: a filter false match). A part without a filter trusts its range. Whoever
 * needs more than "which block" reads the record there (in a restore class: the part must be restored
 * first; never conclude "not archived" without it). Parts with entries are not looked at: their
 * entries (jobEntries) answer for them.
 */
export const settledCandidates = (index: MonthIndex, jobId: string): SettledCandidate[] => {
  const out: SettledCandidate[] = [];
  for (const part of index.parts) {
    if (!part.settled) continue;
    const s = part.settled;
    // Its job filter (when it has one) says the job is not in the part: no block to read.
    if (s.job_filter && !golombMayContain(s.job_filter.bytes, part.job_count, jobId, s.job_filter.k))
      continue;
    const hit = directoryBlock(s, jobId, s.job_filter !== undefined);
    if (hit) out.push({ part, ...hit });
  }
  return out;
};

/**
 * Checks a stored settled summary (a part's `dir`, `last`, `dir_pd` against its `block_bytes`):
 * one id or null per block, ascending, at least one id, `last` at or above the last of them, `dir_pd`
 * pairs of its blocks. Damage is a CorruptObjectError naming the index and the part.
 */
export const checkSettled = (
  p: { name: string; dir?: unknown; last?: unknown; dir_pd?: unknown; shared?: unknown },
  lengths: readonly number[],
  key: string,
): Pick<SettledPart, 'dir' | 'last' | 'dir_pd'> => {
  const bad = (what: string): never => {
    throw new CorruptObjectError(key, `block directory of part ${p.name}: ${what}`);
  };
  if (p.shared === true) bad('a shared part has none');
  const { dir, last } = p;
  if (!Array.isArray(dir) || dir.length !== lengths.length || typeof last !== 'string')
    return bad('needs one id per block and the last id');
  // Null: a block holding no job record (never read for a job). The others ascend.
  let top: string | undefined;
  for (const d of dir as unknown[]) {
    if (d === null) continue;
    if (typeof d !== 'string' || (top !== undefined && !(d > top))) bad('ids must ascend');
    top = d as string;
  }
  if (top === undefined || !(last >= top)) bad('the last id sorts below the last block');
  const pds = p.dir_pd;
  const inPart = (n: unknown): n is number =>
    typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n < lengths.length;
  if (
    pds !== undefined &&
    (!Array.isArray(pds) ||
      !pds.every((x) => Array.isArray(x) && x.length === 2 && inPart(x[0]) && inPart(x[1])))
  )
    bad('dir_pd must be [block, platform data block] pairs of its blocks');
  return {
    dir: dir as Array<string | null>,
    last,
    ...(pds !== undefined ? { dir_pd: pds as Array<[number, number]> } : {}),
  };
};

/**
 * The job's entry in a settled part, from the records of its candidate block (settledCandidates),
 * as the index would have stored it: `completed_at` the record's `job.completed_at`, the commit and
 * delete the part's, no sources, its platform data in the block (or `pdBlock`'s) when the record
 * names any. Null when the block does not hold the job: not archived in this part. A job record
 * outside the block's id range means the directory (or the part) is damaged: CorruptObjectError
 * naming the index `key` and the part.
 */
export const settledEntry = (
  c: SettledCandidate,
  records: ReadonlyArray<{
    type: string;
    job_id?: string;
    job?: { completed_at: string };
    platform_data_ref?: string | null;
  }>,
  jobId: string,
  key: string,
): IndexedJob | null => {
  const s = c.part.settled;
  if (!s) throw new Error(`settledEntry: part ${c.part.name} is not settled`);
  let found: IndexedJob | null = null;
  for (const r of records) {
    if (r.type !== 'job' || r.job_id === undefined) continue;
    const id = r.job_id;
    if (id < c.from || (c.below !== undefined && id >= c.below) || id > s.last)
      throw new CorruptObjectError(
        key,
        `block directory of part ${c.part.name}: block ${c.block} holds job ${id}, outside its range`,
      );
    if (id === jobId && r.job)
      found = {
        part: c.part.name,
        ...c.range,
        completed_at: r.job.completed_at,
        committed_at: c.part.committed_at,
        platform_data: r.platform_data_ref ? (c.pdRange ?? c.range) : null,
        sources: [],
        deleted_at: s.deleted_at,
        ...(s.deleted_by !== null ? { deleted_by: s.deleted_by } : {}),
      };
  }
  return found;
};

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A settled part's stored job filter (`jf`, standard base64, and `jk`, its Rice parameter when not
 * JOB_FILTER_K) checked: it must decode to exactly `job_count` values. Undefined when the part has
 * none. Damage is a CorruptObjectError naming the index and the part.
 */
export const checkJobFilter = (
  p: { name: string; jf?: unknown; jk?: unknown; job_count?: unknown },
  key: string,
): JobFilter | undefined => {
  if (p.jf === undefined && p.jk === undefined) return undefined;
  const bad = (what: string): never => {
    throw new CorruptObjectError(key, `job filter of part ${p.name}: ${what}`);
  };
  const k = p.jk ?? JOB_FILTER_K;
  if (typeof k !== 'number' || !Number.isSafeInteger(k) || k < 1 || k > 16)
    bad('jk must be a whole number 1–16');
  if (typeof p.jf !== 'string' || p.jf === '' || !BASE64.test(p.jf)) return bad('jf must be base64');
  const bytes = Uint8Array.from(Buffer.from(p.jf, 'base64'));
  const n = p.job_count;
  if (typeof n !== 'number' || golombValues(bytes, n, k as number) === null)
    bad(`it does not hold the part's ${String(n)} jobs`);
  return { k: k as number, bytes };
};
