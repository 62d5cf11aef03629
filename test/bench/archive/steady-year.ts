/**
 * `steady-year`: the archiver as it lives — a daily scheduled run for months, beside a hot prefix
 * full of recent jobs, over a table whose rows expire. On the embedded stack:
 *
 * - jobs complete every day (large shops daily, a tail of small shops 1–3 times a month; all three
 *   terminal statuses) and are written as they complete, so every run sees neighbours: recent jobs
 *   under `job-details/` that are not yet eligible;
 * - one run a day at 03:00 with `--now` advancing, whole months, olderThanDays 14, graceHours as deployed (0);
 * - rows are deleted when their TTL passes, as DynamoDB's TTL would (DynamoDB Local never deletes);
 * - S3 lifecycle, which s3rver lacks, is simulated from the construct's rules: a part moves to Glacier
 *   IR a day after it was written when it is larger than the rule's `ObjectSizeGreaterThan` (the
 *   construct's default transitionMinimumSize for Glacier IR kept forever; smaller parts stay in
 *   Standard), indexes and hot objects stay in Standard, run scratch expires after RUNS_EXPIRE_DAYS.
 *
 * Per run and in total: jobs planned, S3 requests by API call (handlers plus the Distributed Map's),
 * DynamoDB read units, task invocations, state transitions, lifecycle transitions, bytes at rest by
 * class, hot objects left — and each per archived hot object. Only stable RunReport fields are read
 * (missing ones count 0), so the harness keeps working as planning and listing change.
 *
 * The volume is a knob (`--scale N`: the large shops' jobs a day × N). Runs cost fixed amounts (an
 * idle run's watermark and report, an active run's plan files, a shop-month's commit) beside the one
 * GET per archived hot object, so the summary splits the year's requests into those parts
 * (steady-year-decomposition.ts) and says what the fixed parts would be at the design's volume.
 */

import { DeleteObjectsCommand, type S3Client } from '@aws-sdk/client-s3';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_PRICES } from '../../../infra/cli/prices';
import { transitionBreakEvenBytes } from '../../../infra/cli/transition-threshold';
import type { ArchiverStep } from '../../../infra/construct/step-names';
import type {
  LocalRunResult,
  RunArchiverLocallyOptions,
  runArchiverLocally,
  StepHandler,
  synthesizedDefinition,
} from '../../../infra/local/runner';
import { s3ClientFrom } from '../../../shared/clients';
import { config } from '../../../shared/config';
import { jobPk, jobSk } from '../../../shared/jobs/schema';
import { addCounts } from '../../../shared/metrics';
import { JobDetailsReader } from '../../../shared/reader';
import { RUNS_EXPIRE_DAYS, SETTINGS } from '../../../shared/settings';
import { byKeyClass, keyClass, type TracedRequest } from './request-trace';
import {
  decomposeSteadyYear,
  decompositionLines,
  type SteadyDecomposition,
} from './steady-year-decomposition';
import { type BenchJob, makeJob, prng, writeJobs } from './workload';

export interface SteadyYearSizes {
  /** First day jobs complete (UTC, a month's first day). */
  readonly jobsFrom: string;
  /** First and last run (03:00 UTC each day). */
  readonly runsFrom: string;
  readonly runsTo: string;
  readonly largeShops: number;
  readonly largeJobsPerDay: number;
  readonly tailShops: number;
  /** `--scale N`: largeJobsPerDay is the mode's × N (the tail stays the tail). */
  readonly scale: number;
}

export const STEADY_YEAR_SIZES: Record<'full' | 'quick' | 'smoke', SteadyYearSizes> = {
  // 13 months of runs; the first archival is Feb 15 (January is whole and 14 days old). In the past:
  // a run's `now` may not be later than its execution's start.
  full: {
    jobsFrom: '2025-01-01',
    runsFrom: '2025-01-02',
    runsTo: '2026-01-31',
    largeShops: 3,
    largeJobsPerDay: 4,
    tailShops: 40,
    scale: 1,
  },
  // A few weeks: idle runs, the run that archives January, then idle runs beside February's jobs.
  quick: {
    jobsFrom: '2026-01-01',
    runsFrom: '2026-02-08',
    runsTo: '2026-03-07',
    largeShops: 2,
    largeJobsPerDay: 3,
    tailShops: 20,
    scale: 1,
  },
  // An idle run, the run that archives January (and deletes its hot objects: no grace by default), an idle run.
  smoke: {
    jobsFrom: '2026-01-01',
    runsFrom: '2026-02-14',
    runsTo: '2026-02-16',
    largeShops: 1,
    largeJobsPerDay: 1,
    tailShops: 4,
    scale: 1,
  },
};

/** A mode's sizes with the large shops' daily jobs multiplied by `scale` (volume as a knob). */
export const scaledSteadyYearSizes = (s: SteadyYearSizes, scale: number): SteadyYearSizes => ({
  ...s,
  largeJobsPerDay: s.largeJobsPerDay * scale,
  scale: s.scale * scale,
});

export const STEADY_YEAR_SETTINGS = {
  olderThanDays: 14,
  /** The deployed default (shared/settings.ts). */
  graceHours: SETTINGS.graceHours.default,
  jobTtlDays: 90,
  /** The construct's lifecycle rule (details-bucket.ts). */
  runsExpireDays: RUNS_EXPIRE_DAYS,
  transitionAfterDays: 1,
  /** The construct's default transitionMinimumSize (Glacier IR, retentionMonths as deployed). */
  transitionMinBytes: transitionBreakEvenBytes({
    storageClass: 'GLACIER_IR',
    retentionMonths: SETTINGS.retentionMonths.default,
    transitionAfterDays: 1,
  }),
  storageClass: 'GLACIER_IR',
} as const;

