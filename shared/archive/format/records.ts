import type { JobDetails, JsonObject } from '../../details';
import { normalizedOrAsIs } from '../../time';
import type { StoredDetails } from './doc-lists';

/**
 * The records of an archive part (format 1, docs/archive-format.md "Records"). A part is JSONL.gz: one
 * JSON object per line, the lines packed into gzip members (blocks), so `gzip -dc part | jq .` reads
 * the whole part and a ranged GET of one block decompresses alone.
 */
/** First record of every part: what it is, for humans and tools. */
export interface PartHeaderRecord {
  readonly type: 'part';
  /** version.ts PART_FORMAT. */
  readonly format: string;
  readonly shop_id: string;
  readonly month: string;
  readonly run_id: string;
}

/**
 * One per distinct platform-data payload in the part. `ref` is what job records point at: a
 * part-local ordinal ("1", "2", … in order of appearance; in a shared part, of the shop's segment).
 */
export interface PlatformDataRecord {
  readonly type: 'platform_data';
  readonly ref: string;
  readonly data: unknown;
}

/** A hot object the job record was built from. `sha256` is of the object's stored bytes. */
export interface SourceObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly sha256: string;
}

/**
 * A source as a job record names it: key and size. The ETag (what delete matches) lives in the month
 * index until the objects are gone, and digests of bytes that no longer exist would cost ~50
 * incompressible bytes each at rest forever.
 */
export type RecordSource = Pick<SourceObject, 'key' | 'size'>;

/** The job row as it was when archived (the row itself expires by TTL). */
export interface ArchivedJobMeta {
  readonly status: string;
  readonly created_at: string | null;
  readonly started_at: string | null;
  readonly completed_at: string;
  readonly job_type: string | null;
  readonly platform: string | null;
  readonly total_items: number | null;
  readonly processed_items: number | null;
  readonly failed_items: number | null;
  readonly skipped_items: number | null;
  readonly conflict_items: number | null;
  readonly retry_count: number | null;
  readonly error_message: string | null;
}

export interface JobRecord {
  readonly type: 'job';
  readonly shop_id: string;
  readonly job_id: string;
  readonly job: ArchivedJobMeta;
  readonly details: JobDetails;
  readonly platform_data_ref: string | null;
  readonly sources: readonly RecordSource[];
  /**
   * The whole base-table item as archived (jobs/row-json.ts: every attribute under its own name),
   * minus `row_reduced` and `inline`. Null when the row had expired before archival (then `job`
   * holds the whole meta).
   */
  readonly row?: JsonObject | null;
  /** Attributes kept as their size only, e.g. `{completed_chunks: 200}` (absent when none). */
  readonly row_reduced?: Readonly<Record<string, number>>;
  /** Pre-migration detail attributes of the row, merged into `details` / platform data (absent when none). */
  readonly inline?: readonly string[];
}

/**
 * A part's last line (its own gzip member, after every block): the blocks' document filters
 * (doc-filter.ts filtersMember). Whole-part readers skip it; search reads it alone.
 */
export interface DocFiltersRecord {
  readonly type: 'doc_filters';
}

export type PartRecord = PartHeaderRecord | PlatformDataRecord | JobRecord | DocFiltersRecord;

/**
 * A job record as stored: no shop id in an own part (the header's), `job` only what differs from its row
 * (see metaDiff; absent when nothing does), `platform_data_ref` absent when null, sources as
 * `{name: size}` under the job's hot prefix (see compactSources).
 */
export type StoredJobRecord = Omit<
  JobRecord,
  'job' | 'shop_id' | 'platform_data_ref' | 'sources' | 'details'
> & {
  /** The details with their document lists as stored (doc-lists.ts). */
  readonly details: StoredDetails;
  readonly job?: Partial<ArchivedJobMeta>;
  readonly platform_data_ref?: string;
  readonly sources: Readonly<Record<string, number>> | readonly RecordSource[];
  /** Row attributes left out as implied (see compactRow). */
  readonly row_omitted?: readonly string[];
  /** The row's `ttl` less the Unix seconds of its `completed_at`; the row then has no `ttl` (see compactRow). */
  readonly row_ttl_after?: number;
  /**
   * The shop, on job lines of shared parts only (its segment header's shop): SQL on Athena reads lines
   * in no order, so it cannot take the shop from the header before them. Absent in own parts.
   */
  readonly shop_id?: string;
};

/**
 * Sources as stored: `{name: size}`, each name relative to `job-details/{job_id}/` (every
 * source of a job lives there). Falls back to the list form should any key lie elsewhere.
 */
export const compactSources = (
  prefix: string,
  sources: readonly RecordSource[],
): Readonly<Record<string, number>> | RecordSource[] => {
  if (!sources.every((s) => s.key.startsWith(prefix) && s.key.length > prefix.length))
    return sources.map((s) => ({ key: s.key, size: s.size }));
  return Object.fromEntries(sources.map((s) => [s.key.slice(prefix.length), s.size]));
};

/** Per-job counts kept in the index so audits need not open parts. */
export interface DetailCounts {
  readonly chunk_ids: number;
  readonly failed: number;
  readonly skipped: number;
  readonly conflict: number;
}

export const countDetails = (d: JobDetails): DetailCounts => {
  const sum = (m: Record<string, readonly unknown[]>) => Object.values(m).reduce((n, l) => n + l.length, 0);
  return {
    chunk_ids: d.chunk_ids.length,
    failed: sum(d.failed),
    skipped: sum(d.skipped),
    conflict: sum(d.conflict),
  };
};

