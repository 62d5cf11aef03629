import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { planFleet } from '../../../infra/cli/fleet';
import { mapLimit } from '../../../shared/concurrency';
import { encodeFlushBody, encodePlatformData, flushIdForChunks } from '../../../shared/details';
import { detailsKey, platformDataKey } from '../../../shared/details/keys';
import type { JobDetailsPayload } from '../../../shared/details/payload';
import { hasDetails } from '../../../shared/jobs/record-flush';
import { jobPk, jobSk } from '../../../shared/jobs/schema';

/**
 * The archive benchmark's workload: terminal jobs as the hot path leaves them (rows + flush objects +
 * platform-data.json), deterministic per seed, written straight to the stores (the writer library is
 * benchmarked elsewhere; here only what the archiver finds matters).
 *
 * Job sizes follow the design (seeds/000): the indexer flushes every 50 chunks of ~100 documents; a
 * typical job has 200 chunks (4 flushes). The mix:
 *
 * | share | job | chunks | flushes |
 * |---|---|---|---|
 * | 70 % | small | 1–20 | 1 |
 * | 27 % | typical | 200 | 4 |
 * | 3 % | huge | 1,000–2,000 | 20–40 |
 *
 * Outcome rates per document: failed 0–3 %, skipped 0–5 %, conflict 0–1 %; about half the small
 * jobs have no details at all (no flush object). Doc ids are Shopify GIDs
 * (`gid://shopify/Product/7234567890123`), reasons from a short vocabulary: the lists compress
 * 5–10× (gzip), as the design says. 90 % of jobs write a platform-data.json (~300 B).
 */
export interface BenchJob {
  readonly shopId: string;
  readonly jobId: string;
  readonly completedAt: string;
  readonly createdAt: string;
  readonly status: 'COMPLETED' | 'FAILED' | 'CONFLICT';
  readonly totalItems: number;
  readonly counts: { processed: number; failed: number; skipped: number; conflict: number };
  readonly chunkIds: string[];
  readonly flushes: JobDetailsPayload[];
  readonly platformData: Record<string, unknown> | null;
}

/** mulberry32: tiny, seeded, good enough for workloads. */
export const prng = (seed: number) => {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
};
type Prng = ReturnType<typeof prng>;

const FAILED = ['mapping_error', 'invalid_price', 'image_fetch_failed', 'upstream_5xx', 'payload_too_large'];
const SKIPPED = ['unpublished', 'no_variants', 'hidden_out_of_stock', 'missing_required_field'];
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const DOCS_PER_CHUNK = 100;
const CHUNKS_PER_FLUSH = 50;

const push = <T>(m: Record<string, T[]>, reason: string, v: T): void => {
  const list = m[reason];
  if (list) list.push(v);
  else m[reason] = [v];
};

const jobIdOf = (r: Prng): string => Array.from({ length: 13 }, () => BASE32[r.int(0, 31)]).join('');

export interface JobShape {
  /** Override the mix: a job of exactly this many chunks. */
  readonly chunks?: number;
  /** Multiplies the outcome rates (the memory scenario uses detail-heavy jobs). */
  readonly detailRate?: number;
}

