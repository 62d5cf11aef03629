import { CorruptObjectError } from '../../errors';
import { deflateBlock, inflateBlocks as gunzipAll } from './codec';
import { partKey, sharedPartKey } from './keys';
import type { DetailCounts } from './records';
import { checkFormat, INDEX_FORMAT } from './version';

/**
 * The month index `job-details-index/{shop}/{yyyy-mm}/index.json` is the commit: a part exists for
 * readers only once its entry is here. It lives in Standard storage (never transitions), so lookups
 * stay instant even when parts sit in Glacier Flexible Retrieval. Parts are never rewritten; this small
 * file is, with a conditional write (If-Match / If-None-Match) so concurrent runs cannot lose entries.
 */
export interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

/**
 * Where a record sits: the byte range of the gzip member (block) holding it in the part, and (in
 * memory only: the builder's manifest, verify) its line inside the inflated block. The stored index
 * names the block alone; a reader finds the record in it by id.
 */
export interface Located extends ByteRange {
  readonly line?: ByteRange;
}

export interface IndexedPart {
  readonly name: string;
  /** Its key (not stored: `job-details-cold/{shop}/{month}/{name}`, or the shared prefix's). */
  readonly key: string;
  readonly size: number;
  /**
   * The part's ETag when committed. S3 gives every write of a key a new ETag (an MD5 of the bytes, of
   * the parts' MD5s, or an opaque value under SSE-KMS), so a HEAD proves the stored part is the very
   * object verify read: delete checks it before removing any hot copy.
   */
  readonly etag: string;
  /** sha256 of the part's bytes, in memory only (verify checks it before the commit; size + ETag name it after). */
  readonly sha256?: string;
  readonly run_id: string;
  readonly committed_at: string;
  readonly job_count: number;
  /** Bytes of hot objects read to build the part (for the report's in → out ratio). */
  readonly bytes_in: number;
  /**
   * A shared part (shared-index.ts): its key is `sharedPartKey(month, name)`, its size the whole
   * object's, and this shop's records are one segment of it.
   */
  readonly shared?: true;
  /**
   * The part's document filters member (doc-filter.ts filtersMember): its last `filters_bytes`, in the
   * part's storage class. Stored as that length; absent when no block of the part lists a document.
   */
  readonly filters?: ByteRange;
}

export interface IndexedSource {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
}

/** One archival of one job. A job retried after archival and archived again has two entries. */
export interface IndexedJob extends Located {
  readonly part: string;
  /**
   * sha256 of the uncompressed record line, in memory only (verify). The index keeps it out (every
   * lookup reads the index, and a digest is ~33 incompressible bytes a job): a block's gzip CRC-32
   * catches corruption, and the reader checks the record names the job it asked for.
   */
  readonly sha256?: string;
  readonly status: string;
  readonly completed_at: string;
  readonly committed_at: string;
  readonly counts: DetailCounts;
  /** Where the job's platform data record is (in memory, with its ref; the job record names it). */
  readonly platform_data: (Located & { readonly ref?: string }) | null;
  /**
   * The hot objects this entry covers; delete removes only objects that still match these. Emptied
   * once they are deleted: the index stays in Standard for good and every lookup reads it, while the
   * part's own record keeps the manifest for anyone tracing an archived byte to its object.
   */
  readonly sources: readonly IndexedSource[];
  /** Set once the delete step removed the matching hot objects. */
  readonly deleted_at: string | null;
  /**
   * The run that marked the entry deleted, and how many of its sources were gone then (the manifest
   * less objects kept because they changed): a run's report counts each deletion once, whichever of
   * its attempts (or an SDK retry whose first response was lost) removed the objects. Absent while
   * undeleted.
   */
  readonly deleted_by?: string;
  readonly objects_deleted?: number;
  /**
   * Set by the delete step when the job's hot prefix no longer matches this entry's manifest (an
   * object rewritten, a late flush, a new platform-data.json after the commit): nothing of the job was
   * deleted, and the next archive of its group archives the hot prefix again as a new entry.
   */
  readonly rearchive?: string;
}

export interface MonthIndex {
  /** version.ts INDEX_FORMAT. */
  readonly format: string;
  readonly shop_id: string;
  readonly month: string;
  readonly updated_at: string;
  readonly parts: readonly IndexedPart[];
  readonly jobs: Readonly<Record<string, readonly IndexedJob[]>>;
}

export const emptyMonthIndex = (shopId: string, month: string, at: string): MonthIndex => ({
  format: INDEX_FORMAT,
  shop_id: shopId,
  month,
  updated_at: at,
  parts: [],
  jobs: {},
});

