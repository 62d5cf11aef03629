import { INDEX_FORMAT } from './version';

/**
 * The month index's model (docs/archive-format.md, "Month index"): what a lookup, the archiver and
 * audit read in memory. Its edits are month-index-edit.ts, its bytes month-index-write.ts (the writer)
 * and month-index-read.ts (the reader, whole or a lookup's partial read).
 *
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
  /**
   * Bytes of hot objects read to build the part (for the report's in → out ratio), in memory only:
   * the index keeps it out (the part's records name their sources' sizes).
   */
  readonly bytes_in?: number;
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
  /**
   * Set once the part is settled (month-index-settle.ts `settlePart`): its entries have left the index
   * (`jobs` holds none pointing at it) and this summary answers for them. Absent: the part's entries
   * are in `jobs`, as committed.
   */
  readonly settled?: SettledPart;
}

/**
 * A settled part's summary (docs/archive-format.md, "Settled parts"). A part settles when every record
 * has exactly one entry, deleted with the part (one `deleted_at`/`deleted_by`), no sources left, no
 * `rearchive`, and its blocks hold ascending disjoint job id ranges (month-index-settle.ts
 * `blockDirectory`). Then each job's entry is the record's own: `completed_at` is the record's
 * `job.completed_at`, `committed_at` the part's, `deleted_at`/`deleted_by` these, no sources, its
 * platform data in its own block or the block `dir_pd` names (the record's `platform_data_ref` says
 * whether it has any). What the entries held and this does not: per-job `objects_deleted` counts.
 *
 * Names (stored as written here, on the part in the index header):
 * - `dir`: one per block, the shortest id that sorts at or below every job id of the block and above
 *   every id of the blocks before it; null for a block holding no job record;
 * - `last`: the part's last job id; `dir_pd`: `[[block, platform data block], …]` for the blocks whose
 *   jobs' platform data is in another block (a job line longer than a block);
 * - `block_bytes`: the compressed length of each block from byte 0 (stored only when not one block
 *   filling the part before its filters member);
 * - `deleted_at`, `deleted_by`: the part's delete (stored as the part's `deleted_at`, `deleted_by`);
 * - `job_filter` (stored `jf`, base64, and `jk` when k ≠ 7): a Golomb-coded set of the part's job
 *   ids (doc-filter.ts `golombFilter`), so an absent id is told without a block read. Optional: a
 *   part whose header would grow too large goes without.
 */
export interface SettledPart {
  readonly dir: ReadonlyArray<string | null>;
  readonly last: string;
  readonly dir_pd?: ReadonlyArray<readonly [number, number]>;
  readonly block_bytes: readonly number[];
  readonly deleted_at: string;
  readonly deleted_by: string | null;
  readonly job_filter?: JobFilter;
}

/** A settled part's job filter: a Golomb-coded set of its `job_count` job ids, Rice parameter `k`. */
export interface JobFilter {
  readonly k: number;
  readonly bytes: Uint8Array;
}

/**
 * The job filter's Rice parameter as settled: 1/128 false matches a part, ~8.6 bits a job (stored `jk`
 * only when another: the writer lowers it, down to JOB_FILTER_MIN_K, for a header that would pass
 * INDEX_HEADER_BYTES, then leaves the filter out).
 */
export const JOB_FILTER_K = 7;
export const JOB_FILTER_MIN_K = 3;

/**
 * The most a header member may take with its parts' job filters (gzipped): half a lookup's first read,
 * so a large month's header and its first entry block stay in it.
 */
export const INDEX_HEADER_BYTES = 32 * 1024;

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
  /**
   * The completion archived (the job record's `job.completed_at`): the archive step's classify and
   * delete-plan ask whether this completion is archived, readers whether it is the newest. Stored as
   * milliseconds from the start of the month when it is the canonical `…T…Z` form (it always is from
   * the archiver), else as text. The job's status and detail counts are the record's alone: every
   * consumer reads the record anyway, and the index stays in Standard for good.
   */
  readonly completed_at: string;
  readonly committed_at: string;
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

/** The newest entry of a job (entries are appended in commit order). */
export const latestEntry = (index: MonthIndex, jobId: string): IndexedJob | undefined => {
  const entries = jobEntries(index.jobs, jobId);
  return entries[entries.length - 1];
};

export const partByName = (index: MonthIndex, name: string): IndexedPart | undefined =>
  index.parts.find((p) => p.name === name);

/**
 * Bytes of an index a lookup reads first (shared/reader/archive-reads.ts): a month's whole index up to
 * ~3,000–3,600 jobs (18–22 bytes a job once compressed and deleted), so one GET. In a larger index
 * whose parts are settled, the header's block directories name the record block to read next (≤ 64 KB
 * + the block); otherwise one more ranged GET of the job's entry block (≤ 64 + ~12 + the block's KB).
 */
export const INDEX_FIRST_READ_BYTES = 64 * 1024;

/** Uncompressed JSON per block of job entries (~11 KB compressed): a lookup reads one, not the month. */
export const INDEX_BLOCK_BYTES = 32 * 1024;

/** Where a block of job entries sits: offset from the end of the header member, and its job id range. */
export interface IndexBlock {
  readonly first: string;
  readonly last: string;
  readonly offset: number;
  readonly length: number;
}

/** Unix milliseconds of the start of `month` (`yyyy-mm`, month 01–12, UTC); NaN for anything else (no rollover). */
const monthStart = (month: string): number => {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, 1) : Number.NaN;
};

/** Instants a stored `completed` number may name: 1970-01-01 up to the end of year 9999 (four-digit years). */
const LAST_INSTANT = Date.UTC(10000, 0, 1) - 1;

/**
 * An entry's `completed` as stored: milliseconds from the start of the index's month when the
 * completion is in the canonical form `new Date(…).toISOString()` writes, 1970 to 9999 (the
 * archiver's always is: 10 digits instead of a 24-character string), else the text itself.
 */
export const storedCompletion = (month: string, completedAt: string): number | string => {
  const t = Date.parse(completedAt);
  const start = monthStart(month);
  if (Number.isNaN(t) || Number.isNaN(start) || t < 0 || t > LAST_INSTANT) return completedAt;
  return new Date(t).toISOString() === completedAt ? t - start : completedAt;
};

/** The completion a stored `completed` names, or undefined when it is neither form. */
export const completionOf = (month: string, stored: unknown): string | undefined => {
  if (typeof stored === 'string') return stored;
  if (typeof stored !== 'number' || !Number.isSafeInteger(stored)) return undefined;
  const t = monthStart(month) + stored;
  return t >= 0 && t <= LAST_INSTANT ? new Date(t).toISOString() : undefined;
};
