import { gunzipSync as gunzipAll } from 'node:zlib';
import { gzipSync } from 'fflate';
import { CorruptObjectError } from '../errors';
import { partKey } from './keys';
import type { DetailCounts } from './records';

/**
 * The month index `job-details-index/{shop}/{yyyy-mm}/index.json` is the commit: a part exists for
 * readers only once its entry is here. It lives in Standard storage (never transitions), so lookups
 * stay instant even when parts sit in Glacier Flexible Retrieval. Parts are never rewritten; this small
 * file is, with a conditional write (If-Match / If-None-Match) so concurrent runs cannot lose entries.
 */
export const INDEX_FORMAT = 'job-details-archive/index@2';
/** Entries with their record digest, platform data ref and commit time each; still read. */
export const INDEX_FORMAT_V1 = 'job-details-archive/index@1';

export interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

/**
 * Where a record sits: the byte range of the gzip member (block) holding it in the part, and its line
 * inside the member once inflated. `line` absent: the member holds exactly this one line (part@1).
 */
export interface Located extends ByteRange {
  readonly line?: ByteRange;
}

export interface IndexedPart {
  readonly name: string;
  /** Its key; index@2 stores none (it is `job-details-cold/{shop}/{month}/{name}`). */
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  /** sha256 of the part's bytes: index@1 only (verify checks it before the commit; size + ETag name it after). */
  readonly sha256?: string;
  readonly run_id: string;
  readonly committed_at: string;
  readonly job_count: number;
  /** Bytes of hot objects read to build the part (for the report's in → out ratio). */
  readonly bytes_in: number;
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
   * sha256 of the uncompressed record line: index@1 only. index@2 keeps it out (every lookup reads the
   * index, and a digest is ~33 incompressible bytes a job): a block's gzip CRC-32 catches corruption,
   * and the reader checks the record names the job it asked for.
   */
  readonly sha256?: string;
  readonly status: string;
  readonly completed_at: string;
  readonly committed_at: string;
  readonly counts: DetailCounts;
  /** Where the job's platform data record is; index@1 also names its ref (the job record does). */
  readonly platform_data: (Located & { readonly ref?: string }) | null;
  /**
   * The hot objects this entry covers; delete removes only objects that still match these. Emptied
   * once they are deleted: the index stays in Standard for good and every lookup reads it, while the
   * part's own record keeps the manifest for anyone tracing an archived byte to its object.
   */
  readonly sources: readonly IndexedSource[];
  /** Set once the delete step removed the matching hot objects. */
  readonly deleted_at: string | null;
}