/**
 * The entries of one job. Own properties only: `jobs` is a plain object, and valid job ids such as
 * `constructor` or `toString` would otherwise resolve to Object.prototype members.
 */
export const jobEntries = (
  jobs: Readonly<Record<string, readonly IndexedJob[]>>,
  jobId: string,
): readonly IndexedJob[] => (Object.hasOwn(jobs, jobId) ? (jobs[jobId] ?? []) : []);

/** Adds a verified part and its job entries. Idempotent: committing the same part twice changes nothing. */
export const commitPart = (
  index: MonthIndex,
  part: IndexedPart,
  jobs: Readonly<Record<string, IndexedJob>>,
  at: string,
): MonthIndex => {
  if (index.parts.some((p) => p.name === part.name)) return index;
  const merged: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  for (const [jobId, entry] of Object.entries(jobs)) merged[jobId] = [...jobEntries(merged, jobId), entry];
  return { ...index, updated_at: at, parts: [...index.parts, part], jobs: merged };
};

/** The newest entry of a job (entries are appended in commit order). */
export const latestEntry = (index: MonthIndex, jobId: string): IndexedJob | undefined => {
  const entries = jobEntries(index.jobs, jobId);
  return entries[entries.length - 1];
};

/**
 * Marks the given entries (by part) of each job as deleted by `runId`, with the number of its sources
 * now gone, and drops their source manifests. Entries already marked keep their mark.
 */
export const markDeleted = (
  index: MonthIndex,
  done: ReadonlyArray<{ jobId: string; part: string; objects?: number }>,
  at: string,
  runId?: string,
): MonthIndex => {
  if (done.length === 0) return index;
  const jobs: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  for (const { jobId, part, objects } of done) {
    const target = jobEntries(jobs, jobId).find((e) => e.part === part);
    jobs[jobId] = jobEntries(jobs, jobId).map((e) =>
      e.part !== part &&
      e.deleted_at === null &&
      e.rearchive !== undefined &&
      e.completed_at === target?.completed_at
        ? // An entry this one archived again: its objects were in the re-archive, now gone too.
          {
            ...e,
            deleted_at: at,
            sources: [],
            ...(runId !== undefined ? { deleted_by: runId } : {}),
            objects_deleted: 0,
          }
        : e.part === part && e.deleted_at === null
          ? {
              ...e,
              deleted_at: at,
              sources: [],
              ...(runId !== undefined ? { deleted_by: runId } : {}),
              ...(objects !== undefined ? { objects_deleted: objects } : {}),
            }
          : e,
    );
  }
  return { ...index, updated_at: at, jobs };
};

/**
 * Marks the latest entry of each job (when still in `part` and undeleted) `rearchive`: its hot prefix
 * holds objects that entry does not cover, so nothing of the job was deleted and the next archive of
 * the group archives it again (classify.ts).
 */
export const markRearchive = (
  index: MonthIndex,
  jobs: ReadonlyArray<{ jobId: string; part: string }>,
  at: string,
): MonthIndex | null => {
  const next: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  let changed = false;
  for (const { jobId, part } of jobs) {
    const entries = jobEntries(next, jobId);
    const last = entries[entries.length - 1];
    if (!last || last.part !== part || last.deleted_at !== null || last.rearchive !== undefined) continue;
    next[jobId] = [...entries.slice(0, -1), { ...last, rearchive: at }];
    changed = true;
  }
  return changed ? { ...index, updated_at: at, jobs: next } : null;
};

export const partByName = (index: MonthIndex, name: string): IndexedPart | undefined =>
  index.parts.find((p) => p.name === name);

/** Bytes of an index a lookup reads first (shared/reader/archive-reads.ts): most months whole. */
export const INDEX_FIRST_READ_BYTES = 32 * 1024;

/** Uncompressed JSON per block of job entries: a lookup reads one block, not the whole month. */
export const INDEX_BLOCK_BYTES = 64 * 1024;

/** Where a block of job entries sits: offset from the end of the header member, and its job id range. */
export interface IndexBlock {
  readonly first: string;
  readonly last: string;
  readonly offset: number;
  readonly length: number;
}

const gzipLine = (value: unknown): Buffer => deflateBlock(Buffer.from(`${JSON.stringify(value)}\n`, 'utf8'));

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const COUNT_ORDER = ['chunk_ids', 'failed', 'skipped', 'conflict'] as const;

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
 * and its platform data's (`pd_block`; absent: none) by number in that part's `block_bytes`, counts as [chunk_ids, failed, skipped, conflict]; no line
 * ranges (a lookup finds the record in the block by id), no digest, no platform ref; commit and
 * delete times only when they differ from the part's; sources only until they are deleted.
 */
