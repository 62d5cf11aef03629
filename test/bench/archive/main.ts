/**
 * `npm run bench:archive [-- --quick | --smoke] [--seed N] [--keep DIR] [--scale N]` — what the cold tier costs and how fast it
 * runs, measured on a private embedded stack (started in a temp dir, always stopped):
 *
 * - throughput: the archiver (the CDK-synthesized state machine, real handlers, in process) against
 *   the I/O floor on the same objects in the same store (floor.ts), per scenario;
 * - request mix: S3 requests by API call per hot object, Task invocations per job, DynamoDB read
 *   units per job, bytes at rest after / before;
 * - lookup: S3 requests and bytes to read one archived job, month known and unknown, against a
 *   whole-part GET;
 * - memory: peak RSS of the ArchiveBatch step (archive, verify, commit, delete), in its own process
 *   (step-child.ts) on one detail-heavy shop-month;
 * - codec: fflate and node:zlib on the same 64 KB blocks of JSONL;
 * - search: find by document on one shop with 24 archived months (search.ts), and per scenario the
 *   document filters' bytes against the parts'.
 * - `--fleet-only`: only the fleet of small shops, and where its bytes at rest go (fleet-bytes.ts).
 * - steady-year (steady-year.ts): daily scheduled runs for 13 months beside recent jobs, rows expiring
 *   at their TTL; `--steady-year` runs only it, `--out DIR` writes DIR/steady-year.{txt,json},
 *   `--scale N` multiplies its large shops' jobs a day by N (the volume; the tail stays the tail).
 *
 * Prints a table per part and, as its LAST line, one JSON object (see `BenchResult`). Absolute times
 * are noisy on shared machines; compare ratios within one run. Workload: workload.ts.
 *
 * CPU figures are this process's CPU while handlers ran (runner.ts `handlerCpuSeconds`). The npm
 * script runs Node 22 with `--experimental-async-context-frame`: AsyncLocalStorage (the step meter's
 * scopes) as the functions' runtime, Node 24, implements it by default — without the flag Node 22
 * runs a promise hook on every promise the SDK makes, CPU the Lambda functions do not spend.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { gunzipSync as fflateGunzip, gzipSync as fflateGzip } from 'fflate';
import { buildStepDeps } from '../../../functions/deps';
import {
  runArchiverLocally,
  type StepHandler,
  stepHandlers,
  synthesizedDefinition,
} from '../../../infra/local/runner';
import { applyStackEnv, type LocalStack, startLocalStack } from '../../../infra/local/stack';
import type { RunReport } from '../../../shared/archive/steps/types';
import { dynamoClientFrom, s3ClientFrom } from '../../../shared/clients';
import { config, ENV } from '../../../shared/config';
import { GZIP_LEVEL } from '../../../shared/details';
import { createTableInput } from '../../../shared/jobs/schema';
import { addCounts } from '../../../shared/metrics';
import { JobDetailsReader } from '../../../shared/reader';
import { fleetBytesLines } from './fleet-bytes';
import { ioFloor } from './floor';
import { type TracedRequest, traceS3 } from './request-trace';
import { filterBytesAtRest, measureSearch, monthsBefore, type SearchResult, searchShop } from './search';
import {
  runSteadyYear,
  STEADY_YEAR_SIZES,
  type SteadyDeps,
  scaledSteadyYearSizes,
  steadyYearLines,
  type Wired,
} from './steady-year';
import { type BenchJob, makeJob, prng, seededMonth, shopMonth, smallFleet, writeJobs } from './workload';

const MONTH = '2026-01';
const NOW = '2026-03-15T00:00:00.000Z';
const RUN_INPUT = { olderThanDays: 30, graceHours: 0, now: NOW };
const MB = 1024 * 1024;

interface Options {
  readonly mode: 'full' | 'quick' | 'smoke';
  readonly seed: number;
  /** `--memory-only MB`: just the memory scenario of that size (to study one step's footprint). */
  readonly memoryOnly?: number;
  /** `--keep DIR`: each scenario's archive objects are copied there. */
  readonly keep?: string;
  /** `--steady-year`: only the steady-year scenario. */
  readonly steadyYearOnly: boolean;
  /** `--fleet-only`: only the fleet scenario, with where its shared parts' bytes go (fleet-bytes.ts). */
  readonly fleetOnly: boolean;
  /** `--out DIR`: write steady-year.txt and steady-year.json there. */
  readonly out?: string;
  /** `--scale N`: steady-year's large shops complete N times the mode's jobs a day. */
  readonly scale: number;
  /** `--scenario NAME`: only that scenario (`month-N`, `seeded-N`, `fleet-N`), at the full run's lookup sample. */
  readonly scenario?: string;
}

