/**
 * An indexer service as a new user writes it against the installed package: an ES module, built by
 * plain `tsc`, run by plain `node`, importing only the package's `exports`.
 *
 *   node dist/service.js write           one job, one flush that completes it → {shopId, jobId, …}
 *   node dist/service.js read SHOP JOB COMPLETED_AT   its details with provenance
 *
 * Endpoints, table and bucket come from the environment `jobarchive up` prints.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createJob, InvalidInputError, JobDetailsStore, recordFlush } from 'job-details-archive';
import { JobDetailsReader } from 'job-details-archive/reader';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const table = env('ECOM_JOBS_TABLE');
const bucket = env('ECOM_JOB_DETAILS_BUCKET');
// The embedded stack's S3 (s3rver) answers path-style requests only.
const s3 = new S3Client({ forcePathStyle: true });
const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

const DAY_MS = 86_400_000;

const write = async (): Promise<void> => {
  const shopId = 'shop-consumer';
  const completedAt = new Date(Date.now() - 70 * DAY_MS); // a whole month before the archiver's 30-day cutoff
  const created = await createJob(
    ddb,
    table,
    { shopId, jobType: 'full-sync', platform: 'shopify', totalItems: 3 },
    { now: new Date(completedAt.getTime() - DAY_MS) },
  );
  const store = new JobDetailsStore(s3, bucket);
  await store.writePlatformData(shopId, created.jobId, { currency: 'EUR' });
  const job = { shopId, jobId: created.jobId, totalItems: 3, knownStatus: created.row.job_status };
  const flush = await recordFlush(
    { ddb, table, detailsWriter: store },
    job,
    {
      chunkIds: ['preparse', 'p0'],
      counts: { processed: 3, failed: 1, skipped: 1, conflict: 0 },
      details: { failed: { timeout: ['doc-1'] }, skipped: { invalid_json: ['doc-2'] } },
    },
    { now: completedAt },
  );
  // Bad input is a typed error from the package, recognisable across its boundary, before any write.
  let badInput = 'none';
  try {
    await recordFlush({ ddb, table, detailsWriter: store }, job, {
      chunkIds: [],
      counts: { processed: 0, failed: 0, skipped: 0, conflict: 0 },
    });
  } catch (err) {
    badInput = err instanceof InvalidInputError ? `${err.name}: ${err.message}` : `untyped: ${String(err)}`;
  }
  print({
    shopId,
    jobId: created.jobId,
    flushId: flush.flushId,
    status: flush.terminal?.status,
    completedAt: flush.terminal?.completedAt,
    badInput,
  });
};

const read = async (shopId: string, jobId: string, completedAt: string): Promise<void> => {
  const reader = new JobDetailsReader(s3, bucket);
  const { details, provenance } = await reader.readAllDetails({ shopId, jobId, completedAt });
  print({ source: provenance.source, details });
};

const [command, ...args] = process.argv.slice(2);
const run =
  command === 'write'
    ? write()
    : command === 'read' && args.length === 3
      ? read(args[0] ?? '', args[1] ?? '', args[2] ?? '')
      : Promise.reject(new Error('usage: service.js write | read SHOP JOB COMPLETED_AT'));
run.then(
  () => {
    s3.destroy();
    ddb.destroy();
  },
  (err: unknown) => {
    process.stderr.write(`service: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