const DAY = 86_400_000;

export interface StoredObject {
  readonly key: string;
  readonly size: number;
}

/** The in-process handlers wired to one table and bucket, and the DynamoDB read units they used. */
export interface Wired {
  readonly units: { read: number; requests: number };
  /** Every S3 request the handlers and the Distributed Map sent, with its key (request-trace.ts). */
  readonly trace: { list: TracedRequest[] };
  /** A run of the synthesized machine over them (`handlers` replaces some steps' handlers). */
  run(
    opts: Pick<RunArchiverLocallyOptions, 'definition' | 'input'> & {
      readonly handlers?: Partial<Record<ArchiverStep, StepHandler>>;
    },
  ): ReturnType<typeof runArchiverLocally>;
}

export interface SteadyDeps {
  readonly s3: S3Client;
  readonly ddb: DynamoDBDocumentClient;
  readonly definition: ReturnType<typeof synthesizedDefinition>;
  readonly freshStores: (buckets: number) => Promise<{ table: string; buckets: string[] }>;
  readonly listAll: (bucket: string, prefix?: string) => Promise<StoredObject[]>;
  /** Wires the handlers to the stores, on `clock`; `units.read` sums the read units they consume. */
  readonly wireHandlers: (table: string, bucket: string, clock: () => Date) => Wired;
}

export interface SteadyRun {
  readonly day: string;
  readonly jobsPlanned: number;
  readonly jobsArchived: number;
  /** Hot objects deleted after a verified commit (the archived hot objects). */
  readonly hotArchived: number;
  readonly s3ByType: Record<string, number>;
  readonly s3Requests: number;
  /** GetObject on hot keys (the request trace): the floor, one per archived hot object. */
  readonly hotGets: number;
  /** ListObjectsV2 and DeleteObjects on hot keys (the request trace): pages of up to 1,000 keys. */
  readonly hotPages: number;
  /** Shop-months the run's groups completed (the report's groupsOk). */
  readonly groupsOk: number;
  readonly readUnits: number;
  readonly invocations: number;
  /** Seconds inside handlers (Lambda duration, locally: mostly the emulators' latency). */
  readonly taskSeconds: number;
  /**
   * CPU seconds of this process while the run's handlers ran (runner.ts `handlerCpuSeconds`): what
   * the cost model bills as the steps' CPU, an upper bound (the interpreter's work while a handler
   * waits is in it, its work between handlers is not).
   */
  readonly cpuSeconds: number;
  /** CPU seconds of this process over the whole run (runner.ts `cpuSeconds`: the interpreter's included). */
  readonly processCpuSeconds: number;
  /** Per step: invocations, wall and CPU seconds around its handler (runner.ts `steps`). */
  readonly steps: LocalRunResult['steps'];
  /** DynamoDB requests the handlers sent (Lambda waits on each). */
  readonly dynamodbRequests: number;
  readonly stateTransitions: number;
  /** Lifecycle transitions S3 would make that day (parts turning a day old, larger than transitionMinBytes). */
  readonly lifecycleTransitions: number;
  readonly hotObjectsLeft: number;
  readonly rowsExpired: number;
  /** Hot bytes read into parts, and part bytes written (the report's bytesIn / bytesOut). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Bytes the run left under its scratch prefix `job-details-runs/{run}/` (Standard, until they expire). */
  readonly scratchBytes: number;
  /** Active runs only: requests by API and kind of key (request-trace.ts), most first. */
  readonly byKey?: [string, number][];
}

/** One lookup of an archived job (month known), split by what it read. */
export interface LookupCost {
  readonly sample: number;
  /** Per lookup: GETs of month indexes (Standard) and of part blocks (the part's class). */
  readonly indexRequests: number;
  readonly indexBytes: number;
  readonly partRequests: number;
  readonly partBytes: number;
  readonly otherRequests: number;
}