const parseOptions = (argv: readonly string[]): Options => {
  let mode: Options['mode'] = 'full';
  let seed = 1;
  let memoryOnly: number | undefined;
  let keep: string | undefined;
  let steadyYearOnly = false;
  let fleetOnly = false;
  let out: string | undefined;
  let scale = 1;
  let scenario: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') mode = 'quick';
    else if (a === '--smoke') mode = 'smoke';
    else if (a === '--seed') seed = Number(argv[++i]);
    else if (a === '--memory-only') memoryOnly = Number(argv[++i]);
    else if (a === '--keep') keep = argv[++i] ?? '';
    else if (a === '--steady-year') steadyYearOnly = true;
    else if (a === '--fleet-only') fleetOnly = true;
    else if (a === '--out') out = argv[++i] ?? '';
    else if (a === '--scale') scale = Number(argv[++i]);
    else if (a === '--scenario') scenario = argv[++i] ?? '';
    else
      throw new Error(
        `bench:archive: unknown argument ${a} (expected --quick, --smoke, --seed N, --memory-only MB, --keep DIR, --steady-year, --fleet-only, --out DIR, --scale N, --scenario month-N|seeded-N|fleet-N)`,
      );
  }
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error('bench:archive: --seed takes a whole number');
  if (memoryOnly !== undefined && !(memoryOnly > 0))
    throw new Error('bench:archive: --memory-only takes a size in MB');
  if (keep === '') throw new Error('bench:archive: --keep takes a directory');
  if (out === '') throw new Error('bench:archive: --out takes a directory');
  if (scenario !== undefined && !/^(month|seeded|fleet)-[1-9]\d*$/.test(scenario))
    throw new Error('bench:archive: --scenario takes month-N, seeded-N or fleet-N');
  if (!Number.isSafeInteger(scale) || scale < 1)
    throw new Error(
      "bench:archive: --scale takes a whole number of at least 1 (the large shops' jobs a day × N)",
    );
  return {
    mode,
    seed,
    steadyYearOnly,
    fleetOnly,
    scale,
    ...(out !== undefined ? { out: resolve(out) } : {}),
    ...(memoryOnly !== undefined ? { memoryOnly } : {}),
    ...(keep !== undefined ? { keep: resolve(keep) } : {}),
    ...(scenario !== undefined ? { scenario } : {}),
  };
};

/** Scenario sizes per mode: the full run is the issue's; quick is minutes; smoke is seconds (CI). */
const SIZES = {
  full: {
    months: [100, 1500, 15000],
    seeded: [1500, 15000],
    fleetShops: 300,
    daily: [20, 30],
    memoryMb: [100, 1024],
    giantSourceMb: 50,
    lookupSample: 20,
    searchJobsPerMonth: 40,
    searchSample: 50,
  },
  quick: {
    months: [100],
    seeded: [1500],
    fleetShops: 300,
    daily: [20, 30],
    memoryMb: [100],
    giantSourceMb: 50,
    lookupSample: 20,
    searchJobsPerMonth: 10,
    searchSample: 20,
  },
  smoke: {
    months: [12],
    seeded: [20],
    fleetShops: 8,
    daily: [3, 4],
    memoryMb: [2],
    giantSourceMb: 2,
    lookupSample: 3,
    searchJobsPerMonth: 1,
    searchSample: 3,
  },
} as const;

export interface ScenarioResult {
  name: string;
  jobs: number;
  hotObjects: number;
  hotBytes: number;
  archiveBytes: number;
  s3Requests: number;
  s3RequestsByType: Record<string, number>;
  taskInvocations: number;
  wallSeconds: number;
  floorSeconds: number;
  lookupRequests: number;
  lookupBytes: number;
  lookupRequestsMonthUnknown: number;
  lookupBytesMonthUnknown: number;
  wholePartBytes: number;
  dynamodbReadUnits: number;
  parts: number;
  /** Bytes at rest under job-details-index/ (Standard, never transitioned). */
  indexBytes: number;
  /** Of which the parts' document filters (find by document: the indexes' filter members); against the parts' bytes. */
  filterBytes: number;
  partBytes: number;
  shopMonths: number;
  /** Billed transitions had the run been a STANDARD execution (every state entered, retries). */
  stateTransitions: number;
  /** Seconds inside handlers, summed (Lambda duration). */
  taskSeconds: number;
  /** CPU seconds of this process while handlers ran (runner.ts `handlerCpuSeconds`, an upper bound). */
  cpuSeconds: number;
  /**
   * The payloads alone (flush details + platform data, no keys, rows or index) as JSONL in 64 KB
   * blocks at gzip level 9, one stream per shop-month, over the hot bytes: about the least any
   * per-shop-month JSONL.gz archive of them can keep.
   */
  blockFloorRatio: number;
}

interface Ctx {
  readonly stack: LocalStack;
  readonly s3: S3Client;
  readonly ddb: DynamoDBDocumentClient;
  readonly admin: DynamoDBClient;
  readonly definition: ReturnType<typeof synthesizedDefinition>;
  readonly tmp: string;
  readonly keep?: string;
}

let names = 0;
const freshStores = async (c: Ctx, buckets: number) => {
  const id = `bench-${Date.now().toString(36)}-${names++}`;
  await c.admin.send(new CreateTableCommand(createTableInput(id)));
  await waitUntilTableExists({ client: c.admin, maxWaitTime: 60 }, { TableName: id });
  const out: string[] = [];
  for (let i = 0; i < buckets; i++) {
    const b = `${id}-${i}`;
    await c.s3.send(new CreateBucketCommand({ Bucket: b }));
    out.push(b);
  }
  return { table: id, buckets: out };
};

const listAll = async (s3: S3Client, bucket: string, prefix = '') => {
  const out: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const p = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of p.Contents ?? []) out.push({ key: o.Key ?? '', size: o.Size ?? 0 });
    token = p.IsTruncated ? p.NextContinuationToken : undefined;
  } while (token);
  return out;
};

/** `--keep DIR`: copies what the archive keeps (parts, indexes) to DIR/{scenario}/{key}, to inspect. */
const keepArchive = async (
  s3: S3Client,
  bucket: string,
  objects: readonly { key: string }[],
  dir: string,
) => {
  for (const o of objects) {
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.key }));
    const file = join(dir, o.key);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, (await got.Body?.transformToByteArray()) ?? new Uint8Array(0));
  }
};

let wired: { destroy(): void } | undefined;

/**
 * Wires the real handlers to `table` / `bucket` as `jobarchive run` does (clients and settings from
 * this process's config, `clock` for part names and commit times) and sums the read units they use.
 */
