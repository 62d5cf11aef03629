import type { JobDetails } from '../../details';
import { NUMBERED } from './doc-lists';
import { COLD_PREFIX, SHARED } from './keys';
import { parsePartRecord } from './record-shape';
import type { ArchivedJobMeta, JobRecord, PartRecord } from './records';

/**
 * The flattening view: how the records of a part become rows, the one definition SQL (Athena views,
 * the local DuckDB engine) and search (findDocument) share. docs/wire-format.md, *Flattening*, says
 * the same for readers in other languages.
 *
 * - The header (first line) and `platform_data` lines are not rows; a job row keeps its
 *   `platform_data_ref` (join on part + ref for the payload).
 * - A job record's meta is its `job` where that has the field, else what its `row` implies
 *   (record-shape.ts restores both exactly as the reader does).
 * - `job_documents` has one row per (job, kind, reason, document): `failed` / `skipped` list document
 *   ids, `conflict` lists items whose `doc_id` is the document.
 */

/** Where a part is: its shop, month and object name (from its key; own parts' job lines carry none). */
export interface PartPlace {
  readonly shopId: string;
  readonly month: string;
  readonly part: string;
}

export type DetailKind = 'failed' | 'skipped' | 'conflict';
export const DETAIL_KINDS: readonly DetailKind[] = ['failed', 'skipped', 'conflict'];

/** A row of `jobs`: the archived meta (status, timestamps, counters) and where and how much. */
export interface FlatJob extends ArchivedJobMeta {
  readonly shop_id: string;
  readonly month: string;
  readonly part: string;
  readonly job_id: string;
  /** Chunk ids in the archived details. */
  readonly chunks: number;
  /** Listings in the archived details, per kind (all reasons). */
  readonly failed: number;
  readonly skipped: number;
  readonly conflict: number;
  readonly platform_data_ref: string | null;
}

/** A row of `job_documents`. */
export interface FlatDocument {
  readonly shop_id: string;
  readonly month: string;
  readonly part: string;
  readonly job_id: string;
  readonly status: string;
  readonly completed_at: string;
  readonly kind: DetailKind;
  readonly reason: string;
  readonly doc_id: string;
}

export type SqlType = 'varchar' | 'bigint';

/**
 * A view column: its SQL type and, for Athena, the Trino expression over the raw `parts` table row `j`
 * (Glue columns: `type`, `job_id`, `job` and `row` structs, `details` struct, `platform_data_ref`;
 * partition columns `shop_id`, `month`). `{shop}` / `{month}` stand for where the table gets them.
 */
export interface ViewColumn<R> {
  readonly name: keyof R & string;
  readonly type: SqlType;
  readonly athena: string;
}

const meta = (field: string, rowField = field): string => `COALESCE(j.job.${field}, j."row".${rowField})`;
/**
 * A string meta field: the row leaves out an attribute equal to its `completed_at` and names it in
 * `row_omitted` (records.ts, compactRow) — e.g. `started_at` of a job that completed in its first flush.
 */
const metaText = (field: string, rowField = field): string =>
  `COALESCE(j.job.${field}, j."row".${rowField}, CASE WHEN contains(j.row_omitted, '${rowField}') THEN j."row".completed_at END)`;
const listings = (kind: DetailKind): string =>
  `COALESCE(reduce(map_values(j.details.${kind}), 0, (s, l) -> s + cardinality(l), s -> s), 0)`;
const PART_NAME = `regexp_extract(j."$path", '[^/]+$')`;

/** Where a row lies and which archival it is: the first columns of both views. */
type Archival = Pick<FlatJob, 'shop_id' | 'month' | 'part' | 'job_id' | 'status' | 'completed_at'>;
const ARCHIVAL_COLUMNS: readonly ViewColumn<Archival>[] = [
  { name: 'shop_id', type: 'varchar', athena: '{shop}' },
  { name: 'month', type: 'varchar', athena: '{month}' },
  { name: 'part', type: 'varchar', athena: PART_NAME },
  { name: 'job_id', type: 'varchar', athena: 'j.job_id' },
  { name: 'status', type: 'varchar', athena: metaText('status', 'job_status') },
  { name: 'completed_at', type: 'varchar', athena: meta('completed_at') },
];