const storedEntry = (
  e: IndexedJob,
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
  ...(e.platform_data !== null ? { pd_block: part.numbers.get(e.platform_data.offset) } : {}),
  status: e.status,
  completed_at: e.completed_at,
  counts: COUNT_ORDER.map((k) => e.counts[k]),
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
  for (const e of all) byPart.set(e.part, [...(byPart.get(e.part) ?? []), e]);
  const parts = index.parts.map((p, ordinal) => {
    const entries = byPart.get(p.name) ?? [];
    const { lengths, numbers } = partBlocks(
      entries.flatMap((e) => (e.platform_data ? [e, e.platform_data] : [e])),
    );
    // What most entries share; entries equal to it say nothing. The deleting run is most often the
    // committing one, and a part is most often one block: both left out then.
    const deletedAt = commonValue(entries.map((e) => e.deleted_at));
    const deletedBy = deletedAt === null ? null : commonValue(entries.map((e) => e.deleted_by));
    const oneBlock = lengths.length === 1 && lengths[0] === p.size;
    return {
      stored: {
        name: p.name,
        size: p.size,
        etag: p.etag,
        run_id: p.run_id,
        committed_at: p.committed_at,
        job_count: p.job_count,
        bytes_in: p.bytes_in,
        ...(p.shared ? { shared: true } : {}),
        deleted_at: deletedAt,
        ...(deletedAt !== null && deletedBy !== p.run_id ? { deleted_by: deletedBy } : {}),
        ...(oneBlock ? {} : { block_bytes: lengths }),
        ...(p.filters ? { filters_bytes: p.filters.length } : {}),
      },
      common: { deleted_at: deletedAt, deleted_by: deletedBy },
      numbers,
      ordinal,
    };
  });
  const partOf = new Map(parts.map((p) => [p.stored.name, p]));
  const { jobs: _jobs, parts: _parts, ...head } = index;
  const ids = Object.keys(index.jobs).sort(byCodePoint);
  const chunks: Array<Record<string, unknown>> = [];
  let current: Record<string, unknown> = {};
  let size = 0;
  for (const id of ids) {
    const entries = jobEntries(index.jobs, id).map((e) => {
      const p = partOf.get(e.part);
      if (!p) throw new Error(`index: entry of job ${id} names part ${e.part}, which is not in the index`);
      return storedEntry(e, { ...p.stored, ...p.common, numbers: p.numbers, ordinal: p.ordinal });
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

/** The block of `blocks` that would hold `jobId` (by id range), if any. */
export const blockOf = (blocks: readonly IndexBlock[], jobId: string): IndexBlock | undefined =>
  blocks.find((b) => b.first <= jobId && jobId <= b.last);

/** Object headers of a stored index. */
export const MONTH_INDEX_HEADERS = { ContentType: 'application/json', ContentEncoding: 'gzip' } as const;

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
    const { block_bytes: _b, filters_bytes: _f, deleted_at, deleted_by, ...rest } = p;
    return {
      part: {
        ...rest,
        key: p.shared === true ? sharedKeyOf(v, p.name, key) : keyOf(v, p.name, key),
        ...(filters ? { filters } : {}),
      },
      ranges,
      deletedAt: deleted_at ?? null,
      deletedBy: deleted_by !== undefined ? deleted_by : deleted_at ? p.run_id : null,
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
      const counts = e.counts;
      if (!Array.isArray(counts) || counts.length !== COUNT_ORDER.length || !counts.every(isCount))
        return bad(`entry of job ${jobId} needs counts [chunk_ids, failed, skipped, conflict]`);
      if (typeof e.status !== 'string' || typeof e.completed_at !== 'string')
        return bad(`entry of job ${jobId} needs status and completed_at`);
      return {
        part: p.part.name,
        ...block(e.block ?? 0),
        status: e.status,
        completed_at: e.completed_at,
        committed_at: (e.committed_at as string | undefined) ?? p.part.committed_at,
        counts: Object.fromEntries(COUNT_ORDER.map((k, i) => [k, counts[i]])) as unknown as DetailCounts,
        platform_data: e.pd_block === undefined ? null : block(e.pd_block),
        sources: (e.sources as IndexedSource[] | undefined) ?? [],
        deleted_at: e.deleted_at === undefined ? p.deletedAt : (e.deleted_at as string | null),
        ...(typeof e.rearchive === 'string' ? { rearchive: e.rearchive } : {}),
        ...deletion(e.deleted_by === undefined ? p.deletedBy : (e.deleted_by as string | null), e.deleted),
      };
    });
  }
  return { ...v, parts: parts.map((p) => p.part), jobs };
};
