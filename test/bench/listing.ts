/**
 * `npm run bench:listing [-- --quick]` — LIST requests per archived hot object when the hot prefix
 * holds neighbours (jobs not due yet, random ids interleaved with the due ones), on a private embedded
 * stack (started in a temp dir, always stopped). Strategies, each over the same objects:
 *
 * - per-batch walk (before): each batch of the page walks `job-details/` for its own jobs
 *   (hot-listing.ts, StartAfter jumps). A batch's jobs are scattered over the whole prefix.
 * - per-page walk (chosen): Plan walks once for every job of the page; batches read the listing
 *   with their planned jobs (the same ranged GET).
 * - per-job prefix: a LIST of `job-details/{id}/` per job.
 * - S3 Inventory (modelled, not run): a scheduled listing of the whole bucket, priced per object
 *   listed ($0.0025 per million) — shown as LIST-equivalents ($0.005 per 1,000 LISTs).
 *
 * Prints a table and, as its LAST line, one JSON object. Target: at most 0.02 LIST per archived hot
 * object when the due jobs are a fifth or less of the hot prefix.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { applyStackEnv, type LocalStack, startLocalStack } from '../../infra/local/stack';
import { s3ClientFrom } from '../../shared/clients';
import { mapLimit } from '../../shared/concurrency';
import { config } from '../../shared/config';
import { detailsKey, platformDataKey } from '../../shared/details';
import { listJobsObjects } from '../../shared/details/hot-listing';
import { generateJobId } from '../../shared/ids';
import { countRequests, zeroCounts } from '../../shared/metrics';
import { BATCH_GROUPS_MAX, SETTINGS } from '../../shared/settings';

interface Scenario {
  readonly name: string;
  /** Due jobs (archived by the run). */
  readonly due: number;
  /** Shops the due jobs belong to (one month each: a shop-month per shop). */
  readonly shops: number;
  /** Neighbour jobs per due job (4: the due jobs are a fifth of the prefix). */
  readonly neighbours: number;
  /** Hot objects per job (platform data + flushes). */
  readonly objectsPerJob: number;
}

const FULL: Scenario[] = [
  { name: 'fleet-20', due: 600, shops: 20, neighbours: 4, objectsPerJob: 4 },
  { name: 'tail-300', due: 600, shops: 300, neighbours: 4, objectsPerJob: 4 },
  { name: 'fleet-20-x9', due: 400, shops: 20, neighbours: 9, objectsPerJob: 4 },
];
const QUICK: Scenario[] = [{ name: 'fleet-20', due: 200, shops: 20, neighbours: 4, objectsPerJob: 4 }];

const put = async (s3: S3Client, bucket: string, jobIds: readonly string[], perJob: number) => {
  const keys = jobIds.flatMap((id) => [
    platformDataKey(id),
    ...Array.from({ length: perJob - 1 }, (_, i) => detailsKey(id, `f${i}`)),
  ]);
  await mapLimit(keys, 32, (Key) =>
    s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: `{"k":"${Key}"}` })),
  );
  return keys.length;
};

/** Batches as Plan cuts them: shop-months in order, at most batchGroups groups and batchJobs jobs. */
const batchesOf = (groups: readonly string[][]): string[][] => {
  const out: string[][] = [];
  let current: string[] = [];
  let n = 0;
  for (const g of groups) {
    if (n >= BATCH_GROUPS_MAX || (n > 0 && current.length + g.length > SETTINGS.batchJobs.default)) {
      out.push(current);
      current = [];
      n = 0;
    }
    current.push(...g);
    n++;
  }
  if (current.length > 0) out.push(current);
  return out;
};

const run = async (s3: S3Client, counted: S3Client, sc: Scenario) => {
  const bucket = `bench-listing-${sc.name}`.toLowerCase();
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const due = Array.from({ length: sc.due }, () => generateJobId());
  const others = Array.from({ length: sc.due * sc.neighbours }, () => generateJobId());
  const dueObjects = await put(s3, bucket, due, sc.objectsPerJob);
  const hotObjects = dueObjects + (await put(s3, bucket, others, sc.objectsPerJob));
  // Jobs of a shop-month together, shops in order (as Plan sorts them).
  const groups = Array.from({ length: sc.shops }, (_, s) => due.filter((_, i) => i % sc.shops === s));
  const batches = batchesOf(groups);

  let perBatch = 0;
  for (const b of batches) perBatch += (await listJobsObjects(counted, bucket, b)).requests;
  const page = await listJobsObjects(counted, bucket, due);
  const found = [...page.objects.values()].reduce((n, l) => n + l.length, 0);
  if (found !== dueObjects) throw new Error(`${sc.name}: listed ${found} of ${dueObjects} due objects`);
  const perJob = sc.due;
  // Inventory lists every object of the bucket each time it is delivered (weekly at the least often).
  const inventoryPerMonth = (hotObjects * 0.0025e-6 * (30 / 7)) / 0.005e-3;
  const per = (n: number) => n / dueObjects;
  return {
    name: sc.name,
    dueJobs: sc.due,
    dueObjects,
    hotObjects,
    batches: batches.length,
    listsPerBatchWalk: perBatch,
    listsPerPageWalk: page.requests,
    listsPerJobPrefix: perJob,
    perObject: {
      perBatchWalk: per(perBatch),
      perPageWalk: per(page.requests),
      perJobPrefix: per(perJob),
      inventoryWeeklyListEquivalent: per(inventoryPerMonth),
    },
  };
};

const main = async () => {
  const quick = process.argv.includes('--quick');
  const tmp = mkdtempSync(join(tmpdir(), 'jda-bench-listing-'));
  let stack: LocalStack | undefined;
  const clients: S3Client[] = [];
  try {
    stack = await startLocalStack({ dataDir: join(tmp, 'stack'), fresh: true });
    applyStackEnv(stack);
    const cfg = config();
    const s3 = s3ClientFrom(cfg);
    const counted = s3ClientFrom(cfg);
    countRequests(counted, 's3', zeroCounts());
    clients.push(s3, counted);
    const results = [];
    console.log('LIST per archived hot object, due jobs beside neighbours (random ids)');
    console.log(
      'scenario      due-obj  hot-obj  batches  per-batch walk  per-page walk  per-job prefix  inventory*',
    );
    for (const sc of quick ? QUICK : FULL) {
      const r = await run(s3, counted, sc);
      results.push(r);
      const f = (x: number) => x.toFixed(4).padStart(14);
      console.log(
        `${r.name.padEnd(13)} ${String(r.dueObjects).padStart(7)}  ${String(r.hotObjects).padStart(7)}  ${String(r.batches).padStart(7)}  ${f(r.perObject.perBatchWalk)}  ${f(r.perObject.perPageWalk)}  ${f(r.perObject.perJobPrefix)}  ${f(r.perObject.inventoryWeeklyListEquivalent)}`,
      );
    }
    console.log('* inventory: weekly delivery of the hot prefix for a month, in LIST-equivalent dollars');
    console.log(JSON.stringify({ bench: 'listing', results }));
  } finally {
    // Idle keep-alive sockets would hold the process open after the stack is gone.
    for (const c of clients) c.destroy();
    await stack?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
};

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