export const makeJob = (r: Prng, shopId: string, month: string, shape: JobShape = {}): BenchJob => {
  const kind = r.next();
  const chunks = shape.chunks ?? (kind < 0.7 ? r.int(1, 20) : kind < 0.97 ? 200 : r.int(1000, 2000));
  const clean = shape.chunks === undefined && kind < 0.35;
  const rate = shape.detailRate ?? 1;
  const fr = clean ? 0 : r.next() * 0.03 * rate;
  const sr = clean ? 0 : r.next() * 0.05 * rate;
  const cr = clean ? 0 : r.next() * 0.01 * rate;
  const product = () => `gid://shopify/Product/${7_000_000_000_000 + r.int(0, 999_999_999)}`;
  const flushes: JobDetailsPayload[] = [];
  const counts = { processed: 0, failed: 0, skipped: 0, conflict: 0 };
  const chunkIds: string[] = [];
  for (let start = 0; start < chunks; start += CHUNKS_PER_FLUSH) {
    const ids = Array.from({ length: Math.min(CHUNKS_PER_FLUSH, chunks - start) }, (_, i) => `p${start + i}`);
    chunkIds.push(...ids);
    const failed: Record<string, string[]> = {};
    const skipped: Record<string, string[]> = {};
    const conflict: Record<string, { doc_id: string; existing_version: number; incoming_version: number }[]> =
      {};
    for (let d = 0; d < ids.length * DOCS_PER_CHUNK; d++) {
      const x = r.next();
      if (x < fr) push(failed, FAILED[r.int(0, FAILED.length - 1)] as string, product());
      else if (x < fr + sr) push(skipped, SKIPPED[r.int(0, SKIPPED.length - 1)] as string, product());
      else if (x < fr + sr + cr) {
        const v = r.int(1, 40);
        push(conflict, 'version_conflict', {
          doc_id: product(),
          existing_version: v + 1,
          incoming_version: v,
        });
      } else counts.processed++;
    }
    for (const l of Object.values(failed)) counts.failed += l.length;
    for (const l of Object.values(skipped)) counts.skipped += l.length;
    for (const l of Object.values(conflict)) counts.conflict += l.length;
    if (Object.keys(failed).length + Object.keys(skipped).length + Object.keys(conflict).length > 0) {
      flushes.push({ chunk_ids: [...ids].sort(), failed, skipped, conflict });
    }
  }
  const day = String(r.int(1, 28)).padStart(2, '0');
  const hh = String(r.int(0, 23)).padStart(2, '0');
  const completedAt = `${month}-${day}T${hh}:${String(r.int(10, 59)).padStart(2, '0')}:00.000Z`;
  const createdAt = `${month}-${day}T${hh}:00:00.000Z`;
  const status = counts.failed > 0 ? 'FAILED' : counts.conflict > 0 ? 'CONFLICT' : 'COMPLETED';
  return {
    shopId,
    jobId: jobIdOf(r),
    completedAt,
    createdAt,
    status,
    totalItems: chunks * DOCS_PER_CHUNK,
    counts,
    chunkIds,
    flushes,
    platformData:
      r.next() < 0.9
        ? {
            indexer: { batch_size: 50, currency: 'USD', locale: 'en', include_drafts: r.next() < 0.2 },
            source: { platform: 'shopify', api_version: '2025-07', shop: shopId },
          }
        : null,
  };
};

/** What the stores hold for one job: the row and the objects (key → bytes). */
export const objectsOf = (j: BenchJob): { key: string; body: Buffer }[] => [
  ...j.flushes.map((f) => ({
    key: detailsKey(j.jobId, flushIdForChunks([...f.chunk_ids])),
    body: encodeFlushBody(f),
  })),
  ...(j.platformData ? [{ key: platformDataKey(j.jobId), body: encodePlatformData(j.platformData) }] : []),
];

export const rowOf = (j: BenchJob, ttlDays = 3650): Record<string, unknown> => ({
  pk: jobPk(j.shopId),
  sk: jobSk(j.jobId),
  job_id: j.jobId,
  job_status: j.status,
  status_created_at: j.completedAt,
  created_at: j.createdAt,
  started_at: j.createdAt,
  completed_at: j.completedAt,
  last_updated: j.completedAt,
  total_items: j.totalItems,
  processed_items: j.counts.processed,
  failed_items: j.counts.failed,
  skipped_items: j.counts.skipped,
  conflict_items: j.counts.conflict,
  completed_chunks: new Set(j.chunkIds),
  job_type: 'full_sync',
  platform: 'shopify',
  ttl: Math.floor(Date.parse(j.completedAt) / 1000) + ttlDays * 86400,
});

export interface Written {
  readonly objects: number;
  readonly bytes: number;
}

/**
 * Writes jobs' rows (BatchWriteItem) and objects into each of `buckets` (same bytes in each), a
 * slice of jobs at a time: a generator of a 1 GB month never holds it all.
 */
export const writeJobs = async (
  ddb: DynamoDBDocumentClient,
  s3: S3Client,
  table: string,
  buckets: readonly string[],
  jobs: Iterable<BenchJob>,
  concurrency = 32,
): Promise<Written & { jobs: number; uncompressed: number }> => {
  const total = { objects: 0, bytes: 0, jobs: 0, uncompressed: 0 };
  let slice: BenchJob[] = [];
  const flush = async () => {
    const w = await writeSlice(ddb, s3, table, buckets, slice, concurrency);
    total.objects += w.objects;
    total.bytes += w.bytes;
    total.jobs += slice.length;
    for (const j of slice)
      for (const f of j.flushes) total.uncompressed += Buffer.byteLength(JSON.stringify(f));
    slice = [];
  };
  for (const j of jobs) {
    slice.push(j);
    if (slice.length >= 100) await flush();
  }
  if (slice.length > 0) await flush();
  return total;
};