const wireHandlers = (table: string, bucket: string, clock?: () => Date): Wired => {
  wired?.destroy();
  const deps = buildStepDeps(config(), { bucket, table }, clock);
  wired = deps;
  const units = { read: 0, requests: 0 };
  const trace = { list: [] as TracedRequest[] };
  traceS3(deps.s3, trace);
  // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
  const stack = (deps.ddb as unknown as { middlewareStack: any }).middlewareStack;
  stack.add(
    // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
    (next: any) => async (args: any) => {
      args.input.ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(args);
      units.requests++;
      const cc = out.output?.ConsumedCapacity;
      for (const c of Array.isArray(cc) ? cc : cc ? [cc] : []) units.read += c.CapacityUnits ?? 0;
      return out;
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );
  return {
    units,
    trace,
    run: (opts) =>
      runArchiverLocally({
        ...opts,
        handlers: (sink) => ({ ...stepHandlers(() => deps, sink), ...opts.handlers }),
        bucket,
        mapS3: () => {
          const s3 = s3ClientFrom(config());
          traceS3(s3, trace);
          return s3;
        },
      }),
  };
};

/** Gzip level 9 of lines in blocks of up to 64 KB, fed one line at a time. */
class BlockFloor {
  private block: string[] = [];
  private size = 0;
  private total = 0;
  add(line: string): void {
    if (this.size + line.length > 64 * 1024) this.flush();
    this.block.push(line);
    this.size += line.length + 1;
  }
  private flush(): void {
    if (this.block.length > 0) this.total += gzipSync(`${this.block.join('\n')}\n`, { level: 9 }).length;
    this.block = [];
    this.size = 0;
  }
  bytes(): number {
    this.flush();
    return this.total;
  }
}

/** The objects the archive keeps after a scenario (parts, indexes, state), with their bytes. */
type Inspect = (objects: readonly { key: string; bytes: Uint8Array }[]) => void;

const runScenario = async (
  c: Ctx,
  name: string,
  jobs: Iterable<BenchJob>,
  lookupSample: number,
  inspect?: Inspect,
) => {
  const { table, buckets } = await freshStores(c, 2);
  const [floorBucket, archiveBucket] = buckets as [string, string];
  const listed: BenchJob[] = [];
  // One floor per shop-month: a part holds one shop-month, so nothing compresses across them.
  const floors = new Map<string, BlockFloor>();
  const remember = function* () {
    for (const j of jobs) {
      listed.push({ ...j, flushes: [] }); // keep ids and times, not the details
      const group = `${j.shopId} ${j.completedAt.slice(0, 7)}`;
      const f = floors.get(group) ?? new BlockFloor();
      floors.set(group, f);
      f.add(JSON.stringify({ flushes: j.flushes, platform_data: j.platformData }));
      yield j;
    }
  };
  const hot = await writeJobs(c.ddb, c.s3, table, [floorBucket, archiveBucket], remember());
  const floor = await ioFloor(c.s3, floorBucket, 'job-details/', config().readConcurrency);

  const { units, run } = wireHandlers(table, archiveBucket);
  const t0 = performance.now();
  const r = await run({ definition: c.definition, input: RUN_INPUT });
  const wallSeconds = (performance.now() - t0) / 1000;
  if (r.status !== 'SUCCEEDED') throw new Error(`${name}: run ${r.status} ${JSON.stringify(r.error)}`);
  const report = r.output as RunReport;
  if (report.jobsArchived !== listed.length || report.jobsQuarantinedCount > 0) {
    throw new Error(
      `${name}: archived ${report.jobsArchived} of ${listed.length} jobs (${report.jobsQuarantinedCount} quarantined)`,
    );
  }
  const after = await listAll(c.s3, archiveBucket);
  const left = after.filter((o) => o.key.startsWith('job-details/'));
  if (left.length > 0) throw new Error(`${name}: ${left.length} hot objects left after the run`);
  const kept = after.filter((o) => !o.key.startsWith('job-details-runs/'));
  const parts = kept.filter((o) => o.key.startsWith('job-details-cold/'));
  if (c.keep) await keepArchive(c.s3, archiveBucket, kept, join(c.keep, name));
  if (inspect) {
    const objects: { key: string; bytes: Uint8Array }[] = [];
    for (const o of kept) {
      const got = await c.s3.send(new GetObjectCommand({ Bucket: archiveBucket, Key: o.key }));
      objects.push({ key: o.key, bytes: (await got.Body?.transformToByteArray()) ?? new Uint8Array(0) });
    }
    inspect(objects);
  }

  // Lookups of a deterministic sample, month known (completedAt) and unknown (bounded search).
  const reader = new JobDetailsReader(c.s3, archiveBucket);
  const pick = prng(listed.length);
  const sample = Array.from(
    { length: Math.min(lookupSample, listed.length) },
    () => listed[pick.int(0, listed.length - 1)] as BenchJob,
  );
  const known = { requests: 0, bytes: 0, maxBytes: 0, maxRequests: 0 };
  const unknown = { requests: 0, bytes: 0 };
  for (const j of sample) {
    const a = await reader.readAllDetails({ shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt });
    const b = await reader.readAllDetails({ shopId: j.shopId, jobId: j.jobId });
    if (a.provenance.source !== 'archive' || b.provenance.source !== 'archive')
      throw new Error(`${name}: ${j.jobId} not read from the archive`);
    known.requests += a.provenance.requests;
    known.bytes += a.provenance.bytes;
    known.maxBytes = Math.max(known.maxBytes, a.provenance.bytes);
    known.maxRequests = Math.max(known.maxRequests, a.provenance.requests);
    unknown.requests += b.provenance.requests;
    unknown.bytes += b.provenance.bytes;
  }
  const n = Math.max(1, sample.length);
  // The issue's bound is per lookup (≤ 3 requests, ≤ 100 KB), not a mean: the worst of the sample.
  console.error(
    `${name}: lookup month known, worst of ${sample.length}: ${known.maxRequests} requests, ${(known.maxBytes / 1024).toFixed(1)} KB`,
  );
  const shopMonths = new Set(listed.map((j) => `${j.shopId} ${j.completedAt.slice(0, 7)}`)).size;
  const result: ScenarioResult = {
    name,
    jobs: listed.length,
    hotObjects: hot.objects,
    hotBytes: hot.bytes,
    blockFloorRatio: [...floors.values()].reduce((n, f) => n + f.bytes(), 0) / hot.bytes,
    archiveBytes: kept.reduce((s, o) => s + o.size, 0),
    // The handlers' requests plus the Distributed Map's own (ItemReader GET, ResultWriter PUTs).
    s3Requests: report.requests.s3 + r.mapRequests.s3,
    s3RequestsByType: Object.fromEntries(
      Object.entries(addCounts(report.requests, r.mapRequests).byType ?? {})
        .filter(([k]) => k.startsWith('s3.'))
        .map(([k, v]) => [k.slice(3), v]),
    ),
    taskInvocations: Object.values(r.taskInvocations).reduce((s, x) => s + x, 0),
    wallSeconds,
    floorSeconds: floor.seconds,
    lookupRequests: known.requests / n,
    lookupBytes: Math.round(known.bytes / n),
    lookupRequestsMonthUnknown: unknown.requests / n,
    lookupBytesMonthUnknown: Math.round(unknown.bytes / n),
    wholePartBytes: Math.round(parts.reduce((s, o) => s + o.size, 0) / Math.max(1, parts.length)),
    dynamodbReadUnits: units.read,
    parts: parts.length,
    indexBytes: kept.filter((o) => o.key.startsWith('job-details-index/')).reduce((s, o) => s + o.size, 0),
    filterBytes: await filterBytesAtRest(c.s3, archiveBucket, kept),
    partBytes: parts.reduce((s, o) => s + o.size, 0),
    shopMonths,
    stateTransitions: r.stateTransitions,
    taskSeconds: r.taskSeconds,
    cpuSeconds: r.handlerCpuSeconds,
  };
  return result;
};

/** One shop, `jobsPerMonth` design-mix jobs in each of 24 months, archived, then searched by document. */
const runSearch = async (
  c: Ctx,
  jobsPerMonth: number,
  sample: number,
  seed: number,
): Promise<SearchResult> => {
  const { table, buckets } = await freshStores(c, 1);
  const bucket = buckets[0] as string;
  const shopId = 'search.myshopify.com';
  const months = monthsBefore(MONTH, 24);
  const listed = [...searchShop(seed, shopId, months, jobsPerMonth)];
  await writeJobs(c.ddb, c.s3, table, [bucket], listed);
  const r = await wireHandlers(table, bucket).run({ definition: c.definition, input: RUN_INPUT });
  const report = r.output as RunReport;
  if (r.status !== 'SUCCEEDED' || report.jobsArchived !== listed.length)
    throw new Error(`search: archived ${report?.jobsArchived} of ${listed.length} jobs (${r.status})`);
  const after = await listAll(c.s3, bucket);
  const size = (pred: (k: string) => boolean) =>
    after.filter((o) => pred(o.key)).reduce((n, o) => n + o.size, 0);
  return measureSearch(c.s3, bucket, shopId, listed, sample, {
    months: months.length,
    filterBytes: await filterBytesAtRest(c.s3, bucket, after),
    partBytes: size((k) => k.startsWith('job-details-cold/')),
  });
};

export interface DailyResult {
  readonly name: string;
  readonly shopMonths: number;
  readonly jobs: number;
  readonly runs: number;
  readonly olderThanDays: number;
  readonly parts: number;
  /** Days after the month's end of the run that archived its last job (null: never). */
  readonly archivedDay: number | null;
  readonly hotObjectsLeft: number;
}

const DAILY_OLDER_THAN = 14;
const DAILY_RUNS = 20;

/**
 * A daily schedule after a month ends, as deployed (whole months on): `shops` × `jobs` small jobs
 * completed over the month, one run a day for DAILY_RUNS days with olderThanDays 14. Counts the
 * parts each shop-month ends in and the day its last job was archived.
 */
const runDaily = async (c: Ctx, shops: number, jobsPerShop: number): Promise<DailyResult> => {
  const { table, buckets } = await freshStores(c, 1);
  const bucket = buckets[0] as string;
  const r = prng(shops * 1000 + jobsPerShop);
  const jobs: BenchJob[] = [];
  for (let s = 0; s < shops; s++) {
    for (let j = 0; j < jobsPerShop; j++)
      jobs.push(
        makeJob(r, `daily-${String(s).padStart(3, '0')}.myshopify.com`, MONTH, { chunks: r.int(1, 20) }),
      );
  }
  await writeJobs(c.ddb, c.s3, table, [bucket], jobs);
  const wiredDaily = wireHandlers(table, bucket);
  const [y, m] = MONTH.split('-').map(Number) as [number, number];
  const monthEnd = Date.UTC(y, m, 1); // the first instant after the month
  let archivedDay: number | null = null;
  let archived = 0;
  for (let day = 1; day <= DAILY_RUNS; day++) {
    const now = new Date(monthEnd + day * 86_400_000 + 3 * 3_600_000).toISOString();
    const run = await wiredDaily.run({
      definition: c.definition,
      input: { olderThanDays: DAILY_OLDER_THAN, graceHours: 0, now, wholeMonths: true },
    });
    if (run.status !== 'SUCCEEDED')
      throw new Error(`daily run ${day}: ${run.status} ${JSON.stringify(run.error)}`);
    archived += (run.output as RunReport).jobsArchived;
    if (archivedDay === null && archived >= jobs.length) archivedDay = day;
  }
  const kept = await listAll(c.s3, bucket);
  return {
    name: `daily-${shops}x${jobsPerShop}`,
    shopMonths: shops,
    jobs: jobs.length,
    runs: DAILY_RUNS,
    olderThanDays: DAILY_OLDER_THAN,
    parts: kept.filter((o) => o.key.startsWith('job-details-cold/')).length,
    archivedDay,
    hotObjectsLeft: kept.filter((o) => o.key.startsWith('job-details/')).length,
  };
};

/** A detail-heavy shop-month of at least `mb` MB of uncompressed details. */
function* heavyMonth(seed: number, mb: number) {
  const r = prng(seed);
  let bytes = 0;
  while (bytes < mb * MB) {
    const j = makeJob(r, 'heavy.myshopify.com', MONTH, { chunks: 200, detailRate: 15 });
    for (const f of j.flushes) bytes += Buffer.byteLength(JSON.stringify(f));
    yield j;
  }
}

const TSX = resolve(__dirname, '../../../node_modules/.bin/tsx');
const CHILD = resolve(__dirname, 'step-child.ts');

/** Runs a step in its own process (the parent's env points it at the stack). */
/** What a function's environment names (as the construct sets it): the child step's table and bucket. */
const lambdaEnv = (table: string, bucket: string): Record<string, string> => ({
  [ENV.table]: table,
  [ENV.bucket]: bucket,
});

const inChild = async (c: Ctx, step: string, event: unknown, env: Record<string, string> = {}) => {
  const id = `${step}-${names++}`;
  const eventFile = join(c.tmp, `${id}.event.json`);
  const outFile = join(c.tmp, `${id}.out.json`);
  writeFileSync(eventFile, JSON.stringify(event));
  await new Promise<void>((ok, fail) => {
    const p = spawn(TSX, [CHILD, step, eventFile, outFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        POWERTOOLS_LOG_LEVEL: 'SILENT',
        POWERTOOLS_METRICS_DISABLED: 'true',
        ...env,
        ...(process.env.BENCH_STEP_HEAP_MB
          ? { NODE_OPTIONS: `--max-old-space-size=${process.env.BENCH_STEP_HEAP_MB}` }
          : {}),
      },
    });
    p.on('error', fail);
    p.on('exit', (code) => (code === 0 ? ok() : fail(new Error(`${step} child exited ${code}`))));
  });
  const out = JSON.parse(readFileSync(outFile, 'utf8')) as {
    result?: unknown;
    error?: { name: string; message: string };
    maxRssMb: number;
    seconds: number;
  };
  if (out.error) {
    const e = new Error(out.error.message);
    e.name = out.error.name;
    throw e;
  }
  return out;
};

