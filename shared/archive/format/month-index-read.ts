import { CorruptObjectError } from '../../errors';
import { inflateBlocks as gunzipAll } from './codec';
import { partKey, sharedPartKey } from './keys';
import {
  completionOf,
  type IndexBlock,
  type IndexedJob,
  type IndexedPart,
  type IndexedSource,
  type MonthIndex,
} from './month-index';
import { checkJobFilter, checkSettled } from './month-index-settle';
import { checkFormat, INDEX_FORMAT } from './version';

/**
 * Reading a month index (format 1): whole (`parseMonthIndex`), or as a lookup reads it — the header
 * member (`parseIndexHeader`), the one block that can hold the job (`blockOf`), merged (`mergeBlocks`)
 * and checked (`checkIndex`). Anything malformed is a CorruptObjectError naming the key; another
 * format version is version.ts's refusal.
 */

/** The block of `blocks` that would hold `jobId` (by id range), if any. */
export const blockOf = (blocks: readonly IndexBlock[], jobId: string): IndexBlock | undefined =>
  blocks.find((b) => b.first <= jobId && jobId <= b.last);

/**
 * Parses and checks an index read back from S3 — whole, or (a lookup) its header plus the blocks
 * read; malformed → CorruptObjectError naming the key.
 */
export const parseMonthIndex = (bytes: Uint8Array, key: string): MonthIndex => {
  let value: unknown;
  try {
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
      // Every member: the header line, then one line per block of jobs.
      const lines = gunzipAll(bytes)
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '');
      const [header, ...blocks] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      value = mergeBlocks(header, blocks);
    } else value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'index is not (gzipped) JSON', { cause: err });
  }
  return checkIndex(value, key);
};

/** The header of a blocked index with the jobs of the blocks given (a lookup's partial view). */
export const mergeBlocks = (
  header: Record<string, unknown> | undefined,
  blocks: readonly Record<string, unknown>[],
): unknown => {
  if (!header) return header;
  const { blocks: _directory, ...rest } = header;
  const jobs: Record<string, unknown> = { ...((header.jobs as Record<string, unknown> | undefined) ?? {}) };
  for (const b of blocks) if (b.jobs !== undefined) Object.assign(jobs, b.jobs as Record<string, unknown>);
  return { ...rest, jobs };
};

/** The header member of a blocked index (what a lookup reads first). */
export const parseIndexHeader = (
  member: Uint8Array,
  key: string,
): { header: Record<string, unknown>; blocks: IndexBlock[] } => {
  let header: unknown;
  try {
    header = JSON.parse(gunzipAll(member).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'index header is not gzipped JSON', { cause: err });
  }
  if (!header || typeof header !== 'object')
    throw new CorruptObjectError(key, 'index header is not an object');
  const h = header as Record<string, unknown>;
  const blocks = (h.blocks ?? []) as IndexBlock[];
  if (!Array.isArray(blocks)) throw new CorruptObjectError(key, 'index blocks must be a list');
  return { header: h, blocks };
};

/** Checks a parsed index value (whole, or a lookup's header + blocks). */
export const checkIndex = (value: unknown, key: string): MonthIndex => {
  const v = value as Partial<MonthIndex> | null;
  if (!v || typeof v !== 'object') throw new CorruptObjectError(key, `not a ${INDEX_FORMAT} document`);
  checkFormat('index', v.format, key);
  if (typeof v.shop_id !== 'string' || typeof v.month !== 'string' || !Array.isArray(v.parts)) {
    throw new CorruptObjectError(key, 'index needs shop_id, month and parts');
  }
  if (!v.jobs || typeof v.jobs !== 'object' || Array.isArray(v.jobs)) {
    throw new CorruptObjectError(key, 'index needs a jobs map');
  }
  return fromStored(v as unknown as StoredIndex, key);
};

/** A part's key from the index's shop and month (ids the index got wrong are its corruption). */
const keyOf = (v: { shop_id: string; month: string }, name: string, key: string): string => {
  try {
    return partKey(v.shop_id, v.month, name);
  } catch (err) {
    throw new CorruptObjectError(key, `part ${name}: ${(err as Error).message}`, { cause: err });
  }
};

const sharedKeyOf = (v: { month: string }, name: string, key: string): string => {
  try {
    return sharedPartKey(v.month, name);
  } catch (err) {
    throw new CorruptObjectError(key, `shared part ${name}: ${(err as Error).message}`, { cause: err });
  }
};

/** The index as stored (see serializeMonthIndex). */
interface StoredPart extends Omit<IndexedPart, 'key'> {
  readonly deleted_at?: string | null;
  /** Absent: the part's own run (when deleted_at is set). */
  readonly deleted_by?: string | null;
  /** Absent: one block, the whole part. */
  readonly block_bytes?: readonly number[];
  /** The length of the part's trailing filters member (absent: none). */
  readonly filters_bytes?: number;
  /** A settled part's summary (month-index-settle.ts): its block directory, in the header. */
  readonly dir?: ReadonlyArray<string | null>;
  readonly last?: string;
  readonly dir_pd?: ReadonlyArray<readonly [number, number]>;
  /** A settled part's job filter: base64 Golomb-coded set, and its Rice parameter when not 7. */
  readonly jf?: string;
  readonly jk?: number;
}
interface StoredIndex extends Omit<MonthIndex, 'parts' | 'jobs'> {
  readonly parts: readonly StoredPart[];
  readonly jobs: Readonly<Record<string, readonly Record<string, unknown>[]>>;
}