export const JOB_COLUMNS: readonly ViewColumn<FlatJob>[] = [
  ...ARCHIVAL_COLUMNS,
  { name: 'created_at', type: 'varchar', athena: metaText('created_at') },
  { name: 'started_at', type: 'varchar', athena: metaText('started_at') },
  { name: 'job_type', type: 'varchar', athena: metaText('job_type') },
  { name: 'platform', type: 'varchar', athena: metaText('platform') },
  { name: 'total_items', type: 'bigint', athena: meta('total_items') },
  { name: 'processed_items', type: 'bigint', athena: meta('processed_items') },
  { name: 'failed_items', type: 'bigint', athena: meta('failed_items') },
  { name: 'skipped_items', type: 'bigint', athena: meta('skipped_items') },
  { name: 'conflict_items', type: 'bigint', athena: meta('conflict_items') },
  { name: 'retry_count', type: 'bigint', athena: meta('retry_count') },
  { name: 'error_message', type: 'varchar', athena: metaText('error_message') },
  { name: 'chunks', type: 'bigint', athena: 'COALESCE(cardinality(j.details.chunk_ids), 0)' },
  { name: 'failed', type: 'bigint', athena: listings('failed') },
  { name: 'skipped', type: 'bigint', athena: listings('skipped') },
  { name: 'conflict', type: 'bigint', athena: listings('conflict') },
  { name: 'platform_data_ref', type: 'varchar', athena: 'j.platform_data_ref' },
];

/** `d.doc_id` / `r.reason` come from the UNNESTs of each kind's branch (see documentsViewSql). */
export const DOCUMENT_COLUMNS: readonly ViewColumn<FlatDocument>[] = [
  ...ARCHIVAL_COLUMNS,
  { name: 'kind', type: 'varchar', athena: "'{kind}'" },
  { name: 'reason', type: 'varchar', athena: 'r.reason' },
  { name: 'doc_id', type: 'varchar', athena: '{doc}' },
];

/**
 * Where a raw table gets shop and month (partition columns, the object's key, or a shared part's job
 * line) and which of its job lines a view takes (`keep`, beside `type = 'job'`).
 */
export interface ViewSource {
  readonly table: string;
  readonly shop: string;
  readonly month: string;
  readonly keep?: string;
}

const keyShop = `regexp_extract(j."$path", '/${COLD_PREFIX}([^/]+)/', 1)`;

/**
 * Own parts, partitioned by projection on `{shop}/{month}/`: `shop_id`, `month` are partition columns.
 * `_shared` is not a shop: the shared prefix (which `shop_id = '_shared'` would project) is read
 * through sharedSource. Left out by the object key, not by `shop_id <> …`: Athena allows only static
 * equality conditions on an `injected` column (CONSTRAINT_VIOLATION otherwise), and the query's own
 * `shop_id = …` is the one it needs.
 */
export const projectedSource = (table: string): ViewSource => ({
  table,
  shop: 'j.shop_id',
  month: 'j.month',
  keep: `${keyShop} <> '${SHARED}'`,
});

/**
 * Shared parts, partitioned by projection on `_shared/{month}/`: the shop is the job line's own
 * `shop_id` (a data column; Athena reads lines in no order, so not the segment header before them).
 */
export const sharedSource = (table: string): ViewSource => ({
  table,
  shop: 'j.shop_id',
  month: 'j.month',
  keep: 'j.shop_id IS NOT NULL',
});

/**
 * Unpartitioned over every part: month from the object key; the shop from the key, or in a shared
 * part (`_shared/` in the key) from the job line's `shop_id` (lines without one are left out).
 */
export const keyedSource = (table: string): ViewSource => {
  const shop = `CASE WHEN ${keyShop} = '${SHARED}' THEN j.shop_id ELSE ${keyShop} END`;
  return {
    table,
    shop,
    month: `regexp_extract(j."$path", '/${COLD_PREFIX}[^/]+/([0-9]{4}-[0-9]{2})/', 1)`,
    keep: `(${keyShop} <> '${SHARED}' OR j.shop_id IS NOT NULL)`,
  };
};

const fill = (expr: string, src: ViewSource, extra: Record<string, string> = {}): string =>
  expr.replace(/\{(\w+)\}/g, (m, k: string) =>
    k === 'shop' ? src.shop : k === 'month' ? src.month : (extra[k] ?? m),
  );

const where = (src: ViewSource): string =>
  src.keep ? `WHERE j.type = 'job' AND ${src.keep}` : "WHERE j.type = 'job'";

/** The Athena (Trino) SQL of the `jobs` view over raw parts tables (one UNION ALL branch each). */
export const jobsViewSql = (...sources: readonly ViewSource[]): string =>
  sources
    .map((src) =>
      [
        'SELECT',
        JOB_COLUMNS.map((c) => `  ${fill(c.athena, src)} AS ${c.name}`).join(',\n'),
        `FROM ${src.table} j`,
        where(src),
      ].join('\n'),
    )
    .join('\nUNION ALL\n');

/**
 * A stored failed / skipped list entry as the id it stands for (doc-lists.ts): a number (read by the
 * SerDe as its decimal text) is the list's first id with that number added to its own, a `~…` string
 * that string less its `~`, anything else the id itself.
 */
const storedId = (item: string, first: string): string =>
  `CASE WHEN regexp_like(${item}, '^-?[0-9]+$') ` +
  `THEN concat(regexp_extract(${first}, '${NUMBERED.source}', 1), CAST(CAST(regexp_extract(${first}, '${NUMBERED.source}', 2) AS bigint) + CAST(${item} AS bigint) AS varchar)) ` +
  `WHEN starts_with(${item}, '~') THEN substr(${item}, 2) ELSE ${item} END`;