const writeSlice = async (
  ddb: DynamoDBDocumentClient,
  s3: S3Client,
  table: string,
  buckets: readonly string[],
  jobs: readonly BenchJob[],
  concurrency: number,
): Promise<Written> => {
  const batches: BenchJob[][] = [];
  for (let i = 0; i < jobs.length; i += 25) batches.push(jobs.slice(i, i + 25));
  await mapLimit(batches, 8, async (b) => {
    let items = b.map((j) => ({ PutRequest: { Item: rowOf(j) } }));
    for (let attempt = 0; items.length > 0; attempt++) {
      if (attempt > 10) throw new Error('BatchWriteItem kept leaving items unprocessed');
      const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [table]: items } }));
      items = (out.UnprocessedItems?.[table] ?? []) as typeof items;
    }
  });
  let objects = 0;
  let bytes = 0;
  const puts: { bucket: string; key: string; body: Buffer }[] = [];
  for (const j of jobs) {
    for (const o of objectsOf(j)) {
      objects++;
      bytes += o.body.length;
      for (const bucket of buckets) puts.push({ bucket, ...o });
    }
  }
  await mapLimit(puts, concurrency, (p) =>
    s3.send(
      new PutObjectCommand({
        Bucket: p.bucket,
        Key: p.key,
        Body: p.body,
        ContentEncoding: p.key.endsWith('.gz') ? 'gzip' : undefined,
      }),
    ),
  );
  return { objects, bytes };
};

/** `n` jobs of one shop in one month (generated as they are written). */
export function* shopMonth(seed: number, shopId: string, month: string, n: number, shape: JobShape = {}) {
  const r = prng(seed);
  for (let i = 0; i < n; i++) yield makeJob(r, shopId, month, shape);
}

/** A fleet of small shops: 1–3 small jobs each, in one month. */
export const smallFleet = (seed: number, shops: number, month: string): BenchJob[] => {
  const r = prng(seed);
  const out: BenchJob[] = [];
  for (let s = 0; s < shops; s++) {
    const shopId = `small-${String(s).padStart(4, '0')}.myshopify.com`;
    const n = r.int(1, 3);
    for (let i = 0; i < n; i++) out.push(makeJob(r, shopId, month, { chunks: r.int(1, 20) }));
  }
  return out;
};

/**
 * `n` jobs of one shop in one month as `jobarchive seed` plans them (infra/cli/fleet.ts: the CLI's
 * simulated indexer, ~1 KB flush objects, the workload of the economics issue's 1,500-job example),
 * converted to what the stores hold. Beside the design mix above (bigger, detail-heavy jobs whose
 * random doc ids leave little for compression across jobs), it shows the cold tier where per-object
 * overhead dominates.
 */
export function* seededMonth(seed: number, month: string, n: number, shops = 1): Generator<BenchJob> {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const now = new Date(Date.UTC(y, m, 0, 23, 0)); // the month's last day: every job completes in it
  for (const p of planFleet({ shops, jobsPerShop: Math.ceil(n / shops), months: 1, seed, now })) {
    const counts = { processed: 0, failed: 0, skipped: 0, conflict: 0 };
    const flushes: JobDetailsPayload[] = [];
    for (const f of p.flushes) {
      counts.processed += f.counts.processed;
      counts.failed += f.counts.failed;
      counts.skipped += f.counts.skipped;
      counts.conflict += f.counts.conflict;
      if (!hasDetails(f.details)) continue;
      flushes.push({
        chunk_ids: [...f.chunkIds].sort(),
        failed: f.details?.failed ?? {},
        skipped: f.details?.skipped ?? {},
        conflict: f.details?.conflict ?? {},
      });
    }
    const status = p.status === 'COMPLETED' || p.status === 'FAILED' ? p.status : 'CONFLICT';
    yield {
      shopId: p.shopId,
      jobId: p.jobId,
      completedAt: p.completedAt.toISOString(),
      createdAt: p.createdAt.toISOString(),
      status,
      totalItems: p.input.totalItems,
      counts,
      chunkIds: p.flushes.flatMap((f) => f.chunkIds),
      flushes,
      platformData: p.platformData,
    };
  }
}
