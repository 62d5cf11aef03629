/**
 * `npm run bench:get` — the CPU of one hot-object GET (a 400-byte object with its `shop-id`
 * metadata, 16 in flight, the request meter on the client as in the archive step) through the SDK's
 * `GetObjectCommand` (s3/objects.ts `getObjectBytes`) and through the lean path the archive step
 * uses (s3/lean-get.ts `getHotObjectBytes`): same client, same embedded S3 (a private stack in a temp
 * dir, always stopped). This process's CPU only (s3rver runs in its own). Prints three rounds, then
 * what the meter counted. Absolute figures move with load; compare within one run.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { applyStackEnv, startLocalStack } from '../../infra/local/stack';
import { createRequestMeter } from '../../shared/archive/steps/meter';
import { s3ClientFrom } from '../../shared/clients';
import { config } from '../../shared/config';
import { countRequests } from '../../shared/metrics';
import { getHotObjectBytes } from '../../shared/s3/lean-get';
import { getObjectBytes } from '../../shared/s3/objects';

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'getbench-'));
  const stack = await startLocalStack({ dataDir: dir, fresh: true });
  try {
    applyStackEnv(stack);
    const s3 = s3ClientFrom(config());
    const meter = createRequestMeter();
    countRequests(s3, 's3', meter.sink);
    const bucket = stack.bucketName;
    const keys = Array.from({ length: 200 }, (_, i) => `job-details/shop/${i}/flush.json.gz`);
    const body = Buffer.alloc(400, 7);
    for (const k of keys)
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: k, Body: body, Metadata: { 'shop-id': 'shop' } }),
      );
    const run = async (get: typeof getObjectBytes, rounds: number) => {
      const t0 = process.cpuUsage();
      for (let r = 0; r < rounds; r++) {
        for (let i = 0; i < keys.length; i += 16)
          await Promise.all(keys.slice(i, i + 16).map((k) => get(s3, bucket, k)));
      }
      const u = process.cpuUsage(t0);
      return (u.user + u.system) / (rounds * keys.length);
    };
    await run(getObjectBytes, 3);
    await run(getHotObjectBytes, 3);
    for (let i = 0; i < 3; i++) {
      const sdk = await run(getObjectBytes, 10);
      const lean = await run(getHotObjectBytes, 10);
      console.log(
        `sdk ${sdk.toFixed(1)} µs  lean ${lean.toFixed(1)} µs  saved ${(sdk - lean).toFixed(1)} µs a GET`,
      );
    }
    console.log('GETs metered', meter.total.byType);
    s3.destroy();
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
};
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