/** The Athena (Trino) SQL of the `job_documents` view: one UNION ALL branch per table and kind. */
export const documentsViewSql = (...sources: readonly ViewSource[]): string =>
  sources
    .flatMap((src) =>
      DETAIL_KINDS.map((kind) => {
        const doc = kind === 'conflict' ? 'd.item.doc_id' : storedId('d.item', 'r.items[1]');
        return [
          'SELECT',
          DOCUMENT_COLUMNS.map((c) => `  ${fill(c.athena, src, { kind, doc })} AS ${c.name}`).join(',\n'),
          `FROM ${src.table} j`,
          `CROSS JOIN UNNEST(j.details.${kind}) AS r(reason, items)`,
          'CROSS JOIN UNNEST(r.items) AS d(item)',
          where(src),
        ].join('\n');
      }),
    )
    .join('\nUNION ALL\n');

/** Every (kind, reason, document) a job's details list, in kind order then as stored. */
export const documentListings = (
  details: JobDetails,
): Array<{ kind: DetailKind; reason: string; doc_id: string }> => {
  const out: Array<{ kind: DetailKind; reason: string; doc_id: string }> = [];
  for (const [reason, ids] of Object.entries(details.failed))
    for (const doc_id of ids) out.push({ kind: 'failed', reason, doc_id });
  for (const [reason, ids] of Object.entries(details.skipped))
    for (const doc_id of ids) out.push({ kind: 'skipped', reason, doc_id });
  for (const [reason, items] of Object.entries(details.conflict))
    for (const item of items) out.push({ kind: 'conflict', reason, doc_id: item.doc_id });
  return out;
};

const listingCount = (m: Readonly<Record<string, readonly unknown[]>>): number =>
  Object.values(m).reduce((n, l) => n + l.length, 0);

/** The `jobs` row of one job record (already restored by parsePartRecord). */
export const flattenJob = (r: JobRecord, at: PartPlace): FlatJob => ({
  shop_id: at.shopId,
  month: at.month,
  part: at.part,
  job_id: r.job_id,
  status: r.job.status,
  completed_at: r.job.completed_at,
  created_at: r.job.created_at,
  started_at: r.job.started_at,
  job_type: r.job.job_type,
  platform: r.job.platform,
  total_items: r.job.total_items,
  processed_items: r.job.processed_items,
  failed_items: r.job.failed_items,
  skipped_items: r.job.skipped_items,
  conflict_items: r.job.conflict_items,
  retry_count: r.job.retry_count,
  error_message: r.job.error_message,
  chunks: r.details.chunk_ids.length,
  failed: listingCount(r.details.failed),
  skipped: listingCount(r.details.skipped),
  conflict: listingCount(r.details.conflict),
  platform_data_ref: r.platform_data_ref,
});

/** The `job_documents` rows of one job record. */
export const flattenDocuments = (r: JobRecord, at: PartPlace): FlatDocument[] =>
  documentListings(r.details).map((l) => ({
    shop_id: at.shopId,
    month: at.month,
    part: at.part,
    job_id: r.job_id,
    status: r.job.status,
    completed_at: r.job.completed_at,
    ...l,
  }));

/** The place of a part from its key (`job-details-cold/{shop}/{month}/{name}`). */
export const partPlace = (key: string): PartPlace | null => {
  const m = /^job-details-cold\/([^/]+)\/(\d{4}-\d{2})\/([^/]+)$/.exec(key);
  return m?.[1] && m[2] && m[3] ? { shopId: m[1], month: m[2], part: m[3] } : null;
};

/**
 * Every row of a part, from its decoded JSON lines in order (header first). Lines are restored as the
 * reader restores them; anything malformed throws CorruptObjectError naming `where`.
 */
export const flattenPart = (
  lines: Iterable<unknown>,
  at: PartPlace,
  where: string,
): { jobs: FlatJob[]; documents: FlatDocument[] } => {
  const jobs: FlatJob[] = [];
  const documents: FlatDocument[] = [];
  let n = 0;
  // A shared part (docs/archive-format.md, "Shared parts") is segments of several shops, each opened
  // by its own header: its jobs are that shop's, not `_shared`'s.
  let here = at;
  for (const line of lines) {
    const rec: PartRecord = parsePartRecord(line, `${where} line ${++n}`, here.shopId);
    if (rec.type === 'part' && at.shopId === SHARED) here = { ...at, shopId: rec.shop_id };
    if (rec.type !== 'job') continue;
    // A shared part's job line names its shop (the same as its segment's header).
    const place = at.shopId === SHARED ? { ...here, shopId: rec.shop_id } : here;
    jobs.push(flattenJob(rec, place));
    documents.push(...flattenDocuments(rec, place));
  }
  return { jobs, documents };
};
