import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { applyStackEnv, type LocalStack, startLocalStack } from '../../infra/local/stack';
import { canonicalJson, type JsonValue } from '../../shared/details/json';
import { JobDetailsReader } from '../../shared/reader';
import { listAll } from '../../shared/s3/objects';

/**
 * `npm run vectors`: regenerates docs/vectors/ — the conformance scenario (test/support/vector-scenario.ts)
 * archived by the real archiver on an embedded stack of its own (temp dir, always stopped), the bucket
 * snapshotted object by object, and what JobDetailsReader answers for every job and document.
 * test/integration/vectors.test.ts fails when the committed vectors no longer read so.
 */
const OUT = resolve(__dirname, '../../docs/vectors');
/** The archive's objects: parts, month indexes, shared indexes, hot objects (no staging, no run scratch). */
const KEPT =
  /^(job-details-cold\/|job-details-index\/[^/]+\/\d{4}-\d{2}\/(index|shared)\.json$|job-details\/)/;

const snapshot = async (s3: S3Client, bucket: string) => {
  const objects: Array<{ key: string; content_encoding?: string; metadata?: Record<string, string> }> = [];
  rmSync(join(OUT, 'bucket'), { recursive: true, force: true });
  for await (const o of listAll(s3, bucket, '')) {
    if (!KEPT.test(o.key)) continue;
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.key }));
    const bytes = await got.Body?.transformToByteArray();
    if (!bytes) throw new Error(`no body for ${o.key}`);
    const file = join(OUT, 'bucket', o.key);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    const metadata = got.Metadata && Object.keys(got.Metadata).length > 0 ? got.Metadata : undefined;
    objects.push({
      key: o.key,
      ...(got.ContentEncoding ? { content_encoding: got.ContentEncoding } : {}),
      ...(metadata ? { metadata } : {}),
    });
  }
  return objects;
};

const main = async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'jda-vectors-'));
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({ dataDir: join(tmp, 'stack'), fresh: true });
    applyStackEnv(stack);
    // The fixtures make their clients when loaded: only once the stack's endpoints are set.
    const { archiverEnv } = await import('../support/archiver-fixtures.js');
    const { expectedSearch, lookupAll, runScenario, SCENARIO_SETTINGS } = await import(
      '../support/vector-scenario.js'
    );
    const env = await archiverEnv(SCENARIO_SETTINGS);
    const scenario = await runScenario(env);
    const reader = new JobDetailsReader(env.s3, env.bucket);
    const lookups = await lookupAll(reader, scenario);
    const searches = await expectedSearch(reader, scenario);
    mkdirSync(OUT, { recursive: true });
    const objects = await snapshot(env.s3, env.bucket);
    const expected = {
      format: '1.0',
      objects,
      lookups: lookups.map((l) => ({ case: l.job.case, ...l.expected })),
      searches,
    };
    writeFileSync(join(OUT, 'expected.json'), `${canonicalJson(expected as unknown as JsonValue)}\n`);
    console.log(
      `docs/vectors: ${objects.length} objects, ${lookups.length} lookups, ${searches.length} searches`,
    );
  } finally {
    await stack?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
};

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