export interface SteadyYearResult {
  readonly name: 'steady-year';
  readonly settings: typeof STEADY_YEAR_SETTINGS;
  readonly sizes: SteadyYearSizes;
  readonly runs: number;
  readonly idleRuns: number;
  readonly jobs: number;
  readonly jobsByStatus: Record<string, number>;
  readonly shops: { large: number; tail: number };
  readonly hotObjectsWritten: number;
  readonly hotBytesWritten: number;
  readonly totals: Omit<SteadyRun, 'day' | 'hotObjectsLeft' | 'steps'>;
  readonly perArchivedHotObject: {
    readonly s3Requests: number;
    readonly s3ByType: Record<string, number>;
    readonly readUnits: number;
    readonly invocations: number;
    readonly stateTransitions: number;
    readonly lifecycleTransitions: number;
    readonly jobsPlanned: number;
  };
  /** Idle runs: those that archived and deleted nothing. */
  readonly idle: {
    readonly maxJobsPlanned: number;
    readonly maxS3Requests: number;
    readonly maxInvocations: number;
    /** The mean idle run: what the cost model charges per scheduled day. */
    readonly mean: {
      readonly s3ByType: Record<string, number>;
      readonly invocations: number;
      readonly taskSeconds: number;
      readonly cpuSeconds: number;
      readonly dynamodbRequests: number;
      readonly stateTransitions: number;
      readonly readUnits: number;
    };
  };
  /** At the end, by class and prefix (bytes). */
  readonly bytesAtRest: Record<string, number>;
  /**
   * What each prefix of `bytesAtRest` costs a month in its class (list prices, infra/cli/prices.ts;
   * run scratch as the year held it on average), and the parts as if all were in Deep Archive.
   */
  readonly atRestUsdMonth: Record<string, number>;
  /**
   * Run scratch: bytes the runs wrote under `job-details-runs/`, per archived hot object, and kept
   * in Standard for `expireDays` (the lifecycle rule); `meanBytes` is what the year held on average.
   */
  readonly runScratch: {
    readonly expireDays: number;
    readonly bytesWritten: number;
    readonly bytesPerArchivedObject: number;
    /** Bytes written by kind of scratch file (its path below the run, page numbers and shops left out). */
    readonly byFile: Record<string, number>;
    readonly meanBytes: number;
  };
  readonly parts: { readonly count: number; readonly inGlacierIr: number; readonly meanBytes: number };
  readonly hotObjectsLeft: number;
  /** Hot objects left whose row TTL already deleted: what no run will archive (issue 20 point 3b). */
  readonly hotObjectsLeftRowless: number;
  /** Hot objects of jobs not yet eligible at the last run (neighbours). */
  readonly hotObjectsLeftNotYetEligible: number;
  /** Every part's size at the end (the cost model decides each part's class from its size). */
  readonly partSizes: number[];
  readonly lookup: LookupCost;
  /** S3 requests split into the hot GETs, idle runs and active runs' overhead; with an extrapolation. */
  readonly decomposition: SteadyDecomposition;
  /** Seconds writing the workload (rows and hot objects) and deleting expired rows: the harness's, not the archiver's. */
  readonly seedSeconds: number;
  /** Seconds inside the archiver's runs (the synthesized machine, in process). */
  readonly runSeconds: number;
  readonly wallSeconds: number;
  readonly perRun: SteadyRun[];
  readonly monthly: { month: string; bytesAtRest: Record<string, number>; hotObjectsLeft: number }[];
}

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** A scratch key's kind: its path below the run with page numbers, map run ids and shops left out. */
const scratchFile = (key: string): string => {
  const rel = key.split('/').slice(2);
  if (rel[0] === 'plan' || rel[0] === 'pages' || rel[0] === 'attempts')
    return `${rel[0]}/${rel.at(-1)?.replace(/^\d+(-.*)?\.json$/, 'N.json')}`;
  if (rel[0] === 'results') return `results/${(rel.at(-1) ?? '').replace(/_\d+\.json$/, '_N.json')}`;
  if (rel[0] === 'findings') return `findings/${rel.at(-1)}`;
  return rel.join('/');
};

/**
 * The bytes at rest at the end, priced in their class (list prices, infra/cli/prices.ts): what is
 * in Standard besides the hot objects (indexes, run scratch as the year held it on average, the rest)
 * against what the parts cost, with the parts in Glacier IR (as measured) and in Deep Archive.
 */
const atRestUsdMonth = (b: Record<string, number>, runScratchMean: number): Record<string, number> => {
  const p = DEFAULT_PRICES;
  const gb = (x: number) => x / 1024 ** 3;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) {
    const cls = k.split(' ')[0] as string;
    const perGb = cls === 'STANDARD' ? p.standardGbMonth : (p.classGbMonth as Record<string, number>)[cls];
    if (perGb !== undefined && !k.endsWith(' runs')) out[k] = gb(v) * perGb;
  }
  out['STANDARD runs (mean)'] = gb(runScratchMean) * p.standardGbMonth;
  out['parts all in DEEP_ARCHIVE'] =
    gb((b['GLACIER_IR parts'] ?? 0) + (b['STANDARD parts'] ?? 0)) * p.classGbMonth.DEEP_ARCHIVE;
  return out;
};

/** `atRestUsdMonth` as lines: Standard besides the hot objects against the parts, in both classes. */
const atRestCostLines = (r: SteadyYearResult): string[] => {
  const b = r.bytesAtRest;
  const u = r.atRestUsdMonth;
  const inIr = (u['GLACIER_IR parts'] ?? 0) + (u['STANDARD parts'] ?? 0);
  const inDa = u['parts all in DEEP_ARCHIVE'] ?? 0;
  const standard: [string, number, number][] = [
    ['index', b['STANDARD index'] ?? 0, u['STANDARD index'] ?? 0],
    ['runs (mean)', r.runScratch.meanBytes, u['STANDARD runs (mean)'] ?? 0],
    ['other', b['STANDARD other'] ?? 0, u['STANDARD other'] ?? 0],
  ];
  const total = standard.reduce((a, [, , usd]) => a + usd, 0);
  const pct = (x: number, of: number) => `${((100 * x) / Math.max(1e-12, of)).toFixed(1)} %`;
  return [
    `  at rest, $ a month in its class: parts $${inIr.toExponential(3)} (Glacier IR as measured), $${inDa.toExponential(3)} all in Deep Archive; in Standard besides hot objects $${total.toExponential(3)} = ${pct(total, inIr)} of the parts' in Glacier IR, ${pct(total, inDa)} in Deep Archive`,
    `    ${standard
      .map(
        ([k, bytes, usd]) =>
          `${k} ${kb(bytes)} $${usd.toExponential(2)} (${pct(usd, inIr)} / ${pct(usd, inDa)})`,
      )
      .join(
        ', ',
      )}; run scratch: ${kb(r.runScratch.bytesWritten)} written, ${f2(r.runScratch.bytesPerArchivedObject)} B per archived hot object, kept ${r.runScratch.expireDays} days`,
  ];
};

