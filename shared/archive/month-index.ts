import { gunzipSync, gzipSync } from 'fflate';
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

/**
 * The index as stored: gzipped JSON (`Content-Encoding: gzip`) in the index@2 shape, since every lookup
 * reads it whole and it stays in Standard storage for good. Indexes written before (index@1, plain or
 * gzipped) are still read.
 */
export const serializeMonthIndex = (index: MonthIndex): Buffer => {
  const committed = new Map(index.parts.map((p) => [p.name, p.committed_at]));
  const jobs = Object.fromEntries(
    Object.entries(index.jobs).map(([id, entries]) => [
      id,
      entries.map((e) => slimEntry(e, committed.get(e.part))),
    ]),
  );
  const parts = index.parts.map(({ key: _key, sha256: _digest, ...p }) => p);
  const stored = { ...index, format: INDEX_FORMAT, parts, jobs };
  return Buffer.from(gzipSync(Buffer.from(JSON.stringify(stored), 'utf8'), { level: 9, mtime: 0 }));
};

/** Object headers of a stored index. */
export const MONTH_INDEX_HEADERS = { ContentType: 'application/json', ContentEncoding: 'gzip' } as const;

/** Parses and checks an index read back from S3; malformed → CorruptObjectError naming the key. */
export const parseMonthIndex = (bytes: Uint8Array, key: string): MonthIndex => {
  let value: unknown;
  try {
    const text = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
    value = JSON.parse(Buffer.from(text).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'index is not (gzipped) JSON', { cause: err });
  }
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