const runMemory = async (c: Ctx, mb: number, seed: number) => {
  const { table, buckets } = await freshStores(c, 1);
  const bucket = buckets[0] as string;
  const hot = await writeJobs(c.ddb, c.s3, table, [bucket], heavyMonth(seed, mb));
  const rss: Record<string, number> = {};
  const seconds: Record<string, number> = {};
  const child =
    (step: string): StepHandler =>
    async (event) => {
      const out = await inChild(c, step, event, lambdaEnv(table, bucket));
      rss[step] = Math.max(rss[step] ?? 0, out.maxRssMb);
      seconds[step] = (seconds[step] ?? 0) + out.seconds;
      return out.result;
    };
  const r = await wireHandlers(table, bucket).run({
    definition: c.definition,
    input: RUN_INPUT,
    handlers: { 'archive-batch': child('archive-batch') },
  });
  if (r.status !== 'SUCCEEDED' || (r.output as RunReport).jobsArchived !== hot.jobs) {
    throw new Error(`memory ${mb} MB: run ${r.status}, ${JSON.stringify(r.output ?? r.error)}`);
  }
  return {
    uncompressedMb: hot.uncompressed / MB,
    storedMb: hot.bytes / MB,
    jobs: hot.jobs,
    archiveRssMb: rss['archive-batch'] ?? 0,
    archiveSeconds: seconds['archive-batch'] ?? 0,
  };
};

