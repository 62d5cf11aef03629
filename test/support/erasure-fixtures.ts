import { gunzipSync } from 'node:zlib';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { WATERMARK_KEY } from '../../shared/archive/format';
import { REQUESTS_PREFIX } from '../../shared/erasure/ledger';
import { JobDetailsReader } from '../../shared/reader';
import { getObjectBytes, putJson } from '../../shared/s3/objects';
import { type ArchiverEnv, getBytes, listKeys, type SeededJob } from './archiver-fixtures';

/**
 * What a forget test checks: every key and body in the bucket — run scratch (`job-details-runs/`),
 * the watermark and tombstones included — and every row in the table, for a shop's name; and every
 * other job's lookups, byte for byte. The ledger's request records (`job-details-erasure/requests/`,
 * the record that the erasure happened, whose receipt must name the shop) are the one place allowed
 * to name it.
 */
const EXEMPT_PREFIXES = [REQUESTS_PREFIX];

const text = (bytes: Buffer): string => {
  // Hot objects and parts are gzip (parts: several members, which gunzipSync reads through).
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return gunzipSync(bytes).toString('utf8');
  return bytes.toString('latin1');
};

/** Keys, bodies and rows that name `needle` (outside the exempt prefixes). */
export const whereNamed = async (env: ArchiverEnv, needle: string): Promise<string[]> => {
  const found: string[] = [];
  for (const key of await listKeys(env.s3, env.bucket, '')) {
    if (EXEMPT_PREFIXES.some((p) => key.startsWith(p))) continue;
    if (key.includes(needle)) found.push(`key ${key}`);
    else if (text(await getBytes(env.s3, env.bucket, key)).includes(needle)) found.push(`body of ${key}`);
  }
  let start: Record<string, unknown> | undefined;
  do {
    const page = await env.ddb.send(new ScanCommand({ TableName: env.table, ExclusiveStartKey: start }));
    for (const item of page.Items ?? [])
      if (JSON.stringify(item).includes(needle)) found.push(`row ${String(item.pk)} ${String(item.sk)}`);
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
};

/** Every lookup the reader answers for these jobs (details, platform data, provenance), as JSON. */
export const lookups = async (env: ArchiverEnv, jobs: readonly SeededJob[]): Promise<string[]> => {
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const out: string[] = [];
  for (const j of jobs) {
    const q = { shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt };
    const d = await reader.readAllDetails(q);
    const p = await reader.readPlatformData(q);
    out.push(JSON.stringify({ job: j.jobId, d, p }));
  }
  return out;
};

/** Puts retry entries into the plan watermark (as a run that could not finish them would have). */
export const addRetries = async (
  env: ArchiverEnv,
  retry: { shopId: string; jobId: string }[],
): Promise<void> => {
  const got = await getObjectBytes(env.s3, env.bucket, WATERMARK_KEY);
  if (!got) throw new Error('no watermark to add retries to');
  const doc = JSON.parse(got.bytes.toString('utf8')) as { retry: unknown[] };
  await putJson(env, WATERMARK_KEY, { ...doc, retry: [...doc.retry, ...retry] });
};
