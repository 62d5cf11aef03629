/**
 * The SQL surface over the archive, the same on Athena (the construct's `sql` prop) and on the local
 * DuckDB engine (`jobarchive sql`): four views of the flattened parts (shared/archive/format/flatten.ts)
 * and the documented queries, written once here. docs/search-and-sql.md shows these texts verbatim (a
 * test holds it to them) and the construct creates them as Athena named queries.
 *
 * The queries use only SQL both engines read the same way, with `?` positional parameters (Athena
 * `ExecutionParameters`, DuckDB prepared statements).
 */
export const SQL_VIEWS = {
  /** One row per archived job; over the projected table: give `shop_id` (and months) to prune. */
  jobs: 'jobs',
  /** One row per (job, kind, reason, document); projected like `jobs`. */
  documents: 'job_documents',
  /** `jobs` over every part of every shop (reads the whole archive; no partitions). */
  fleetJobs: 'fleet_jobs',
  /** `job_documents` over every part of every shop. */
  fleetDocuments: 'fleet_job_documents',
} as const;

export interface DocumentedQuery {
  /** Kebab-case name: `jobarchive sql --query NAME`, the Athena named query's name suffix. */
  readonly name: string;
  readonly title: string;
  /** The `?` parameters in order, each with an example value. */
  readonly params: readonly { readonly name: string; readonly example: string }[];
  readonly sql: string;
}

export const DOCUMENTED_QUERIES: readonly DocumentedQuery[] = [
  {
    name: 'failures-by-reason',
    title: 'Failures by reason per month, fleet-wide',
    params: [
      { name: 'from month', example: '2026-01' },
      { name: 'to month', example: '2026-03' },
    ],
    sql: `SELECT month, reason,
       COUNT(*) AS listings,
       COUNT(DISTINCT job_id) AS jobs,
       COUNT(DISTINCT shop_id) AS shops
FROM fleet_job_documents
WHERE kind = 'failed' AND month BETWEEN ? AND ?
GROUP BY month, reason
ORDER BY month, listings DESC, reason`,
  },
  {
    name: 'shops-with-reason',
    title: 'Shops that hit a reason',
    params: [
      { name: 'kind', example: 'failed' },
      { name: 'reason', example: 'timeout' },
      { name: 'from month', example: '2026-01' },
      { name: 'to month', example: '2026-03' },
    ],
    sql: `SELECT shop_id,
       COUNT(*) AS listings,
       COUNT(DISTINCT job_id) AS jobs,
       MIN(completed_at) AS first_seen,
       MAX(completed_at) AS last_seen
FROM fleet_job_documents
WHERE kind = ? AND reason = ? AND month BETWEEN ? AND ?
GROUP BY shop_id
ORDER BY listings DESC, shop_id`,
  },
  {
    name: 'document-history',
    title: "One document's history in one shop",
    params: [
      { name: 'shop id', example: 'acme.myshopify.com' },
      { name: 'document id', example: 'gid://shopify/Product/7020976000154' },
      { name: 'from month', example: '2026-01' },
      { name: 'to month', example: '2026-03' },
    ],
    sql: `SELECT completed_at, job_id, status, kind, reason
FROM job_documents
WHERE shop_id = ? AND doc_id = ? AND month BETWEEN ? AND ?
ORDER BY completed_at DESC, job_id, kind, reason`,
  },
  {
    name: 'jobs-per-status',
    title: 'Jobs per status and month in one shop',
    params: [
      { name: 'shop id', example: 'acme.myshopify.com' },
      { name: 'from month', example: '2026-01' },
      { name: 'to month', example: '2026-03' },
    ],
    sql: `SELECT month, status, COUNT(*) AS jobs
FROM jobs
WHERE shop_id = ? AND month BETWEEN ? AND ?
GROUP BY month, status
ORDER BY month, status`,
  },
];

export const documentedQuery = (name: string): DocumentedQuery | undefined =>
  DOCUMENTED_QUERIES.find((q) => q.name === name);