/** Every job of the simulation, by completion time. Deterministic in `seed`. */
export const steadyYearJobs = (seed: number, s: SteadyYearSizes): BenchJob[] => {
  const r = prng(seed * 7919 + 20);
  const from = Date.parse(`${s.jobsFrom}T00:00:00Z`);
  const to = Date.parse(`${s.runsTo}T00:00:00Z`);
  const jobs: BenchJob[] = [];
  const at = (ms: number, j: BenchJob): BenchJob => {
    const completedAt = new Date(ms).toISOString();
    return { ...j, completedAt, createdAt: new Date(ms - r.int(1, 3600) * 1000).toISOString() };
  };
  for (let day = from; day < to; day += DAY) {
    const month = isoDay(day).slice(0, 7);
    for (let shop = 0; shop < s.largeShops; shop++) {
      for (let k = 0; k < s.largeJobsPerDay; k++) {
        const j = makeJob(r, `large-${shop}.myshopify.com`, month, { chunks: r.int(1, 60) });
        jobs.push(at(day + r.int(0, DAY / 1000 - 1) * 1000, j));
      }
    }
  }
  // The tail: each small shop completes 1–3 small jobs in each month, on random days.
  for (
    let m = new Date(from);
    m.getTime() < to;
    m = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1))
  ) {
    const start = m.getTime();
    const end = Math.min(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1), to);
    const month = isoDay(start).slice(0, 7);
    for (let shop = 0; shop < s.tailShops; shop++) {
      const n = r.int(1, 3);
      for (let k = 0; k < n; k++) {
        const j = makeJob(r, `tail-${String(shop).padStart(3, '0')}.myshopify.com`, month, {
          chunks: r.int(1, 20),
        });
        jobs.push(at(start + r.int(0, Math.floor((end - start) / 1000) - 1) * 1000, j));
      }
    }
  }
  // Every terminal status at least once, whatever the seed draws (status does not change the bytes).
  const statuses = ['COMPLETED', 'FAILED', 'CONFLICT'] as const;
  jobs.sort((a, b) => a.completedAt.localeCompare(b.completedAt));
  return jobs.map((j, i) => (i < statuses.length ? { ...j, status: statuses[i] as BenchJob['status'] } : j));
};

/** The class a part is billed in `ageDays` after it was written, under the construct's default rule. */
export const simulatedClass = (size: number, ageDays: number): 'STANDARD' | 'GLACIER_IR' =>
  size > STEADY_YEAR_SETTINGS.transitionMinBytes && ageDays >= STEADY_YEAR_SETTINGS.transitionAfterDays
    ? 'GLACIER_IR'
    : 'STANDARD';

/** `part-20260315T030000Z-…`: the part's creation (the run's logical now), from its name. */
const partWritten = (key: string): number | undefined => {
  const m = /\/part-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[^/]+$/.exec(key);
  if (!m) return undefined;
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, se);
};

/** Bytes at rest by class and prefix, with lifecycle applied at `now`. */
export const bytesAtRest = (objects: readonly StoredObject[], now: number): Record<string, number> => {
  const out: Record<string, number> = {
    'STANDARD hot': 0,
    'STANDARD index': 0,
    'STANDARD parts': 0,
    'GLACIER_IR parts': 0,
    'STANDARD runs': 0,
  };
  const add = (k: string, n: number) => {
    out[k] = (out[k] ?? 0) + n;
  };
  for (const o of objects) {
    if (o.key.startsWith('job-details-cold/')) {
      const written = partWritten(o.key) ?? now;
      add(`${simulatedClass(o.size, (now - written) / DAY)} parts`, o.size);
    } else if (o.key.startsWith('job-details-index/')) add('STANDARD index', o.size);
    else if (o.key.startsWith('job-details-runs/')) add('STANDARD runs', o.size);
    else if (o.key.startsWith('job-details/')) add('STANDARD hot', o.size);
    else add('STANDARD other', o.size);
  }
  return out;
};

type Loose = Record<string, unknown>;
const n = (o: Loose | undefined, k: string): number => (typeof o?.[k] === 'number' ? (o[k] as number) : 0);

const sumInto = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
};

const hotRequests = (list: readonly TracedRequest[], apis: readonly string[]): number =>
  list.filter((t) => apis.includes(t.api) && keyClass(t.key) === 'hot').length;