export interface MonthIndex {
  readonly format: typeof INDEX_FORMAT | typeof INDEX_FORMAT_V1;
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

/** Marks the given entries (by part) of each job as deleted and drops their source manifests. */
export const markDeleted = (
  index: MonthIndex,
  done: ReadonlyArray<{ jobId: string; part: string }>,
  at: string,
): MonthIndex => {
  if (done.length === 0) return index;
  const jobs: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  for (const { jobId, part } of done) {
    jobs[jobId] = jobEntries(jobs, jobId).map((e) =>
      e.part === part && e.deleted_at === null ? { ...e, deleted_at: at, sources: [] } : e,
    );
  }
  return { ...index, updated_at: at, jobs };
};

export const partByName = (index: MonthIndex, name: string): IndexedPart | undefined =>
  index.parts.find((p) => p.name === name);

/** An entry as index@2 stores it: no digest, no platform ref, no commit time when it is its part's. */
const slimEntry = (e: IndexedJob, partCommittedAt: string | undefined): Record<string, unknown> => {
  const { sha256: _digest, platform_data, committed_at, ...rest } = e;
  return {
    ...rest,
    platform_data: platform_data === null ? null : stripRef(platform_data),
    ...(committed_at === partCommittedAt ? {} : { committed_at }),
  };
};
const stripRef = ({ ref: _ref, ...located }: Located & { ref?: string }): Located => located;

/** Uncompressed JSON per block of job entries: a lookup reads one block, not the whole month. */
export const INDEX_BLOCK_BYTES = 64 * 1024;

/** Where a block of job entries sits: offset from the end of the header member, and its job id range. */
export interface IndexBlock {
  readonly first: string;
  readonly last: string;
  readonly offset: number;
  readonly length: number;
}

const gzipLine = (value: unknown): Buffer =>
  Buffer.from(gzipSync(Buffer.from(`${JSON.stringify(value)}\n`, 'utf8'), { level: 9, mtime: 0 }));

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The index as stored (index@2, `Content-Encoding: gzip`): JSONL in gzip members. The first member is
 * the header — format, shop, month, parts — and either the jobs themselves (a month whose entries fit
 * in one block) or `blocks`: the byte range and job id range of each further member, each holding
 * the entries of a run of job ids in code-point order, ≤ INDEX_BLOCK_BYTES of JSON. `gzip -dc` reads
 * it all; a lookup reads the header and one block (shared/reader/archive-reads.ts). Indexes written
 * before (index@1, plain or gzipped JSON) are still read.
 */
export const serializeMonthIndex = (index: MonthIndex): Buffer => {
  const committed = new Map(index.parts.map((p) => [p.name, p.committed_at]));
  const parts = index.parts.map(({ key: _key, sha256: _digest, ...p }) => p);
  const { jobs: _jobs, ...head } = index;
  const ids = Object.keys(index.jobs).sort(byCodePoint);
  const chunks: Array<Record<string, unknown>> = [];
  let current: Record<string, unknown> = {};
  let size = 0;
  for (const id of ids) {
    const entries = jobEntries(index.jobs, id).map((e) => slimEntry(e, committed.get(e.part)));
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
  if (chunks.length === 1) return gzipLine({ ...head, format: INDEX_FORMAT, parts, jobs: chunks[0] });
  const members = chunks.map((jobs) => gzipLine({ jobs }));
  let offset = 0;
  const blocks: IndexBlock[] = chunks.map((jobs, i) => {
    const keys = Object.keys(jobs);
    const length = (members[i] as Buffer).length;
    const b = { first: keys[0] as string, last: keys[keys.length - 1] as string, offset, length };
    offset += length;
    return b;
  });
  return Buffer.concat([gzipLine({ ...head, format: INDEX_FORMAT, parts, blocks }), ...members]);
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
  for (const b of blocks) Object.assign(jobs, b.jobs as Record<string, unknown>);
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
  if (!v || typeof v !== 'object' || (v.format !== INDEX_FORMAT && v.format !== INDEX_FORMAT_V1)) {
    throw new CorruptObjectError(key, `not a ${INDEX_FORMAT} (or @1) document`);
  }
  if (typeof v.shop_id !== 'string' || typeof v.month !== 'string' || !Array.isArray(v.parts)) {
    throw new CorruptObjectError(key, 'index needs shop_id, month and parts');
  }
  if (!v.jobs || typeof v.jobs !== 'object' || Array.isArray(v.jobs)) {
    throw new CorruptObjectError(key, 'index needs a jobs map');
  }
  // index@2 stores no part keys: they follow from shop, month and name.
  const parts = v.parts.map((p) =>
    p && typeof p === 'object' && p.key === undefined && typeof p.name === 'string'
      ? { ...p, key: partKey(v.shop_id as string, v.month as string, p.name) }
      : p,
  );
  const committed = new Map(parts.map((p) => [p?.name, p?.committed_at]));
  const jobs: Record<string, IndexedJob[]> = {};
  for (const [jobId, entries] of Object.entries(v.jobs)) {
    if (!Array.isArray(entries)) throw new CorruptObjectError(key, `entries of job ${jobId} must be a list`);
    jobs[jobId] = entries.map((e: IndexedJob) => {
      if (!e || typeof e.offset !== 'number' || typeof e.length !== 'number' || !committed.has(e.part)) {
        throw new CorruptObjectError(key, `entry of job ${jobId} points at no committed part`);
      }
      // index@2 leaves out a commit time equal to its part's.
      return e.committed_at === undefined ? { ...e, committed_at: committed.get(e.part) as string } : e;
    });
  }
  return { ...(v as MonthIndex), parts, jobs };
};