/**
 * One flush object of about `mb` MB as stored (random ids barely compress) in a month of ordinary
 * jobs: ArchiveBatch must quarantine it as oversize (the limit: `JDA_MAX_SOURCE_MB`, by default the
 * function's memory / 40, 25.6 MB at 1,024 MB) before its memory grows. `limitMb` overrides the limit
 * (the smoke run's small object).
 */
const runGiantSource = async (c: Ctx, mb: number, seed: number, limitMb?: number) => {
  const { table, buckets } = await freshStores(c, 1);
  const bucket = buckets[0] as string;
  const r = prng(seed + 7);
  const giant = makeJob(r, 'giant.myshopify.com', MONTH, { chunks: 1 });
  const ids: string[] = [];
  // base64url of random bytes: ~6 bits a character survive gzip; 25 bytes of JSON per id.
  for (let stored = 0; stored < mb * MB; stored += 24 * 0.78) ids.push(randomBytes(16).toString('base64url'));
  const big: BenchJob = {
    ...giant,
    counts: { processed: 0, failed: ids.length, skipped: 0, conflict: 0 },
    totalItems: ids.length,
    chunkIds: ['p0'],
    flushes: [{ chunk_ids: ['p0'], failed: { huge: ids }, skipped: {}, conflict: {} }],
  };
  const others = [...shopMonth(seed, 'giant.myshopify.com', MONTH, 20)];
  const hot = await writeJobs(c.ddb, c.s3, table, [bucket], [big, ...others]);
  let rssMb = 0;
  const r2 = await wireHandlers(table, bucket).run({
    definition: c.definition,
    input: RUN_INPUT,
    handlers: {
      'archive-batch': async (event) => {
        const out = await inChild(c, 'archive-batch', event, {
          ...lambdaEnv(table, bucket),
          ...(limitMb ? { [ENV.maxSourceMb]: String(limitMb) } : {}),
        });
        rssMb = Math.max(rssMb, out.maxRssMb);
        return out.result;
      },
    },
  });
  const report = r2.output as RunReport | undefined;
  const quarantined = report?.jobsQuarantined.find((q) => q.jobId === big.jobId);
  if (!report || !quarantined || report.jobsArchived !== others.length) {
    throw new Error(`giant source: ${r2.status}, ${JSON.stringify(report ?? r2.error)}`);
  }
  return { storedMb: hot.bytes / MB, sourceMb: mb, reason: quarantined.reason, archiveRssMb: rssMb };
};