type Row = Readonly<Record<string, unknown>>;
const rowStr = (row: Row, f: string): string | null =>
  typeof row[f] === 'string' ? (row[f] as string) : null;
const rowNum = (row: Row, f: string): number | null =>
  typeof row[f] === 'number' && Number.isFinite(row[f]) ? (row[f] as number) : null;
const rowTime = (row: Row, f: string): string | null => normalizedOrAsIs(rowStr(row, f));

/** The job meta a row implies (timestamps normalized as the archiver normalizes them). */
export const metaFromRow = (row: Row): ArchivedJobMeta => ({
  status: rowStr(row, 'job_status') ?? '',
  created_at: rowTime(row, 'created_at'),
  started_at: rowTime(row, 'started_at'),
  completed_at: rowTime(row, 'completed_at') ?? '',
  job_type: rowStr(row, 'job_type'),
  platform: rowStr(row, 'platform'),
  total_items: rowNum(row, 'total_items'),
  processed_items: rowNum(row, 'processed_items'),
  failed_items: rowNum(row, 'failed_items'),
  skipped_items: rowNum(row, 'skipped_items'),
  conflict_items: rowNum(row, 'conflict_items'),
  retry_count: rowNum(row, 'retry_count'),
  error_message: rowStr(row, 'error_message'),
});

/**
 * A record stores a job's meta as its difference from `metaFromRow(row)` when the record keeps the row
 * (usually `{}`): the row already holds every one of those values.
 */
export const metaDiff = (meta: ArchivedJobMeta, row: Row): Partial<ArchivedJobMeta> => {
  const implied = metaFromRow(row) as unknown as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(meta).filter(([k, v]) => implied[k] !== v),
  ) as Partial<ArchivedJobMeta>;
};

/**
 * A record stores a row without what the record already says, naming each left-out attribute in
 * `row_omitted`: `pk`, `sk` and `job_id` when they are `SHOP#{shop_id}`, `JOB#{job_id}` and the job
 * id, and any attribute whose value is the row's own `completed_at` string (writers set
 * `last_updated`, often `status_created_at`, at completion). `expandRow` restores the row exactly.
 */
const IDENTITY: Readonly<Record<string, (shopId: string, jobId: string) => string>> = {
  pk: (shopId) => `SHOP#${shopId}`,
  sk: (_shopId, jobId) => `JOB#${jobId}`,
  job_id: (_shopId, jobId) => jobId,
};

export const compactRow = (
  row: JsonObject,
  shopId: string,
  jobId: string,
): { row: JsonObject; omitted: string[]; ttlAfter?: number } => {
  const out: Record<string, unknown> = {};
  const omitted: string[] = [];
  for (const [k, v] of Object.entries(row)) {
    const identity = IDENTITY[k];
    const implied = identity ? identity(shopId, jobId) : k !== 'completed_at' ? row.completed_at : undefined;
    if (typeof implied === 'string' && v === implied) omitted.push(k);
    else out[k] = v;
  }
  // The TTL as its distance from the completion: one constant a deployment (JDA_JOB_TTL_DAYS), where
  // the epoch seconds themselves are ten digits that compress badly (~5.5 bytes a job at rest).
  const at = completedSeconds(row.completed_at);
  const ttl = out[TTL];
  if (at !== null && typeof ttl === 'number' && Number.isSafeInteger(ttl) && Number.isSafeInteger(ttl - at)) {
    delete out[TTL];
    return { row: out as JsonObject, omitted, ttlAfter: ttl - at };
  }
  return { row: out as JsonObject, omitted };
};

/** The row's TTL attribute (epoch seconds, shared/jobs/schema.ts `ttlAttribute`). */
const TTL = 'ttl';

/**
 * The whole Unix seconds of a UTC `completed_at` written as `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)`
 * (JavaScript's toISOString, Python's isoformat), the fraction ignored; null for any other text or a
 * date that is not in the calendar. `row_ttl_after` is counted from it (docs/archive-format.md).
 */
const UTC_SECONDS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|\+00:00)$/;
const completedSeconds = (value: unknown): number | null => {
  const m = typeof value === 'string' ? UTC_SECONDS.exec(value) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (y < 1000) return null;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  // Date.UTC rolls 2026-02-30 over to March: only a date-time it gives back unchanged counts.
  if (new Date(ms).toISOString().slice(0, 19) !== (value as string).slice(0, 19)) return null;
  return ms / 1000;
};

export const expandRow = (
  row: JsonObject,
  shopId: string,
  jobId: string,
  omitted: readonly string[],
  ttlAfter?: number,
): JsonObject => {
  if (omitted.length === 0 && ttlAfter === undefined) return row;
  const out: Record<string, unknown> = { ...row };
  for (const k of omitted) {
    const identity = IDENTITY[k];
    out[k] = identity ? identity(shopId, jobId) : row.completed_at;
  }
  if (ttlAfter !== undefined) {
    const at = completedSeconds(row.completed_at);
    if (at === null) throw new Error('row_ttl_after needs a UTC completed_at');
    out[TTL] = at + ttlAfter;
  }
  // Keys in the writer's order (canonical JSON sorts them).
  return Object.fromEntries(
    Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ) as JsonObject;
};