const deletion = (
  by: string | null,
  objects: unknown,
): Pick<IndexedJob, 'deleted_by' | 'objects_deleted'> => ({
  ...(by !== null ? { deleted_by: by } : {}),
  ...(isCount(objects) ? { objects_deleted: objects } : {}),
});

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** The stored index → the in-memory model: parts get their keys, entries their byte ranges and defaults. */
const fromStored = (v: StoredIndex, key: string): MonthIndex => {
  const bad = (what: string): never => {
    throw new CorruptObjectError(key, what);
  };
  const parts = v.parts.map((p, i) => {
    if (!p || typeof p.name !== 'string' || !isCount(p.size)) return bad(`part ${i} needs a name and a size`);
    if (typeof p.etag !== 'string' || p.etag === '') return bad(`part ${p.name} needs its ETag`);
    const fb = p.filters_bytes;
    if (fb !== undefined && (!isCount(fb) || fb === 0 || fb >= p.size))
      return bad(`part ${p.name}: filters_bytes must be a length within the part`);
    const filters = fb !== undefined ? { offset: p.size - fb, length: fb } : undefined;
    const lengths = p.block_bytes ?? [p.size - (fb ?? 0)];
    if (!Array.isArray(lengths) || !lengths.every((n) => isCount(n) && n > 0))
      return bad(`part ${p.name} needs block_bytes, a list of lengths`);
    let at = 0;
    const ranges = lengths.map((length) => {
      const r = { offset: at, length };
      at += length;
      return r;
    });
    if (at > (filters?.offset ?? p.size))
      return bad(`blocks of part ${p.name} run past its ${filters ? 'filters member' : `${p.size} bytes`}`);
    // A block directory: the part is settled when no entry points at it (else the entries answer).
    const directory = p.dir !== undefined ? checkSettled(p, lengths, key) : undefined;
    // A settled part's blocks are every record block (its summary names them all): blocks that end
    // before the part's records do would leave the jobs after them to no block, read as absent.
    if (directory && at !== (filters?.offset ?? p.size))
      return bad(
        `block directory of part ${p.name}: its blocks end at byte ${at}, its records at ${filters?.offset ?? p.size}`,
      );
    if (directory && (typeof p.deleted_at !== 'string' || !isCount(p.job_count) || p.job_count === 0))
      return bad(`settled part ${p.name} needs its delete time and a job count`);
    if (!directory && (p.jf !== undefined || p.jk !== undefined))
      return bad(`part ${p.name} has a job filter and no block directory`);
    const jobFilter = directory ? checkJobFilter(p, key) : undefined;
    const {
      block_bytes: _b,
      filters_bytes: _f,
      dir: _d,
      last: _l,
      dir_pd: _dp,
      jf: _jf,
      jk: _jk,
      deleted_at,
      deleted_by,
      ...rest
    } = p;
    const deletedBy = deleted_by !== undefined ? deleted_by : deleted_at ? p.run_id : null;
    return {
      part: {
        ...rest,
        key: p.shared === true ? sharedKeyOf(v, p.name, key) : keyOf(v, p.name, key),
        ...(filters ? { filters } : {}),
      } as IndexedPart,
      settled: directory
        ? {
            ...directory,
            block_bytes: lengths,
            deleted_at: deleted_at as string,
            deleted_by: deletedBy,
            ...(jobFilter ? { job_filter: jobFilter } : {}),
          }
        : undefined,
      ranges,
      deletedAt: deleted_at ?? null,
      deletedBy,
    };
  });
  const jobs: Record<string, IndexedJob[]> = {};
  for (const [jobId, entries] of Object.entries(v.jobs)) {
    if (!Array.isArray(entries)) return bad(`entries of job ${jobId} must be a list`);
    jobs[jobId] = entries.map((e) => {
      const ordinal = e?.part ?? 0;
      const p = typeof ordinal === 'number' ? parts[ordinal] : undefined;
      if (!p) return bad(`entry of job ${jobId} points at no committed part`);
      const block = (n: unknown) =>
        (typeof n === 'number' ? p.ranges[n] : undefined) ??
        bad(`entry of job ${jobId} names no block of part ${p.part.name}`);
      const completedAt = completionOf(v.month, e.completed);
      if (completedAt === undefined)
        return bad(
          `entry of job ${jobId} needs completed (milliseconds from the month's start, or text), not ${'completed' in e ? JSON.stringify(e.completed) : 'absent'}`,
        );
      return {
        part: p.part.name,
        ...block(e.block ?? 0),
        completed_at: completedAt,
        committed_at: (e.committed_at as string | undefined) ?? p.part.committed_at,
        // Absent: in the job's own block; null: the job has none.
        platform_data: e.pd_block === null ? null : block(e.pd_block ?? e.block ?? 0),
        sources: (e.sources as IndexedSource[] | undefined) ?? [],
        deleted_at: e.deleted_at === undefined ? p.deletedAt : (e.deleted_at as string | null),
        ...(typeof e.rearchive === 'string' ? { rearchive: e.rearchive } : {}),
        ...deletion(e.deleted_by === undefined ? p.deletedBy : (e.deleted_by as string | null), e.deleted),
      };
    });
  }
  // A part with a directory and no entry in `jobs` is settled: its summary answers for its jobs.
  const pointed = new Set(Object.values(jobs).flatMap((list) => list.map((e) => e.part)));
  return {
    ...v,
    parts: parts.map((p) =>
      p.settled && !pointed.has(p.part.name) ? { ...p.part, settled: p.settled } : p.part,
    ),
    jobs,
  };
};