/** fflate and node:zlib on the same 64 KB blocks of JSONL (level = the archive's). */
const codecBench = (seed: number, mb: number) => {
  const r = prng(seed);
  const lines: string[] = [];
  let size = 0;
  while (size < mb * MB) {
    const j = makeJob(r, 'codec.myshopify.com', MONTH);
    for (const f of j.flushes) {
      const line = `${JSON.stringify({ job_id: j.jobId, details: f })}\n`;
      lines.push(line);
      size += line.length;
    }
  }
  const all = Buffer.from(lines.join(''));
  const blocks: Buffer[] = [];
  for (let i = 0; i < all.length; i += 64 * 1024) blocks.push(all.subarray(i, i + 64 * 1024));
  const time = (fn: () => void) => {
    const t0 = performance.now();
    fn();
    return (performance.now() - t0) / 1000;
  };
  let fz: Uint8Array[] = [];
  let zz: Buffer[] = [];
  const fflateS = time(() => {
    fz = blocks.map((b) => fflateGzip(b, { level: GZIP_LEVEL as 9 }));
  });
  const zlibS = time(() => {
    zz = blocks.map((b) => gzipSync(b, { level: GZIP_LEVEL }));
  });
  const fflateInflateS = time(() => {
    for (const b of fz) fflateGunzip(b);
  });
  const zlibInflateS = time(() => {
    for (const b of zz) gunzipSync(b);
  });
  const inMb = all.length / MB;
  return {
    inputMb: inMb,
    fflateMBps: inMb / fflateS,
    zlibMBps: inMb / zlibS,
    fflateInflateMBps: inMb / fflateInflateS,
    zlibInflateMBps: inMb / zlibInflateS,
    fflateRatio: all.length / fz.reduce((s, b) => s + b.length, 0),
    zlibRatio: all.length / zz.reduce((s, b) => s + b.length, 0),
  };
};

const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);
const pad = (rows: (string | number)[][]): string[] => {
  const w = rows[0]?.map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((c, i) => String(c).padStart(w[i] ?? 0)).join('  '));
};