export const runSteadyYear = async (
  d: SteadyDeps,
  sizes: SteadyYearSizes,
  seed: number,
  progress: (line: string) => void = () => undefined,
): Promise<{ result: SteadyYearResult; perRun: SteadyRun[] }> => {
  const S = STEADY_YEAR_SETTINGS;
  if (Date.parse(`${sizes.runsTo}T03:00:00Z`) > Date.now())
    throw new Error(`steady-year: the last run (${sizes.runsTo}) is in the future; a run's now may not be`);
  const t0 = performance.now();
  const { table, buckets } = await d.freshStores(1);
  const bucket = buckets[0] as string;
  // The handlers' clock (part names, commit times) runs from each run's simulated now (set below).
  let clock = (): Date => new Date();
  const { units, trace, run: runMachine } = d.wireHandlers(table, bucket, () => clock());
  const jobs = steadyYearJobs(seed, sizes);
  // objectsOf's count without encoding every body up front (writeJobs encodes them when it writes).
  const objectsOfJob = new Map(jobs.map((j) => [j.jobId, j.flushes.length + (j.platformData ? 1 : 0)]));
  const jobsByStatus: Record<string, number> = {};
  for (const j of jobs) jobsByStatus[j.status] = (jobsByStatus[j.status] ?? 0) + 1;

  let seedSeconds = 0;
  let runSeconds = 0;
  let written = 0; // jobs[0..written) are in the stores
  let expired = 0; // jobs[0..expired) have had their rows deleted (TTL)
  const rowless = new Set<string>();
  let hotObjects = 0;
  let hotBytes = 0;
  let hotLeft = 0;
  const partsSeen = new Map<string, number>(); // part key → size, to count lifecycle transitions
  const transitioned = new Set<string>();
  const scratch: { runId: string; day: number }[] = [];
  const scratchByFile: Record<string, number> = {};
  const perRun: SteadyRun[] = [];
  const monthly: SteadyYearResult['monthly'] = [];

  const first = Date.parse(`${sizes.runsFrom}T03:00:00Z`);
  const last = Date.parse(`${sizes.runsTo}T03:00:00Z`);
  for (let now = first; now <= last; now += DAY) {
    // The indexer's writes up to now, then TTL's deletions.
    const seedStart = performance.now();
    const due: BenchJob[] = [];
    while (written < jobs.length && Date.parse((jobs[written] as BenchJob).completedAt) < now)
      due.push(jobs[written++] as BenchJob);
    if (due.length > 0) {
      const w = await writeJobs(d.ddb, d.s3, table, [bucket], due);
      hotObjects += w.objects;
      hotBytes += w.bytes;
      hotLeft += w.objects;
    }
    const gone: BenchJob[] = [];
    while (
      expired < written &&
      Date.parse((jobs[expired] as BenchJob).completedAt) + S.jobTtlDays * DAY <= now
    )
      gone.push(jobs[expired++] as BenchJob);
    for (let i = 0; i < gone.length; i += 25) {
      const slice = gone.slice(i, i + 25);
      await d.ddb.send(
        new BatchWriteCommand({
          RequestItems: {
            [table]: slice.map((j) => ({
              DeleteRequest: { Key: { pk: jobPk(j.shopId), sk: jobSk(j.jobId) } },
            })),
          },
        }),
      );
      for (const j of slice) rowless.add(j.jobId);
    }
    seedSeconds += (performance.now() - seedStart) / 1000;
    // Run scratch older than its lifecycle rule is gone (harness deletes: not the archiver's requests).
    while (scratch.length > 0 && (scratch[0] as { day: number }).day + S.runsExpireDays * DAY <= now) {
      const { runId } = scratch.shift() as { runId: string };
      const keys = await d.listAll(bucket, `job-details-runs/${runId}/`);
      for (let i = 0; i < keys.length; i += 1000) {
        await d.s3.send(
          new DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: keys.slice(i, i + 1000).map((o) => ({ Key: o.key })), Quiet: true },
          }),
        );
      }
    }

    const readBefore = units.read;
    const requestsBefore = units.requests;
    trace.list = [];
    // The handlers' clock (part names, commit times) runs from the simulated now, as a deployed
    // run's would: graceHours then counts between simulated days, not against the wall clock.
    const started = performance.now();
    clock = () => new Date(now + (performance.now() - started));
    const run = await runMachine({
      definition: d.definition,
      input: {
        olderThanDays: S.olderThanDays,
        graceHours: S.graceHours,
        now: new Date(now).toISOString(),
        wholeMonths: true,
      },
    });
    runSeconds += (performance.now() - started) / 1000;
    if (run.status !== 'SUCCEEDED')
      throw new Error(`steady-year ${isoDay(now)}: ${run.status} ${JSON.stringify(run.error)}`);
    const report = run.output as Loose;
    if (typeof report.runId === 'string') scratch.push({ runId: report.runId, day: now });
    const requests = report.requests as Parameters<typeof addCounts>[0] | undefined;
    const all = requests ? addCounts(requests, run.mapRequests) : run.mapRequests;
    const s3ByType = Object.fromEntries(
      Object.entries(all.byType ?? {})
        .filter(([k]) => k.startsWith('s3.'))
        .map(([k, v]) => [k.slice(3), v]),
    );
    const hotArchived = n(report, 'objectsDeleted');
    hotLeft -= hotArchived;

    // Lifecycle: parts written by earlier runs that turn transitionAfterDays old today.
    const parts = await d.listAll(bucket, 'job-details-cold/');
    let lifecycleTransitions = 0;
    for (const p of parts) {
      partsSeen.set(p.key, p.size);
      const w = partWritten(p.key);
      if (w === undefined || transitioned.has(p.key)) continue;
      if (simulatedClass(p.size, (now - w) / DAY) === 'GLACIER_IR') {
        transitioned.add(p.key);
        lifecycleTransitions++;
      }
    }
    const entry: SteadyRun = {
      day: isoDay(now),
      jobsPlanned: n(report, 'jobsPlanned'),
      jobsArchived: n(report, 'jobsArchived'),
      hotArchived,
      s3ByType,
      s3Requests: Object.values(s3ByType).reduce((a, b) => a + b, 0),
      hotGets: hotRequests(trace.list, ['GetObject']),
      hotPages: hotRequests(trace.list, ['ListObjectsV2', 'DeleteObjects']),
      groupsOk: n(report, 'groupsOk'),
      readUnits: units.read - readBefore,
      invocations: Object.values(run.taskInvocations).reduce((a, b) => a + b, 0),
      taskSeconds: run.taskSeconds,
      cpuSeconds: run.handlerCpuSeconds,
      processCpuSeconds: run.cpuSeconds,
      steps: run.steps,
      dynamodbRequests: units.requests - requestsBefore,
      stateTransitions: run.stateTransitions,
      lifecycleTransitions,
      hotObjectsLeft: hotLeft,
      rowsExpired: gone.length,
      bytesIn: n(report, 'bytesIn'),
      bytesOut: n(report, 'bytesOut'),
      scratchBytes:
        typeof report.runId === 'string'
          ? (await d.listAll(bucket, `job-details-runs/${report.runId}/`)).reduce((a, o) => {
              const file = scratchFile(o.key);
              scratchByFile[file] = (scratchByFile[file] ?? 0) + o.size;
              return a + o.size;
            }, 0)
          : 0,
      ...(n(report, 'jobsPlanned') > 0 ? { byKey: byKeyClass(trace.list) } : {}),
    };
    perRun.push(entry);
    progress(runLine(entry));

    const tomorrow = new Date(now + DAY);
    if (tomorrow.getUTCDate() === 1 || now + DAY > last) {
      const objects = await d.listAll(bucket);
      monthly.push({
        month: isoDay(now).slice(0, 7),
        bytesAtRest: bytesAtRest(objects, now),
        hotObjectsLeft: objects.filter((o) => o.key.startsWith('job-details/')).length,
      });
    }
  }

  clock = () => new Date();
  const end = await d.listAll(bucket);
  const hot = end.filter((o) => o.key.startsWith('job-details/'));
  const jobOfKey = (key: string) => key.split('/')[1] ?? '';
  const hotJobs = new Set(hot.map((o) => jobOfKey(o.key)));
  const byId = new Map(jobs.map((j) => [j.jobId, j]));
  const lastNow = perRun.length > 0 ? Date.parse(`${perRun.at(-1)?.day}T03:00:00Z`) : last;
  const cutoff = (() => {
    const c = new Date(lastNow - S.olderThanDays * DAY);
    return Date.UTC(c.getUTCFullYear(), c.getUTCMonth(), 1);
  })();
  let rowlessLeft = 0;
  let notYetEligible = 0;
  for (const id of hotJobs) {
    const k = objectsOfJob.get(id) ?? 0;
    if (rowless.has(id)) rowlessLeft += k;
    const j = byId.get(id);
    if (j && Date.parse(j.completedAt) >= cutoff) notYetEligible += k;
  }
  const totals = {
    jobsPlanned: 0,
    jobsArchived: 0,
    hotArchived: 0,
    s3ByType: {} as Record<string, number>,
    s3Requests: 0,
    hotGets: 0,
    hotPages: 0,
    groupsOk: 0,
    readUnits: 0,
    invocations: 0,
    taskSeconds: 0,
    cpuSeconds: 0,
    processCpuSeconds: 0,
    dynamodbRequests: 0,
    stateTransitions: 0,
    lifecycleTransitions: 0,
    rowsExpired: 0,
    bytesIn: 0,
    bytesOut: 0,
    scratchBytes: 0,
  };
  for (const r of perRun) {
    totals.scratchBytes += r.scratchBytes;
    totals.jobsPlanned += r.jobsPlanned;
    totals.jobsArchived += r.jobsArchived;
    totals.hotArchived += r.hotArchived;
    sumInto(totals.s3ByType, r.s3ByType);
    totals.s3Requests += r.s3Requests;
    totals.hotGets += r.hotGets;
    totals.hotPages += r.hotPages;
    totals.groupsOk += r.groupsOk;
    totals.readUnits += r.readUnits;
    totals.invocations += r.invocations;
    totals.taskSeconds += r.taskSeconds;
    totals.cpuSeconds += r.cpuSeconds;
    totals.processCpuSeconds += r.processCpuSeconds;
    totals.dynamodbRequests += r.dynamodbRequests;
    totals.stateTransitions += r.stateTransitions;
    totals.lifecycleTransitions += r.lifecycleTransitions;
    totals.rowsExpired += r.rowsExpired;
    totals.bytesIn += r.bytesIn;
    totals.bytesOut += r.bytesOut;
  }
  const per = (x: number) => x / Math.max(1, totals.hotArchived);
  const idleRuns = perRun.filter((r) => r.jobsArchived === 0 && r.hotArchived === 0);
  const partList = end.filter((o) => o.key.startsWith('job-details-cold/'));
  const lookup = await measureLookups(
    bucket,
    jobs.filter((j) => Date.parse(j.completedAt) < cutoff && !hotJobs.has(j.jobId)),
    seed,
  );
  const runScratch = {
    expireDays: S.runsExpireDays,
    bytesWritten: totals.scratchBytes,
    bytesPerArchivedObject: per(totals.scratchBytes),
    byFile: scratchByFile,
    // Each run's scratch is in Standard from its day until it expires (or the year ends).
    meanBytes:
      perRun.reduce(
        (a, r) =>
          a +
          r.scratchBytes * Math.min(S.runsExpireDays, (lastNow - Date.parse(`${r.day}T03:00:00Z`)) / DAY + 1),
        0,
      ) / Math.max(1, perRun.length),
  };
  const result: SteadyYearResult = {
    name: 'steady-year',
    settings: S,
    sizes,
    runs: perRun.length,
    idleRuns: idleRuns.length,
    jobs: written,
    jobsByStatus,
    shops: { large: sizes.largeShops, tail: sizes.tailShops },
    hotObjectsWritten: hotObjects,
    hotBytesWritten: hotBytes,
    totals,
    perArchivedHotObject: {
      s3Requests: per(totals.s3Requests),
      s3ByType: Object.fromEntries(Object.entries(totals.s3ByType).map(([k, v]) => [k, per(v)])),
      readUnits: per(totals.readUnits),
      invocations: per(totals.invocations),
      stateTransitions: per(totals.stateTransitions),
      lifecycleTransitions: per(totals.lifecycleTransitions),
      jobsPlanned: per(totals.jobsPlanned),
    },
    idle: {
      maxJobsPlanned: Math.max(0, ...idleRuns.map((r) => r.jobsPlanned)),
      maxS3Requests: Math.max(0, ...idleRuns.map((r) => r.s3Requests)),
      maxInvocations: Math.max(0, ...idleRuns.map((r) => r.invocations)),
      mean: (() => {
        const k = Math.max(1, idleRuns.length);
        const byType: Record<string, number> = {};
        for (const r of idleRuns) sumInto(byType, r.s3ByType);
        return {
          s3ByType: Object.fromEntries(Object.entries(byType).map(([t, v]) => [t, v / k])),
          invocations: idleRuns.reduce((a, r) => a + r.invocations, 0) / k,
          taskSeconds: idleRuns.reduce((a, r) => a + r.taskSeconds, 0) / k,
          cpuSeconds: idleRuns.reduce((a, r) => a + r.cpuSeconds, 0) / k,
          dynamodbRequests: idleRuns.reduce((a, r) => a + r.dynamodbRequests, 0) / k,
          stateTransitions: idleRuns.reduce((a, r) => a + r.stateTransitions, 0) / k,
          readUnits: idleRuns.reduce((a, r) => a + r.readUnits, 0) / k,
        };
      })(),
    },
    bytesAtRest: bytesAtRest(end, lastNow),
    atRestUsdMonth: atRestUsdMonth(bytesAtRest(end, lastNow), runScratch.meanBytes),
    runScratch,
    parts: {
      count: partList.length,
      inGlacierIr: partList.filter(
        (p) => simulatedClass(p.size, (lastNow - (partWritten(p.key) ?? lastNow)) / DAY) === 'GLACIER_IR',
      ).length,
      meanBytes: Math.round(partList.reduce((a, p) => a + p.size, 0) / Math.max(1, partList.length)),
    },
    hotObjectsLeft: hot.length,
    hotObjectsLeftRowless: rowlessLeft,
    hotObjectsLeftNotYetEligible: notYetEligible,
    partSizes: partList.map((p) => p.size).sort((a, b) => a - b),
    lookup,
    decomposition: decomposeSteadyYear(perRun),
    seedSeconds,
    runSeconds,
    wallSeconds: (performance.now() - t0) / 1000,
    perRun,
    monthly,
  };
  return { result, perRun };
};

