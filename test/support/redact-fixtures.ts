import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import {
  candidateBlocks,
  type IndexedPart,
  type PartDocFilters,
  parseFiltersMember,
  parseMonthIndex,
  parseMonthIndexKey,
  parseSharedFiltersMember,
} from '../../shared/archive/format';
import { createJob } from '../../shared/jobs/create-job';
import { type FlushDetails, recordFlush } from '../../shared/jobs/record-flush';
import { getObjectBytes } from '../../shared/s3/objects';
import { type ArchiverEnv, getBytes, HOUR, listKeys } from './archiver-fixtures';

/** Jobs with chosen details, and the whole bucket read back: for the redaction tests. */
export interface Seeded {
  readonly shopId: string;
  readonly jobId: string;
  readonly completedAt: string;
}

/** A terminal job of one flush per entry of `flushes` (the last completes it), with platform data. */
export const seedDocJob = async (
  env: ArchiverEnv,
  shopId: string,
  completedAt: Date,
  flushes: FlushDetails[],
): Promise<Seeded> => {
  const n = (m: Record<string, readonly unknown[]> | undefined) =>
    Object.values(m ?? {}).reduce((s, l) => s + l.length, 0);
  const counts = flushes.map((f) => ({
    processed: 2,
    failed: n(f.failed),
    skipped: n(f.skipped),
    conflict: n(f.conflict),
  }));
  const total = counts.reduce((s, c) => s + c.processed + c.failed + c.skipped + c.conflict, 0);
  const created = new Date(completedAt.getTime() - HOUR);
  const { jobId } = await createJob(
    env.ddb,
    env.table,
    { shopId, jobType: 'full_sync', platform: 'shopify', totalItems: total },
    { now: created },
  );
  await env.store.writePlatformData(shopId, jobId, { indexer: { v: 1 } });
  for (const [i, f] of flushes.entries()) {
    const last = i === flushes.length - 1;
    await recordFlush(
      { ddb: env.ddb, table: env.table, detailsWriter: env.store },
      { shopId, jobId, totalItems: total, ...(i > 0 ? { knownStatus: 'IN_PROGRESS' as const } : {}) },
      {
        chunkIds: [`p${i}`],
        counts: counts[i] ?? { processed: 0, failed: 0, skipped: 0, conflict: 0 },
        details: f,
      },
      { now: last ? completedAt : new Date(created.getTime() + (i + 1) * 60_000) },
    );
  }
  return { shopId, jobId, completedAt: completedAt.toISOString() };
};

/**
 * Every object of the bucket: its bytes, its text (gunzipped when gzip: parts, indexes, flush
 * objects) and its shop (`shop-id` metadata, else the shop segment of a cold or index key).
 */
export const bucketContents = async (env: ArchiverEnv) => {
  const out = new Map<string, { text: string; raw: Buffer; shop: string | undefined }>();
  for (const key of await listKeys(env.s3, env.bucket, '')) {
    const res = await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }));
    const raw = Buffer.from(await (res.Body?.transformToByteArray() ?? new Uint8Array()));
    const text = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    const shop = res.Metadata?.['shop-id'] ?? /^job-details-(?:cold|index)\/([^/]+)\//.exec(key)?.[1];
    out.set(key, { text, raw, shop });
  }
  return out;
};

/** A committed part's document filters, read from its filters member (its last gzip member). */
export const partFilters = async (
  env: ArchiverEnv,
  part: IndexedPart,
  shopId?: string,
): Promise<PartDocFilters | undefined> => {
  if (!part.filters) return undefined;
  const got = await getObjectBytes(env.s3, env.bucket, part.key, part.filters);
  if (!got) throw new Error(`${part.key}: missing`);
  return part.shared
    ? parseSharedFiltersMember(got.bytes, part.key).get(shopId ?? '')
    : parseFiltersMember(got.bytes, part.key);
};

/**
 * Every committed part of the shop, per month index: whether it has a filters member and which of
 * its blocks' filters match `docId`.
 */
export const indexedFilters = async (env: ArchiverEnv, shopId: string, docId: string) => {
  const out: { month: string; part: string; filtered: boolean; matches: number[] }[] = [];
  for (const key of await listKeys(env.s3, env.bucket, `job-details-index/${shopId}/`)) {
    const at = parseMonthIndexKey(key);
    if (!at) continue;
    for (const p of parseMonthIndex(await getBytes(env.s3, env.bucket, key), key).parts) {
      const f = await partFilters(env, p, shopId);
      out.push({
        month: at.month,
        part: p.name,
        filtered: f !== undefined,
        matches: f ? candidateBlocks(f, docId, p.key) : [],
      });
    }
  }
  return out;
};