const main = async () => {
  const opts = parseOptions(process.argv.slice(2));
  const sizes = SIZES[opts.mode];
  const tmp = mkdtempSync(join(tmpdir(), 'jda-bench-archive-'));
  let stack: LocalStack | undefined;
  const out = console.log;
  try {
    const s0 = performance.now();
    stack = await startLocalStack({ dataDir: join(tmp, 'stack'), fresh: true });
    applyStackEnv(stack);
    const stackSeconds = (performance.now() - s0) / 1000;
    const cfg = config();
    const s1 = performance.now();
    const definition = synthesizedDefinition();
    const synthSeconds = (performance.now() - s1) / 1000;
    const c: Ctx = {
      stack,
      s3: s3ClientFrom(cfg),
      ddb: dynamoClientFrom(cfg),
      admin: new DynamoDBClient({ region: cfg.region, endpoint: cfg.dynamoEndpoint }),
      definition,
      tmp,
      ...(opts.keep !== undefined ? { keep: opts.keep } : {}),
    };
    out(
      `archive benchmark (${opts.mode}, seed ${opts.seed}); start-up excluded from wall times: stack ${f1(stackSeconds)} s, CDK synth ${f1(synthSeconds)} s`,
    );

    const steadyDeps: SteadyDeps = {
      s3: c.s3,
      ddb: c.ddb,
      definition,
      freshStores: (n) => freshStores(c, n),
      listAll: (bucket, prefix) => listAll(c.s3, bucket, prefix),
      wireHandlers,
    };
    const steadyYear = async () => {
      const lines: string[] = [];
      const { result } = await runSteadyYear(
        steadyDeps,
        scaledSteadyYearSizes(STEADY_YEAR_SIZES[opts.mode], opts.scale),
        opts.seed,
        (l) => {
          lines.push(l);
          out(l);
        },
      );
      const summary = steadyYearLines(result);
      if (opts.out !== undefined) {
        mkdirSync(opts.out, { recursive: true });
        writeFileSync(
          join(opts.out, 'steady-year.txt'),
          `${[...summary, '', 'per run:', ...lines].join('\n')}\n`,
        );
        const json = join(opts.out, 'steady-year.json');
        writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
        // In the repository's own format, so `biome check` passes on the committed figures.
        spawnSync(resolve(__dirname, '../../../node_modules/.bin/biome'), ['format', '--write', json], {
          stdio: 'ignore',
        });
      }
      return { result, summary };
    };
    if (opts.steadyYearOnly) {
      const { result, summary } = await steadyYear();
      out('');
      for (const l of summary) out(l);
      out(JSON.stringify({ mode: opts.mode, seed: opts.seed, steadyYear: result }));
      return;
    }

    if (opts.scenario !== undefined) {
      const [kind, size] = opts.scenario.split('-') as [string, string];
      const n = Number(size);
      const jobs =
        kind === 'month'
          ? shopMonth(opts.seed + n, 'big.myshopify.com', MONTH, n)
          : kind === 'seeded'
            ? seededMonth(opts.seed, MONTH, n)
            : smallFleet(opts.seed, n, MONTH);
      const s = await runScenario(c, opts.scenario, jobs, SIZES.full.lookupSample);
      out(
        `  ${s.name}: ${s.jobs} jobs, ${s.hotObjects} hot objects, hot ${f1(s.hotBytes / 1024)} KB, archive ${f1(s.archiveBytes / 1024)} KB (index ${f1(s.indexBytes / 1024)} KB): at rest ${f2(s.archiveBytes / s.hotBytes)}, gz floor ${f2(s.blockFloorRatio)}; ${f2(s.s3Requests / s.hotObjects)} S3 req per hot object; lookup month known ${f1(s.lookupRequests)} req ${f1(s.lookupBytes / 1024)} KB, unknown ${f1(s.lookupRequestsMonthUnknown)} req`,
      );
      out(JSON.stringify({ mode: opts.mode, seed: opts.seed, scenarios: [s] }));
      return;
    }
    if (opts.fleetOnly) {
      const s = await runScenario(
        c,
        `fleet-${sizes.fleetShops}`,
        smallFleet(opts.seed, sizes.fleetShops, MONTH),
        sizes.lookupSample,
        (objects) => {
          for (const l of fleetBytesLines(objects)) out(l);
        },
      );
      out(
        `  ${s.name}: ${s.jobs} jobs, ${s.hotObjects} hot objects, hot ${f1(s.hotBytes / 1024)} KB, archive ${f1(s.archiveBytes / 1024)} KB (index ${f1(s.indexBytes / 1024)} KB): at rest ${f2(s.archiveBytes / s.hotBytes)}, gz floor ${f2(s.blockFloorRatio)}; ${f2(s.s3Requests / s.hotObjects)} S3 req per hot object; lookup month known ${f1(s.lookupRequests)} req, unknown ${f1(s.lookupRequestsMonthUnknown)} req`,
      );
      out(JSON.stringify({ mode: opts.mode, seed: opts.seed, scenarios: [s] }));
      return;
    }
    if (opts.memoryOnly !== undefined) {
      const m = await runMemory(c, opts.memoryOnly, opts.seed);
      out(JSON.stringify({ memoryMb: opts.memoryOnly, ...m }));
      return;
    }
    const scenarios: ScenarioResult[] = [];
    for (const n of sizes.months) {
      scenarios.push(
        await runScenario(
          c,
          `month-${n}`,
          shopMonth(opts.seed + n, 'big.myshopify.com', MONTH, n),
          sizes.lookupSample,
        ),
      );
      out(`  done: month-${n}`);
    }
    for (const n of sizes.seeded) {
      scenarios.push(
        await runScenario(c, `seeded-${n}`, seededMonth(opts.seed, MONTH, n), sizes.lookupSample),
      );
      out(`  done: seeded-${n}`);
    }
    scenarios.push(
      await runScenario(
        c,
        `fleet-${sizes.fleetShops}`,
        smallFleet(opts.seed, sizes.fleetShops, MONTH),
        sizes.lookupSample,
      ),
    );
    out(`  done: fleet-${sizes.fleetShops}`);

    const daily = await runDaily(c, sizes.daily[0], sizes.daily[1]);
    out(`  done: ${daily.name}`);
    const search = await runSearch(c, sizes.searchJobsPerMonth, sizes.searchSample, opts.seed);
    out('  done: search');
    const steady = await steadyYear();
    out('  done: steady-year');

    // The step process's own floor (runtime, SDK, handler modules), to read the figures against.
    const baseline = await inChild(c, 'noop', {});
    const memory: Record<string, Awaited<ReturnType<typeof runMemory>>> = {};
    for (const mb of sizes.memoryMb) memory[`${mb}MB`] = await runMemory(c, mb, opts.seed);
    const giant = await runGiantSource(
      c,
      sizes.giantSourceMb,
      opts.seed,
      opts.mode === 'smoke' ? sizes.giantSourceMb / 2 : undefined,
    );
    const codec = codecBench(opts.seed, opts.mode === 'smoke' ? 1 : 16);

    out('');
    out('Throughput and cost per scenario (one shop-month, or a fleet of small shops, all in one month)');
    for (const line of pad([
      [
        'scenario',
        'jobs',
        'hot obj',
        'hot KB',
        'archive KB',
        'index KB',
        'at rest',
        'gz floor',
        'S3 req',
        'req/obj',
        'tasks/job',
        'transitions',
        'RCU/job',
        'parts/shop-mo',
        'wall s',
        'floor s',
        'x floor',
        'obj/s',
        'CPU ms/obj',
      ],
      ...scenarios.map((s) => [
        s.name,
        s.jobs,
        s.hotObjects,
        f1(s.hotBytes / 1024),
        f1(s.archiveBytes / 1024),
        f1(s.indexBytes / 1024),
        f2(s.archiveBytes / s.hotBytes),
        f2(s.blockFloorRatio),
        s.s3Requests,
        f2(s.s3Requests / s.hotObjects),
        f2(s.taskInvocations / s.jobs),
        s.stateTransitions,
        f2(s.dynamodbReadUnits / s.jobs),
        f2(s.parts / s.shopMonths),
        f1(s.wallSeconds),
        f1(s.floorSeconds),
        f2(s.wallSeconds / s.floorSeconds),
        Math.round(s.hotObjects / s.wallSeconds),
        ((1000 * s.cpuSeconds) / s.hotObjects).toFixed(3),
      ]),
    ]))
      out(`  ${line}`);
    out('');
    out('S3 requests by API call, per hot object archived');
    for (const s of scenarios) {
      out(
        `  ${s.name}: ${Object.entries(s.s3RequestsByType)
          .map(([k, v]) => `${k} ${f2(v / s.hotObjects)}`)
          .join(', ')}`,
      );
    }
    out('');
    out('Lookup of one archived job (average over the sample)');
    for (const line of pad([
      ['scenario', 'month known: req', 'KB', 'month unknown: req', 'KB', 'whole-part GET KB'],
      ...scenarios.map((s) => [
        s.name,
        f1(s.lookupRequests),
        f1(s.lookupBytes / 1024),
        f1(s.lookupRequestsMonthUnknown),
        f1(s.lookupBytesMonthUnknown / 1024),
        f1(s.wholePartBytes / 1024),
      ]),
    ]))
      out(`  ${line}`);
    out('');
    out('Document filters (find by document): filter bytes against part bytes');
    for (const s of scenarios)
      out(
        `  ${s.name}: ${f1(s.filterBytes / 1024)} KB of filters for ${f1(s.partBytes / 1024)} KB of parts (${f1((100 * s.filterBytes) / Math.max(1, s.partBytes))} %)`,
      );
    out(
      `Search by document: one shop, ${search.months} archived months, ${search.jobs} jobs (design mix), ${search.searches} searches (half present, half absent documents)`,
    );
    out(
      `  per search: ${f1(search.requests)} S3 requests, ${f1(search.bytes / 1024)} KB, ${f2(search.blocksRead)} blocks read of ${f1(search.blocksPerSearch)} filtered, ${f2(search.falsePositiveBlocks)} false-positive blocks; false positives per filtered block ${f2(100 * search.falsePositiveRate)} %; requests over 2/month + 1/block read (List included): ${search.requestsOverBound}; missed: ${search.missed}`,
    );
    out(
      `  filters: ${f1(search.filterBytes / 1024)} KB for ${f1(search.partBytes / 1024)} KB of parts (${f1((100 * search.filterBytes) / Math.max(1, search.partBytes))} %)`,
    );
    out('');
    out(
      `Daily schedule (whole months): ${daily.shopMonths} shops × ${daily.jobs / daily.shopMonths} jobs in ${MONTH}, a run a day for ${daily.runs} days after the month with olderThanDays ${daily.olderThanDays}`,
    );
    out(
      `  ${daily.name}: ${f2(daily.parts / daily.shopMonths)} parts per shop-month (${daily.parts} parts); every job archived by the run ${daily.archivedDay ?? 'never'} days after the month ended (deadline: ${daily.olderThanDays + 5}); hot objects left ${daily.hotObjectsLeft}`,
    );
    out('');
    for (const l of steady.summary) out(l);
    out('');
    out(
      `Memory: peak RSS of each step in its own process (one detail-heavy shop-month); an idle step process: ${f1(baseline.maxRssMb)} MB`,
    );
    for (const [k, m] of Object.entries(memory)) {
      out(
        `  ${k} uncompressed (${f1(m.uncompressedMb)} MB, ${m.jobs} jobs, ${f1(m.storedMb)} MB stored): ArchiveBatch ${f1(m.archiveRssMb)} MB in ${f1(m.archiveSeconds)} s`,
      );
    }
    out(
      `  one ${f1(giant.sourceMb)} MB source object in a month of 20 jobs (${f1(giant.storedMb)} MB stored in all): quarantined before it is read — "${giant.reason}"; ArchiveBatch ${f1(giant.archiveRssMb)} MB`,
    );
    out('');
    out(
      `Codec on ${f1(codec.inputMb)} MB of JSONL in 64 KB blocks, level ${GZIP_LEVEL}: fflate ${f1(codec.fflateMBps)} MB/s (inflate ${f1(codec.fflateInflateMBps)}), node:zlib ${f1(codec.zlibMBps)} MB/s (inflate ${f1(codec.zlibInflateMBps)}); ratio ${f2(codec.fflateRatio)} vs ${f2(codec.zlibRatio)}`,
    );
    out(
      JSON.stringify({
        mode: opts.mode,
        seed: opts.seed,
        startupSeconds: { stack: stackSeconds, synth: synthSeconds },
        scenarios,
        daily,
        search,
        steadyYear: steady.result,
        peakRssMb: Object.fromEntries(Object.entries(memory).map(([k, m]) => [k, m.archiveRssMb])),
        giantSource: giant,
        idleStepRssMb: baseline.maxRssMb,
        codec: {
          fflateMBps: codec.fflateMBps,
          zlibMBps: codec.zlibMBps,
          fflateInflateMBps: codec.fflateInflateMBps,
          zlibInflateMBps: codec.zlibInflateMBps,
        },
      }),
    );
    c.s3.destroy();
    c.ddb.destroy();
    c.admin.destroy();
  } finally {
    wired?.destroy();
    await stack?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
};

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