/**
 * Reads a sample of archived jobs (month known) through the reader on a client that counts every
 * request and body by prefix: the cost model prices index reads in Standard and part reads in the
 * part's class.
 */
const measureLookups = async (
  bucket: string,
  archived: readonly BenchJob[],
  seed: number,
): Promise<LookupCost> => {
  const s3 = s3ClientFrom(config());
  const c = { index: [0, 0], part: [0, 0], other: [0, 0] } as Record<
    'index' | 'part' | 'other',
    [number, number]
  >;
  s3.middlewareStack.add(
    // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
    (next: any) => async (args: any) => {
      const key = String(args.input?.Key ?? args.input?.Prefix ?? '');
      const slot = key.startsWith('job-details-index/')
        ? c.index
        : key.startsWith('job-details-cold/')
          ? c.part
          : c.other;
      slot[0]++;
      const out = await next(args);
      slot[1] += Number(out.output?.ContentLength ?? 0);
      return out;
    },
    { step: 'initialize', name: 'benchLookupCounter' },
  );
  const reader = new JobDetailsReader(s3, bucket);
  const pick = prng(seed + 17);
  const sample = Math.min(20, archived.length);
  for (let i = 0; i < sample; i++) {
    const j = archived[pick.int(0, archived.length - 1)] as BenchJob;
    await reader.readAllDetails({ shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt });
  }
  s3.destroy();
  const per = (x: number) => x / Math.max(1, sample);
  return {
    sample,
    indexRequests: per(c.index[0]),
    indexBytes: per(c.index[1]),
    partRequests: per(c.part[0]),
    partBytes: per(c.part[1]),
    otherRequests: per(c.other[0]),
  };
};

const f2 = (x: number) => x.toFixed(2);
const byType = (o: Record<string, number>, scale = 1) =>
  Object.entries(o)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${scale === 1 ? v : f2(v / scale)}`)
    .join(', ');

export const runLine = (r: SteadyRun): string =>
  `  ${r.day}: planned ${r.jobsPlanned}, archived ${r.jobsArchived} jobs / ${r.hotArchived} hot objects; S3 ${r.s3Requests} (${byType(r.s3ByType)}); RU ${f2(r.readUnits)}; invocations ${r.invocations}; transitions ${r.stateTransitions}; lifecycle ${r.lifecycleTransitions}; rows expired ${r.rowsExpired}; hot left ${r.hotObjectsLeft}${
    r.byKey ? `\n    by key: ${r.byKey.map(([k, v]) => `${k} ${v}`).join(', ')}` : ''
  }`;

const kb = (b: number) => `${(b / 1024).toFixed(1)} KB`;

/** The summary printed after the per-run lines (docs/bench/steady-year.txt). */
/** CPU and wall seconds per step over the year (the runner's per-step figures). */
const stepCpuText = (runs: readonly SteadyRun[]): string => {
  const by: Record<string, { cpu: number; wall: number }> = {};
  for (const r of runs)
    for (const [step, v] of Object.entries(r.steps ?? {})) {
      const t = by[step] ?? { cpu: 0, wall: 0 };
      t.cpu += v?.cpuSeconds ?? 0;
      t.wall += v?.seconds ?? 0;
      by[step] = t;
    }
  return (
    Object.entries(by)
      .map(([step, v]) => `${step} ${f2(v.cpu)} s (wall ${f2(v.wall)} s)`)
      .join(', ') || 'none'
  );
};

export const steadyYearLines = (r: SteadyYearResult): string[] => {
  const t = r.totals;
  const p = r.perArchivedHotObject;
  return [
    `steady-year: ${r.runs} daily runs ${r.sizes.runsFrom} → ${r.sizes.runsTo} (olderThanDays ${r.settings.olderThanDays}, whole months, graceHours ${r.settings.graceHours}, rows deleted at TTL ${r.settings.jobTtlDays} days)`,
    `  workload (scale ${r.sizes.scale}): ${r.jobs} jobs (${byType(r.jobsByStatus)}) from ${r.shops.large} large shops × ${r.sizes.largeJobsPerDay}/day and ${r.shops.tail} tail shops × 1–3/month; ${r.hotObjectsWritten} hot objects, ${kb(r.hotBytesWritten)}`,
    `  total: planned ${t.jobsPlanned} jobs, archived ${t.jobsArchived} jobs / ${t.hotArchived} hot objects; S3 ${t.s3Requests} (${byType(t.s3ByType)}); RU ${f2(t.readUnits)}; invocations ${t.invocations}; state transitions ${t.stateTransitions}; lifecycle transitions ${t.lifecycleTransitions}; rows expired ${t.rowsExpired}`,
    `  per archived hot object: S3 ${f2(p.s3Requests)} (${Object.entries(p.s3ByType)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} ${v.toFixed(3)}`)
      .join(
        ', ',
      )}); RU ${p.readUnits.toFixed(3)}; invocations ${p.invocations.toFixed(4)}; state transitions ${p.stateTransitions.toFixed(4)}; lifecycle transitions ${p.lifecycleTransitions.toFixed(4)}; jobs planned ${f2(p.jobsPlanned)}`,
    `  idle runs (nothing archived or deleted): ${r.idleRuns} of ${r.runs}; at most ${r.idle.maxJobsPlanned} jobs planned, ${r.idle.maxS3Requests} S3 requests, ${r.idle.maxInvocations} invocations`,
    `  Lambda: ${f2(t.cpuSeconds)} s CPU in process while handlers ran (an upper bound: what the local Step Functions interpreter does meanwhile is in it; ${f2(t.processCpuSeconds)} s over the whole runs), ${f2(t.taskSeconds)} s wall time inside handlers (mostly the emulators' latency); ${t.dynamodbRequests} DynamoDB requests; CPU by step: ${stepCpuText(r.perRun)}`,
    ...decompositionLines(r.decomposition),
    `  bytes at rest at the end: ${Object.entries(r.bytesAtRest)
      .map(([k, v]) => `${k} ${kb(v)}`)
      .join(', ')}`,
    ...atRestCostLines(r),
    `  parts: ${r.parts.count} (${r.parts.inGlacierIr} in Glacier IR, mean ${kb(r.parts.meanBytes)}; parts of ${kb(STEADY_YEAR_SETTINGS.transitionMinBytes)} or less stay in Standard)`,
    `  lookup of an archived job, month known (${r.lookup.sample} sampled): index ${f2(r.lookup.indexRequests)} GETs / ${kb(r.lookup.indexBytes)}, part ${f2(r.lookup.partRequests)} GETs / ${kb(r.lookup.partBytes)}, other ${f2(r.lookup.otherRequests)}`,
    `  hot objects left: ${r.hotObjectsLeft} (${r.hotObjectsLeftNotYetEligible} of jobs not yet eligible, ${r.hotObjectsLeftRowless} of jobs whose row expired unarchived)`,
    `  wall: ${r.wallSeconds.toFixed(0)} s (archiver runs ${r.runSeconds.toFixed(0)} s, writing the workload and expiring rows ${r.seedSeconds.toFixed(0)} s, the rest listing and lookups)`,
    '  by month end:',
    ...r.monthly.map(
      (m) =>
        `    ${m.month}: ${Object.entries(m.bytesAtRest)
          .map(([k, v]) => `${k} ${kb(v)}`)
          .join(', ')}; hot objects ${m.hotObjectsLeft}`,
    ),
  ];
};
