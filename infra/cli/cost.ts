import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RESTORE_TIERS, type RestoreTier } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';
import { ACCESS_LOGS_RETENTION_DAYS, ACCESS_LOGS_RETENTION_MAX_DAYS, CHOICES } from '../../shared/settings';
import { ARCHIVER_STEPS } from '../construct/step-names';
import { packageRoot } from '../package-root';
import {
  boolFlag,
  type CommandSpec,
  EXIT_OK,
  type Flags,
  numberFlag,
  stringFlag,
  wholeNumberFlag,
} from './args';
import {
  accessLogDays,
  CHILD_EXECUTION_TRANSITIONS,
  type CostResult,
  costModel,
  type DeploymentBill,
  deploymentBills,
  FULL_VCPU_MB,
  type Measured,
  type PaysRow,
  partsLeftInStandard,
  tierFor,
  transitionThresholdBytes,
  type Workload,
  type WorkTerms,
  wherePays,
} from './cost-model';
import { type Output, printJson, table } from './output';
import {
  DEFAULT_PRICES,
  PRICES_TAKEN,
  type Prices,
  RESTORE_WAIT,
  STORAGE_CLASSES,
  type StorageClass,
} from './prices';
import { MAX_TRANSITION_MINIMUM_BYTES } from './transition-threshold';

/**
 * Measured figures the model starts from when no --from-report is given: a year of daily runs
 * (`npm run bench:archive -- --steady-year --out docs/bench`), re-planning, listing beside recent
 * jobs and idle runs included; the single-run scenarios of docs/bench/archive.json otherwise.
 */
export const DEFAULT_MEASUREMENTS = existsSync(join(packageRoot(), 'docs/bench/steady-year.json'))
  ? join(packageRoot(), 'docs/bench/steady-year.json')
  : join(packageRoot(), 'docs/bench/archive.json');
const DEFAULT_SCENARIO = 'month-1500';

export const costSpec: CommandSpec = {
  name: 'cost',
  short:
    'what keeping job details costs: hot, lifecycled to Glacier, or archived (measured figures, list prices)',
  summary:
    'Cost over the retention horizon of three ways to keep job details — hot in S3 Standard, the small objects ' +
    'lifecycled straight to a Glacier class, and this archiver — from request counts, bytes at rest, Lambda time ' +
    'and state transitions MEASURED by a year of daily runs (`bench:archive --steady-year`), a bench scenario or a run report, ' +
    'and published list prices (infra/cli/prices.ts). Prints one cohort (a month of jobs) over its life and its payback age, ' +
    'the whole bill by month, and where archiving pays: the smallest mean object size per retention and class.',
  without: {
    aws: 'it talks to nothing (it prices measured figures)',
    table: 'it talks to nothing',
    bucket: 'it talks to nothing',
    'data-dir': 'it starts no stack',
  },
  options: {
    'jobs-per-month': { type: 'string', value: 'N', help: 'jobs completed per month (default 100000)' },
    'objects-per-job': { type: 'string', value: 'N', help: 'hot objects per job (default: as measured)' },
    'bytes-per-job': { type: 'string', value: 'N', help: 'hot bytes per job (default: as measured)' },
    'retention-months': { type: 'string', value: 'N', help: 'months a job’s details are kept (default 24)' },
    'storage-class': {
      type: 'string',
      value: 'CLASS',
      help: `${STORAGE_CLASSES.join(' | ')} (default GLACIER_IR)`,
    },
    'lookups-per-month': {
      type: 'string',
      value: 'N',
      help: 'forensic lookups of archived jobs per month (default 100)',
    },
    'restore-tier': {
      type: 'string',
      value: 'TIER',
      help: `${RESTORE_TIERS.join(' | ')}: the tier a lookup restores a GLACIER / DEEP_ARCHIVE part at (default ${CHOICES.restoreTier.default}, the reader's restoreTier; DEEP_ARCHIVE has no Expedited)`,
    },
    'jobs-per-shop-month': {
      type: 'string',
      value: 'N',
      help: 'jobs a shop completes a month (a part holds a shop-month; default: as measured)',
    },
    'lambda-memory-mb': {
      type: 'string',
      value: 'MB',
      help: 'memory of every step (default 512, the construct’s for plan, archive-batch, tally and report)',
    },
    'step-memory-mb': {
      type: 'string',
      value: 'STEP=MB,…',
      help: `memory of single steps over --lambda-memory-mb, e.g. archive-batch=1024 (steps: ${ARCHIVER_STEPS.join(', ')})`,
    },
    'access-log-days': {
      type: 'string',
      value: 'N',
      help: `days the details bucket's access logs are kept in Standard (default ${ACCESS_LOGS_RETENTION_DAYS}: the construct logs nothing unless asked); to price opting in, the construct's accessLogsRetention in days, or your central log bucket's retention with serverAccessLogsBucket (0 when that bucket is billed elsewhere)`,
    },
    'transition-minimum-kb': {
      type: 'string',
      value: 'N',
      help: 'the construct’s transitionMinimumSize in KB (1,024 bytes): parts larger move to the class, the rest stay in Standard (default: the construct’s, where a move pays for itself for the class and retention)',
    },
    'run-metrics': {
      type: 'boolean',
      help: 'the construct’s runMetrics: 8 custom metrics ($2.40) and 2 more alarms ($0.20) a month',
    },
    'from-report': {
      type: 'string',
      value: 'FILE',
      help: 'measured figures: docs/bench/steady-year.json (default), bench:archive output (its last line) or a run report',
    },
    scenario: {
      type: 'string',
      value: 'NAME',
      help: `with bench output: which scenario (default ${DEFAULT_SCENARIO})`,
    },
    prices: { type: 'string', value: 'FILE', help: 'JSON overriding any price of infra/cli/prices.ts' },
  },
  notes: [
    `Prices: ${PRICES_TAKEN}. Hot-path writes are the same for all three and left out.`,
    'Fixed costs (1 alarm on a free metric; with --run-metrics 8 custom metrics and 2 more alarms; the idle part of 30 daily runs) are charged to the cohort archived that month.',
    'The floor: one GET per hot object, the first month in Standard, then the parts at 0.75× the hot bytes in the class — nothing else.',
    'Beside the ratio to the floor (lookups in the cohort, none in the floor): the archival alone, and one lookup against its physical minimum.',
    `Access logs (opt-in: the construct's accessLogsRetention or serverAccessLogsBucket): the details bucket then logs every request, each key deleted and each lifecycle action (two records an archived hot object: its GET and its delete), kept --access-log-days in Standard (default ${ACCESS_LOGS_RETENTION_DAYS}: none, the construct's default; record sizes are estimates: accessLogRecordBytes, accessLogLifecycleRecordBytes in --prices).`,
  ],
};

export interface CostOptions {
  readonly workload: Omit<Workload, 'objectsPerJob' | 'bytesPerJob'> & {
    objectsPerJob?: number;
    bytesPerJob?: number;
  };
  readonly fromReport: string;
  readonly scenario?: string;
  readonly pricesFile?: string;
  readonly json: boolean;
}

/** `archive-batch=1024,plan=256` → memory by step (128 … 10240 MB, steps of ARCHIVER_STEPS). */
export const parseStepMemory = (text: string | undefined): Record<string, number> | undefined => {
  if (text === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const item of text.split(',')) {
    const [step, mb] = item.split('=');
    if (!(ARCHIVER_STEPS as readonly string[]).includes(step ?? ''))
      throw new InvalidInputError(
        '--step-memory-mb',
        `expected STEP=MB with STEP one of ${ARCHIVER_STEPS.join(', ')}, got ${JSON.stringify(item)}`,
      );
    const n = Number(mb);
    if (!Number.isInteger(n) || n < 128 || n > 10240)
      throw new InvalidInputError(
        '--step-memory-mb',
        `expected a whole number of MB 128 … 10240 for ${step}, got ${JSON.stringify(mb)}`,
      );
    out[step as string] = n;
  }
  return out;
};

export const parseCostOptions = (flags: Flags): CostOptions => {
  const cls = stringFlag(flags, 'storage-class') ?? 'GLACIER_IR';
  if (!(STORAGE_CLASSES as readonly string[]).includes(cls)) {
    throw new InvalidInputError(
      '--storage-class',
      `expected one of ${STORAGE_CLASSES.join(', ')}, got ${JSON.stringify(cls)}`,
    );
  }
  const opt = (name: string) =>
    stringFlag(flags, name) !== undefined ? numberFlag(flags, name, 0, { min: 0, max: 1e12 }) : undefined;
  const objectsPerJob = opt('objects-per-job');
  const bytesPerJob = opt('bytes-per-job');
  const jobsPerShopMonth = opt('jobs-per-shop-month');
  const stepMemoryMb = parseStepMemory(stringFlag(flags, 'step-memory-mb'));
  const restoreTier = stringFlag(flags, 'restore-tier');
  if (restoreTier !== undefined && !(RESTORE_TIERS as readonly string[]).includes(restoreTier))
    throw new InvalidInputError(
      '--restore-tier',
      `expected one of ${RESTORE_TIERS.join(', ')}, got ${JSON.stringify(restoreTier)}`,
    );
  const scenario = stringFlag(flags, 'scenario');
  const pricesFile = stringFlag(flags, 'prices');
  return {
    workload: {
      jobsPerMonth: numberFlag(flags, 'jobs-per-month', 100_000, { min: 0, max: 1e12 }),
      ...(objectsPerJob !== undefined ? { objectsPerJob } : {}),
      ...(bytesPerJob !== undefined ? { bytesPerJob } : {}),
      retentionMonths: wholeNumberFlag(flags, 'retention-months', 24, { min: 2, max: 240 }),
      storageClass: cls as StorageClass,
      lookupsPerMonth: numberFlag(flags, 'lookups-per-month', 100, { min: 0, max: 1e12 }),
      lambdaMemoryMb: wholeNumberFlag(flags, 'lambda-memory-mb', 512, { min: 128, max: 10240 }),
      ...(boolFlag(flags, 'run-metrics') ? { runMetrics: true } : {}),
      ...(stringFlag(flags, 'transition-minimum-kb') !== undefined
        ? {
            transitionMinimumBytes:
              1024 *
              wholeNumberFlag(flags, 'transition-minimum-kb', 0, {
                min: 0,
                max: MAX_TRANSITION_MINIMUM_BYTES / 1024,
              }),
          }
        : {}),
      ...(jobsPerShopMonth !== undefined ? { jobsPerShopMonth } : {}),
      ...(stepMemoryMb !== undefined ? { stepMemoryMb } : {}),
      ...(restoreTier !== undefined ? { restoreTier: restoreTier as RestoreTier } : {}),
      ...(stringFlag(flags, 'access-log-days') !== undefined
        ? {
            accessLogDays: wholeNumberFlag(flags, 'access-log-days', ACCESS_LOGS_RETENTION_DAYS, {
              min: 0,
              max: ACCESS_LOGS_RETENTION_MAX_DAYS,
            }),
          }
        : {}),
    },
    fromReport: stringFlag(flags, 'from-report') ?? DEFAULT_MEASUREMENTS,
    ...(scenario !== undefined ? { scenario } : {}),
    ...(pricesFile !== undefined ? { pricesFile } : {}),
    json: boolFlag(flags, 'json'),
  };
};

type Obj = Record<string, unknown>;
const num = (o: Obj, k: string): number => (typeof o[k] === 'number' ? (o[k] as number) : 0);

const readJson = (file: string, field: string): unknown => {
  if (!existsSync(file)) throw new InvalidInputError(field, `${file} does not exist`);
  const text = readFileSync(file, 'utf8').trim();
  // bench:archive output: the last line is the JSON object; a report file is one JSON document.
  for (const candidate of [text, text.split('\n').at(-1) ?? '']) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next reading
    }
  }
  throw new InvalidInputError(field, `${file} is neither a JSON document nor ends with a JSON line`);
};

/** An active run's request key classes (request-trace.ts) → what they scale with. */
export const keyScaling = (keyClass: string): 'hot' | 'page' | 'batch' | 'run' | 'part' => {
  if (keyClass === 'hot') return 'hot';
  if (/^run (plan\/|pages|results)/.test(keyClass)) return 'page';
  if (keyClass === 'run attempts') return 'batch';
  if (keyClass === 'state' || keyClass.startsWith('run ')) return 'run';
  return 'part';
};

/** Transitions and invocations a plan page and a batch add (the definition: archiver-state-machine.ts). */
const PAGE_WORK = { invocations: 2, stateTransitions: 5 }; // Plan, Tally; Plan, HasBatches, ProcessBatches, Tally, MorePages
const BATCH_WORK = { invocations: 1, stateTransitions: 1 }; // ArchiveBatch in its child execution
// The local runner counts the states entered (the child's ArchiveBatch); AWS also bills the child
// execution's start, one transition a child (CHILD_EXECUTION_TRANSITIONS).

/**
 * steady-year's active runs split by what their work scales with (Measured.terms); undefined when
 * the file has no per-run request keys.
 */
const termsOf = (sy: Obj, jobs: number, objects: number, parts: number): WorkTerms | undefined => {
  const active = ((sy.perRun ?? []) as Obj[]).filter((r) => Array.isArray(r.byKey));
  if (active.length === 0) return undefined;
  const by = { hot: {}, page: {}, batch: {}, run: {}, part: {} } as Record<
    ReturnType<typeof keyScaling>,
    Record<string, number>
  >;
  let batches = 0;
  let pages = 0;
  for (const r of active) {
    let runPages = 0;
    let markers = 0;
    for (const [key, n] of r.byKey as [string, number][]) {
      const space = key.indexOf(' ');
      const call = key.slice(0, space);
      const cls = key.slice(space + 1);
      const into = by[keyScaling(cls)];
      into[call] = (into[call] ?? 0) + n;
      if (key === 'PutObject run attempts') markers += n;
      if (key === 'PutObject run pages') runPages += n;
    }
    pages += Math.max(1, runPages);
    // The run's ArchiveBatch invocations; without per-step figures, its attempt markers (one an attempt
    // that stages a part: a batch that stages nothing writes none).
    const batchStep = ((r.steps ?? {}) as Record<string, Obj>)['archive-batch'];
    batches += batchStep ? num(batchStep, 'invocations') : markers;
  }
  const sum = (k: string) => active.reduce((a, r) => a + num(r, k), 0);
  const per = (o: Record<string, number>, d: number) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v / Math.max(1, d)]));
  const runs = active.length;
  const months = new Set(active.map((r) => String(r.day).slice(0, 7))).size;
  const groups = sum('groupsOk');
  const idle = (((sy.idle ?? {}) as Obj).mean ?? {}) as Obj;
  const invocations = sum('invocations') - pages * PAGE_WORK.invocations - batches * BATCH_WORK.invocations;
  const transitions =
    sum('stateTransitions') - pages * PAGE_WORK.stateTransitions - batches * BATCH_WORK.stateTransitions;
  const measuredCpu = active.every((r) => typeof r.cpuSeconds === 'number');
  const stepCpu: Record<string, number> = {};
  for (const r of active)
    for (const [step, v] of Object.entries((r.steps ?? {}) as Record<string, Obj>))
      stepCpu[step] = (stepCpu[step] ?? 0) + num(v, 'cpuSeconds');
  const stepCpuTotal = Object.values(stepCpu).reduce((a, b) => a + b, 0);
  const measuredDdb = active.every((r) => typeof r.dynamodbRequests === 'number');
  return {
    perHotObject: per(by.hot, objects),
    perPart: per(by.part, parts),
    perRun: { s3: per(by.run, runs), invocations: invocations / runs, stateTransitions: transitions / runs },
    perPage: { s3: per(by.page, pages), ...PAGE_WORK },
    perBatch: {
      s3: per(by.batch, Math.max(1, batches)),
      invocations: BATCH_WORK.invocations,
      stateTransitions: BATCH_WORK.stateTransitions + CHILD_EXECUTION_TRANSITIONS,
    },
    activeRunsPerMonth: runs / Math.max(1, months),
    // Every shop-month is completed by both of its runs (archive, delete): groups / runs a month.
    jobsPerShopMonth: jobs / Math.max(1, groups / Math.max(1, runs / Math.max(1, months))),
    readUnitsPerJob: Math.max(0, sum('readUnits') - runs * num(idle, 'readUnits')) / jobs,
    ...(measuredDdb
      ? {
          dynamodbRequestsPerJob:
            Math.max(0, sum('dynamodbRequests') - runs * num(idle, 'dynamodbRequests')) / jobs,
        }
      : {}),
    ...(measuredCpu
      ? { cpuSecondsPerHotObject: Math.max(0, sum('cpuSeconds') - runs * num(idle, 'cpuSeconds')) / objects }
      : {}),
    ...(stepCpuTotal > 0
      ? {
          cpuShareByStep: Object.fromEntries(
            Object.entries(stepCpu).map(([step, v]) => [step, v / stepCpuTotal]),
          ),
        }
      : {}),
  };
};

/** steady-year's figures: per archived object, with the idle runs' cost taken out and kept per run. */
const fromSteadyYear = (sy: Obj, file: string): Measured => {
  const t = (sy.totals ?? {}) as Obj;
  const jobs = Math.max(1, num(t, 'jobsArchived'));
  const objects = Math.max(1, num(t, 'hotArchived'));
  const runs = num(sy, 'runs');
  const idle = (((sy.idle ?? {}) as Obj).mean ?? {}) as Obj;
  const idleByType = (idle.s3ByType ?? {}) as Record<string, number>;
  const byType = (t.s3ByType ?? {}) as Record<string, number>;
  const net = (total: number, perRun: number, per: number) => Math.max(0, total - runs * perRun) / per;
  const atRest = (sy.bytesAtRest ?? {}) as Record<string, number>;
  const partBytes = (atRest['STANDARD parts'] ?? 0) + (atRest['GLACIER_IR parts'] ?? 0);
  const indexBytes = atRest['STANDARD index'] ?? 0;
  const parts = (sy.parts ?? {}) as Obj;
  const lookup = (sy.lookup ?? {}) as Obj;
  const written = Math.max(1, num(sy, 'jobs'));
  const terms = termsOf(sy, jobs, objects, Math.max(1, num(parts, 'count')));
  return {
    source: `${relative(process.cwd(), file) || file}, steady-year: ${runs} daily runs, ${num(t, 'jobsArchived')} jobs / ${num(t, 'hotArchived')} hot objects archived (idle runs charged per day)`,
    objectsPerJob: num(sy, 'hotObjectsWritten') / written,
    bytesPerJob: num(sy, 'hotBytesWritten') / written,
    s3RequestsPerObject: Object.fromEntries(
      Object.entries(byType).map(([k, v]) => [k, net(v, idleByType[k] ?? 0, objects)]),
    ),
    taskInvocationsPerJob: net(num(t, 'invocations'), num(idle, 'invocations'), jobs),
    taskSecondsPerJob: net(num(t, 'taskSeconds'), num(idle, 'taskSeconds'), jobs),
    stateTransitionsPerJob: net(num(t, 'stateTransitions'), num(idle, 'stateTransitions'), jobs),
    dynamodbReadUnitsPerJob: net(num(t, 'readUnits'), num(idle, 'readUnits'), jobs),
    bytesAtRestRatio: (partBytes + indexBytes) / Math.max(1, num(t, 'bytesIn')),
    ...(typeof sy.runScratch === 'object' && sy.runScratch !== null
      ? {
          runScratch: {
            bytesPerObject: num(sy.runScratch as Obj, 'bytesPerArchivedObject'),
            expireDays: num(sy.runScratch as Obj, 'expireDays'),
          },
        }
      : {}),
    indexShare: indexBytes / Math.max(1, partBytes + indexBytes),
    partsPerJob: num(parts, 'count') / jobs,
    averagePartBytes: num(parts, 'meanBytes'),
    ...(Array.isArray(sy.partSizes) ? { partSizes: sy.partSizes as number[] } : {}),
    lookup: {
      indexRequests: num(lookup, 'indexRequests'),
      indexBytes: num(lookup, 'indexBytes'),
      partRequests: num(lookup, 'partRequests'),
      partBytes: num(lookup, 'partBytes'),
      ...(typeof lookup.otherRequests === 'number' ? { otherRequests: lookup.otherRequests } : {}),
    },
    idleRun: {
      s3RequestsByType: idleByType,
      invocations: num(idle, 'invocations'),
      stateTransitions: num(idle, 'stateTransitions'),
      readUnits: num(idle, 'readUnits'),
      taskSeconds: num(idle, 'taskSeconds'),
      ...(typeof idle.cpuSeconds === 'number' ? { cpuSeconds: idle.cpuSeconds } : {}),
      ...(typeof idle.dynamodbRequests === 'number' ? { dynamodbRequests: idle.dynamodbRequests } : {}),
    },
    indexBytesPerJob: indexBytes / jobs,
    ...(terms ? { terms } : {}),
  };
};

/** The per-job figures of steady-year, a bench scenario or a run report. */
export const measuredFrom = (file: string, scenarioName?: string): Measured => {
  const doc = readJson(file, '--from-report');
  if (typeof doc !== 'object' || doc === null)
    throw new InvalidInputError('--from-report', 'expected a JSON object');
  const d = doc as Obj;
  const sy = d.name === 'steady-year' ? d : (d.steadyYear as Obj | undefined);
  if (sy && typeof sy === 'object' && typeof sy.totals === 'object' && scenarioName === undefined)
    return fromSteadyYear(sy, file);
  if (Array.isArray(d.scenarios)) {
    const all = d.scenarios as Obj[];
    const want =
      scenarioName ??
      (all.some((s) => s.name === DEFAULT_SCENARIO) ? DEFAULT_SCENARIO : String(all[0]?.name));
    const s = all.find((x) => x.name === want);
    if (!s) {
      throw new InvalidInputError(
        '--scenario',
        `${JSON.stringify(want)} is not in ${file} (${all.map((x) => x.name).join(', ')})`,
      );
    }
    const jobs = Math.max(1, num(s, 'jobs'));
    const objects = Math.max(1, num(s, 'hotObjects'));
    const byType = (s.s3RequestsByType ?? {}) as Record<string, number>;
    return {
      source: `${relative(process.cwd(), file) || file}, scenario ${want} (${jobs} jobs, ${objects} hot objects)`,
      objectsPerJob: objects / jobs,
      bytesPerJob: num(s, 'hotBytes') / jobs,
      s3RequestsPerObject: Object.fromEntries(Object.entries(byType).map(([k, n]) => [k, n / objects])),
      taskInvocationsPerJob: num(s, 'taskInvocations') / jobs,
      taskSecondsPerJob: num(s, 'taskSeconds') / jobs,
      stateTransitionsPerJob: num(s, 'stateTransitions') / jobs,
      dynamodbReadUnitsPerJob: num(s, 'dynamodbReadUnits') / jobs,
      bytesAtRestRatio: num(s, 'archiveBytes') / Math.max(1, num(s, 'hotBytes')),
      indexShare: num(s, 'indexBytes') / Math.max(1, num(s, 'archiveBytes')),
      indexBytesPerJob: num(s, 'indexBytes') / jobs,
      partsPerJob: num(s, 'parts') / jobs,
      averagePartBytes: num(s, 'wholePartBytes'),
      // A scenario measured a lookup's requests and bytes in all: one GET is the part's block, the
      // rest the index; its bytes are counted as the part's (the dearer reading in Glacier IR).
      lookup: {
        indexRequests: Math.max(0, num(s, 'lookupRequests') - 1),
        indexBytes: 0,
        partRequests: Math.min(1, num(s, 'lookupRequests')),
        partBytes: num(s, 'lookupBytes'),
      },
    };
  }
  if (typeof d.jobsArchived === 'number' && typeof d.requests === 'object') {
    // A run report: S3 figures only. Lambda time, transitions, index bytes and lookups are not in it
    // and are counted as 0 (said in `source`), never guessed.
    const jobs = Math.max(1, num(d, 'jobsArchived'));
    const objects = Math.max(1, num(d, 'objectsDeleted') + num(d, 'objectsKept'));
    const byType = ((d.requests as Obj).byType ?? {}) as Record<string, number>;
    return {
      source: `${relative(process.cwd(), file) || file}, run report (${jobs} jobs; no Lambda, transition, index or lookup figures in a report: counted as 0 — use bench:archive output for them)`,
      objectsPerJob: objects / jobs,
      bytesPerJob: num(d, 'bytesIn') / jobs,
      s3RequestsPerObject: Object.fromEntries(
        Object.entries(byType)
          .filter(([k]) => k.startsWith('s3.'))
          .map(([k, n]) => [k.slice(3), n / objects]),
      ),
      taskInvocationsPerJob: 0,
      taskSecondsPerJob: 0,
      stateTransitionsPerJob: 0,
      dynamodbReadUnitsPerJob: 0,
      bytesAtRestRatio: num(d, 'bytesOut') / Math.max(1, num(d, 'bytesIn')),
      indexShare: 0,
      partsPerJob: num(d, 'partsWritten') / jobs,
      averagePartBytes: num(d, 'bytesOut') / Math.max(1, num(d, 'partsWritten')),
      lookup: { indexRequests: 0, indexBytes: 0, partRequests: 0, partBytes: 0 },
    };
  }
  throw new InvalidInputError('--from-report', `${file} is neither bench:archive output nor a run report`);
};

const loadPrices = (file: string | undefined): Prices => {
  if (file === undefined) return DEFAULT_PRICES;
  const o = readJson(file, '--prices');
  if (typeof o !== 'object' || o === null || Array.isArray(o))
    throw new InvalidInputError('--prices', 'expected a JSON object');
  const unknown = Object.keys(o).filter((k) => !(k in DEFAULT_PRICES));
  if (unknown.length > 0)
    throw new InvalidInputError('--prices', `unknown price ${JSON.stringify(unknown[0])}`);
  return { ...DEFAULT_PRICES, ...(o as Partial<Prices>) };
};

const usd = (x: number): string =>
  x >= 100 ? `$${Math.round(x).toLocaleString('en-US')}` : x >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(4)}`;

/** The ages shown: the first year's milestones, then every half year to the horizon. */
const shownAges = (r: CostResult) => {
  const last = r.cohort.length;
  const marks = new Set([1, 2, 3, 6, 12, last]);
  for (let m = 18; m <= last; m += 6) marks.add(m);
  return [...marks].filter((m) => m <= last).sort((a, b) => a - b);
};

export const sizeText = (b: number | null): string =>
  b === null
    ? 'never'
    : b >= 1024 * 1024
      ? `${(b / 1024 / 1024).toFixed(1)} MB`
      : b >= 1024
        ? `${(b / 1024).toFixed(b >= 10 * 1024 ? 0 : 1)} KB`
        : `${Math.round(b)} B`;

const CLASS_NAMES: Record<StorageClass, string> = {
  GLACIER_IR: 'Glacier IR',
  GLACIER: 'Flexible Retrieval',
  DEEP_ARCHIVE: 'Deep Archive',
};

/** "Where archiving pays": the smallest mean hot-object size per retention and class (markdown). */
export const paysTable = (rows: readonly PaysRow[]): string[] => [
  `| kept | ${STORAGE_CLASSES.map((c) => CLASS_NAMES[c]).join(' | ')} |`,
  `|---|${STORAGE_CLASSES.map(() => '---').join('|')}|`,
  ...rows.map(
    (r) =>
      `| ${r.retentionMonths} months | ${STORAGE_CLASSES.map((c) => sizeText(r.smallestObjectBytes[c])).join(' | ')} |`,
  ),
];

/**
 * Why a workload cannot pay at the floor: one Standard GET costs as much as this many months of
 * Standard storage of the workload's mean object (700 bytes: ~25 months), and archiving saves at
 * most the cohort's remaining months of it.
 */
export const getPhysics = (w: Workload, p: Prices): string => {
  const objectBytes = w.objectsPerJob > 0 ? w.bytesPerJob / w.objectsPerJob : 0;
  const monthly = (objectBytes / 1024 ** 3) * p.standardGbMonth;
  const months = monthly > 0 ? p.getRequest / monthly : Number.POSITIVE_INFINITY;
  return `one GET ($${(p.getRequest * 1000).toFixed(4)} per 1,000) costs as much as ${months.toFixed(0)} months of Standard storage of a ${sizeText(objectBytes)} object, and archiving saves at most ${w.retentionMonths - 1} months of it, less what the parts cost in the class`;
};

const fixedTotal = (r: CostResult): number => Object.values(r.fixedPerMonth).reduce((a, b) => a + b, 0);
const oneTimeWithoutFixed = (r: CostResult): number =>
  Object.entries(r.archiveOneTime).reduce((a, [k, v]) => (k === 'fixed' ? a : a + v), 0);

export const costLines = (
  r: CostResult,
  m: Measured,
  pays: readonly PaysRow[] = [],
  bills: readonly DeploymentBill[] = [],
  prices: Prices = DEFAULT_PRICES,
): string[] => {
  const w = r.workload;
  const objectBytes = w.objectsPerJob > 0 ? w.bytesPerJob / w.objectsPerJob : 0;
  const lines = [
    `workload: ${w.jobsPerMonth.toLocaleString('en-US')} jobs/month × ${w.objectsPerJob.toFixed(2)} objects × ${Math.round(w.bytesPerJob).toLocaleString('en-US')} bytes (${sizeText(objectBytes)} per object); kept ${w.retentionMonths} months; ${w.storageClass}; ${w.lookupsPerMonth} lookups/month; ${accessLogDays(w) > 0 ? `access logs kept ${accessLogDays(w)} days` : 'no access logs'}`,
    `measured: ${m.source}`,
    `  per archived hot object: ${Object.entries(m.s3RequestsPerObject)
      .map(([k, n]) => `${k} ${n.toFixed(3)}`)
      .join(', ')}`,
    `  per job: ${m.taskInvocationsPerJob.toFixed(4)} Lambda invocations, ${m.stateTransitionsPerJob.toFixed(3)} state transitions, ${m.dynamodbReadUnitsPerJob.toFixed(2)} read units; bytes at rest ${m.bytesAtRestRatio.toFixed(2)}× the hot bytes (${(m.indexShare * 100).toFixed(0)} % index), parts of ${Math.round(m.averagePartBytes / 1024)} KB on average`,
    ...(m.idleRun
      ? [
          `  per idle run: ${Object.entries(m.idleRun.s3RequestsByType)
            .map(([k, n]) => `${k} ${n.toFixed(1)}`)
            .join(
              ', ',
            )}; ${m.idleRun.invocations.toFixed(1)} invocations, ${m.idleRun.stateTransitions.toFixed(1)} state transitions, ${m.idleRun.readUnits.toFixed(1)} read units`,
        ]
      : []),
    ...scaledLines(r, m),
    `  lookup (month known): ${m.lookup.otherRequests === undefined ? '' : `hot check ${m.lookup.otherRequests.toFixed(2)} LISTs, `}index ${m.lookup.indexRequests.toFixed(2)} GETs in Standard, part ${m.lookup.partRequests.toFixed(2)} GETs / ${sizeText(m.lookup.partBytes)} in the part's class`,
    `prices: ${PRICES_TAKEN}`,
    `parts: ${(r.partsMoving.countShare * 100).toFixed(0)} % of them (${(r.partsMoving.byteShare * 100).toFixed(0)} % of part bytes) are larger than ${thresholdText(w)} and move to ${w.storageClass}${r.partsMoving.countShare >= 1 ? ' (decided per part, as S3 does): all of them' : `; the rest stay in Standard (decided per part, as S3 does)${smallPartsText(r, m, prices)}`}`,
    `fixed per month: ${usd(fixedTotal(r))} (${Object.entries(r.fixedPerMonth)
      .map(([k, v]) => `${k} ${usd(v)}`)
      .join(', ')})`,
    `one-time archival of a month: ${Object.entries(r.archiveOneTime)
      .map(([k, v]) => `${k} ${usd(v)}`)
      .join(
        ', ',
      )}; without fixed ${usd(oneTimeWithoutFixed(r))} vs the floor's GETs ${usd(r.floor.gets)} (${(oneTimeWithoutFixed(r) / Math.max(1e-12, r.floor.gets)).toFixed(2)}×)`,
    '',
    'One cohort (a month of jobs) by age (floor: one GET per hot object, the first month hot, the parts at 0.75× the hot bytes in the class):',
    ...table([
      [
        'age',
        'hot $',
        'lifecycle $',
        'archive $',
        'floor $',
        'hot cum.',
        'lifecycle cum.',
        'archive cum.',
        'floor cum.',
      ],
      ...(() => {
        const acc = { hot: 0, lifecycle: 0, archive: 0, floor: 0 };
        const cum = r.cohort.map((c, i) => {
          acc.hot += c.hot;
          acc.lifecycle += c.lifecycle;
          acc.archive += c.archive;
          acc.floor += r.floor.cohort[i] ?? 0;
          return { ...acc };
        });
        return shownAges(r).map((i) => {
          const c = r.cohort[i - 1];
          const k = cum[i - 1];
          return [
            i,
            usd(c?.hot ?? 0),
            usd(c?.lifecycle ?? 0),
            usd(c?.archive ?? 0),
            usd(r.floor.cohort[i - 1] ?? 0),
            usd(k?.hot ?? 0),
            usd(k?.lifecycle ?? 0),
            usd(k?.archive ?? 0),
            usd(k?.floor ?? 0),
          ];
        });
      })(),
    ]),
    '',
    `one cohort over its ${w.retentionMonths} months: archive ${usd(r.cohortTotal.archive)} (${usd(r.archiveWithoutFixed)} without the month's fixed costs) vs floor ${usd(r.floor.total)}: ${r.ratioToFloor.toFixed(2)}× the floor without fixed costs, ${(r.cohortTotal.archive / Math.max(1e-12, r.floor.total)).toFixed(2)}× with them; hot ${usd(r.cohortTotal.hot)}${r.floor.total > r.cohortTotal.hot ? ` — even the floor costs more than keeping the objects hot: ${getPhysics(w, prices)}` : ''}`,
    ...lookupLines(r, prices),
    '',
  ];
  const t = r.cohortTotal;
  const steady = r.months[w.retentionMonths - 1];
  lines.push(
    r.breakEvenVsHot === null
      ? `archival does NOT pay against keeping the objects hot: one cohort costs ${usd(t.archive)} archived vs ${usd(t.hot)} hot over its ${w.retentionMonths} months${r.floor.total > t.hot ? ` (no archiver can: ${getPhysics(w, prices)})` : ''}`
      : `archival pays against keeping the objects hot: one cohort from age ${r.breakEvenVsHot} (${usd(t.archive)} vs ${usd(t.hot)} over its ${w.retentionMonths} months)`,
  );
  lines.push(
    r.breakEvenVsLifecycle === null
      ? `archival does NOT pay against lifecycling the objects to ${w.storageClass} (${usd(t.archive)} vs ${usd(t.lifecycle)} a cohort)`
      : `archival pays against lifecycling the objects to ${w.storageClass}: one cohort from age ${r.breakEvenVsLifecycle} (${usd(t.archive)} vs ${usd(t.lifecycle)})`,
  );
  if (steady)
    lines.push(
      `the bill once every cohort is kept (month ${w.retentionMonths} on): hot ${usd(steady.hot)}, lifecycle ${usd(steady.lifecycle)}, archive ${usd(steady.archive)} a month`,
    );
  if (bills.length > 0) {
    lines.push(
      '',
      `The whole deployment's monthly bill once every cohort is kept (this workload's objects and bytes per job, ${w.retentionMonths} months, ${w.storageClass}; fixed costs included in archive):`,
      ...table([
        ['jobs/month', 'hot $', 'archive $', 'of it fixed $', 'floor $', 'archive/floor'],
        ...bills.map((b) => [
          b.jobsPerMonth.toLocaleString('en-US'),
          usd(b.hot),
          usd(b.archive),
          usd(b.fixed),
          usd(b.floor),
          `${(b.archive / Math.max(1e-12, b.floor)).toFixed(2)}×`,
        ]),
      ]),
    );
  }
  if (pays.length > 0) {
    lines.push(
      '',
      `Where archiving pays: the smallest mean hot-object size at which one cohort costs no more archived than hot (this workload's jobs, objects per job, requests and lookups; parts scale with the objects${STORAGE_CLASSES.some((c) => tierFor(w, c, prices) !== w.restoreTier) ? `; ${STORAGE_CLASSES.filter((c) => tierFor(w, c, prices) !== w.restoreTier).join(', ')} restored at ${CHOICES.restoreTier.default}, having no ${w.restoreTier}` : ''}):`,
      ...paysTable(pays),
    );
  }
  return lines;
};

/** The threshold the model used: the workload's --transition-minimum-kb, else the construct's default. */
const thresholdText = (w: Workload): string => {
  const bytes = transitionThresholdBytes(w);
  const size = `${(bytes / 1024).toFixed(1)} KB (${bytes.toLocaleString('en-US')} bytes`;
  return w.transitionMinimumBytes === undefined
    ? `${size}: the construct's default transitionMinimumSize, where a move pays for itself in ${w.storageClass} kept ${w.retentionMonths} months)`
    : `${size}: --transition-minimum-kb)`;
};

/** What the parts the lifecycle rule leaves in Standard cost there, and what they would cost moved. */
const smallPartsText = (r: CostResult, m: Measured, prices: Prices): string => {
  const w = r.workload;
  const left = partsLeftInStandard(w, m, prices);
  if (left.count <= 0) return '';
  const saved = smallPartsSaving(w, left);
  return `: ${left.count.toFixed(1)} parts, ${sizeText(left.gb * 1024 ** 3)}, at ${usdSmall(left.perMonth)} a month; moved too (a transitionMinimumSize of 0) ${usdSmall(left.movedPerMonth)} a month in ${w.storageClass} and ${usdSmall(left.movedTransitions)} once in transitions: over the cohort's ${w.retentionMonths - 1} months as parts, moving them ${saved >= 0 ? `saves ${usdSmall(saved)}` : `costs ${usdSmall(-saved)} more`} (--transition-minimum-kb 0 prices it)`;
};

/**
 * What moving the parts left in Standard too saves over a cohort's life, negative when it costs
 * more: their months as parts (all but the hot first) in Standard against in the class, less the
 * transitions.
 */
export const smallPartsSaving = (
  w: Workload,
  left: { perMonth: number; movedPerMonth: number; movedTransitions: number },
): number => (left.perMonth - left.movedPerMonth) * (w.retentionMonths - 1) - left.movedTransitions;

/** A small $ figure with 3 significant digits (a lookup costs fractions of a cent). */
const usdSmall = (x: number): string => (x >= 0.01 ? usd(x) : `$${x.toPrecision(3)}`);

/** Where the gap to the floor is: the archival alone, and the lookups against their own minimum. */
const lookupLines = (r: CostResult, prices: Prices): string[] => {
  const w = r.workload;
  const l = r.lookups;
  const tier = w.restoreTier ?? CHOICES.restoreTier.default;
  const wait = RESTORE_WAIT[w.storageClass]?.[tier];
  return [
    `  the archival alone (the cohort's ${l.count.toFixed(1)} lookups left out; the floor has none): ${usd(r.archivalWithoutFixed)} vs floor ${usd(r.floor.total)}: ${r.ratioArchivalToFloor.toFixed(2)}× the floor`,
    `  its lookups: ${l.count.toFixed(1)} at ${usdSmall(l.perLookup)} each = ${usd(l.archive)}, against their physical minimum ${usdSmall(l.floorPerLookup)} each = ${usd(l.floor)} (${l.ratioToFloor.toFixed(2)}×; minimum: ${
      wait === undefined
        ? `one GET of the job's bytes in ${w.storageClass}`
        : `one ${tier} restore request and the retrieval of one object holding only the job, then its GET`
    })`,
    ...(wait === undefined
      ? []
      : [
          `  a lookup restores the whole part at the ${tier} tier (--restore-tier; $${((prices.restore[w.storageClass]?.[tier]?.request ?? 0) * 1000).toFixed(3)} per 1,000 restores, $${(prices.restore[w.storageClass]?.[tier]?.gb ?? 0).toFixed(4)} per GB): the person waits ${wait}`,
        ]),
  ];
};

const callsText = (calls: Readonly<Record<string, number>>, digits: number) =>
  Object.entries(calls)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n.toFixed(digits)}`)
    .join(', ') || 'none';

/** The one-time work by what it scales with, and Lambda's billed seconds (CPU, waiting). */
const scaledLines = (r: CostResult, m: Measured): string[] => {
  const t = m.terms;
  const s = r.scaled;
  if (!t || !s) return [];
  const d = s.dollars;
  const l = s.lambdaSeconds;
  return [
    '  one-time work by what it scales with (the idle run an active run replaces taken out):',
    `    per archived hot object: ${callsText(t.perHotObject, 4)} → ${usd(d.perHotObject)}`,
    `    per part written (${Math.round(s.parts)} parts): ${callsText(t.perPart, 2)} → ${usd(d.perPart)}`,
    `    per active run (${t.activeRunsPerMonth.toFixed(1)} a month; this workload: ${s.shape.pages} plan page(s), ${s.shape.batches} batch(es) each at ${(r.workload.jobsPerShopMonth ?? t.jobsPerShopMonth).toFixed(1)} jobs a shop-month${r.workload.jobsPerShopMonth === undefined ? ', as measured: --jobs-per-shop-month sets yours' : ''}): run ${callsText(t.perRun.s3, 1)}, ${t.perRun.invocations.toFixed(1)} invocations, ${t.perRun.stateTransitions.toFixed(1)} transitions; a page ${callsText(t.perPage.s3, 1)}, ${t.perPage.invocations} invocations, ${t.perPage.stateTransitions} transitions; a batch ${callsText(t.perBatch.s3, 1)}, ${t.perBatch.invocations} invocation, ${t.perBatch.stateTransitions} transition → ${usd(d.perActiveRun)}`,
    `    per job: ${t.readUnitsPerJob.toFixed(3)} DynamoDB read units${t.dynamodbRequestsPerJob === undefined ? '' : `, ${t.dynamodbRequestsPerJob.toFixed(4)} requests`} → ${usd(d.perJobReads)}`,
    l.wallTime
      ? `    Lambda: ${l.cpu.toFixed(0)} s of local wall time (CPU not measured in these figures: the emulators' latency on this machine is billed, an upper bound) → ${usd(d.lambdaCpu)}`
      : `    Lambda: ${l.cpu.toFixed(0)} s CPU (${((t.cpuSecondsPerHotObject ?? 0) * 1000).toFixed(3)} ms per hot object, measured in process while the steps' handlers ran, the local Step Functions interpreter's work meanwhile included: an upper bound) at ${Math.round(s.lambdaMemoryMb.cpu)} MB (its steps' mix; under ${FULL_VCPU_MB} MB a function has that share of a vCPU, so the work takes ${FULL_VCPU_MB}/memory as long) → ${usd(d.lambdaCpu)}; ${l.waiting.toFixed(0)} s more waiting on requests (S3 ${s.latency.s3Ms} ms each, the hot GETs ${s.latency.readConcurrency} at a time overlapping the CPU, the rest one by one; DynamoDB ${s.latency.dynamodbMs} ms each) at ${s.lambdaMemoryMb.waiting} MB (ArchiveBatch's) → ${usd(d.lambdaWaiting)}; local wall time for reference ${(m.taskSecondsPerJob * r.workload.jobsPerMonth).toFixed(0)} s`,
  ];
};

/** Up to 4 significant digits, without trailing zeros (a flag value). */
const flagNumber = (n: number): string => String(Number(n.toPrecision(4)));

/**
 * The command that prices this same workload with every figure spelled out (measured ones included):
 * printed above the tables, so a table is never read without the workload behind it.
 */
const costCommandLine = (opts: CostOptions, w: Workload): string => {
  const file = relative(process.cwd(), opts.fromReport) || opts.fromReport;
  return [
    'jobarchive cost',
    `--jobs-per-month ${flagNumber(w.jobsPerMonth)}`,
    `--objects-per-job ${flagNumber(w.objectsPerJob)}`,
    `--bytes-per-job ${flagNumber(w.bytesPerJob)}`,
    `--retention-months ${w.retentionMonths}`,
    `--storage-class ${w.storageClass}`,
    `--lookups-per-month ${flagNumber(w.lookupsPerMonth)}`,
    `--access-log-days ${accessLogDays(w)}`,
    ...(w.transitionMinimumBytes !== undefined
      ? [`--transition-minimum-kb ${flagNumber(w.transitionMinimumBytes / 1024)}`]
      : []),
    ...(w.restoreTier !== undefined || RESTORE_WAIT[w.storageClass] !== undefined
      ? [`--restore-tier ${w.restoreTier ?? CHOICES.restoreTier.default}`]
      : []),
    ...(w.lambdaMemoryMb !== 1024 ? [`--lambda-memory-mb ${w.lambdaMemoryMb}`] : []),
    ...(w.jobsPerShopMonth !== undefined ? [`--jobs-per-shop-month ${flagNumber(w.jobsPerShopMonth)}`] : []),
    ...(w.stepMemoryMb !== undefined
      ? [
          `--step-memory-mb ${Object.entries(w.stepMemoryMb)
            .map(([k, v]) => `${k}=${v}`)
            .join(',')}`,
        ]
      : []),
    `--from-report ${file}`,
    ...(opts.scenario !== undefined ? [`--scenario ${opts.scenario}`] : []),
    ...(opts.pricesFile !== undefined ? [`--prices ${opts.pricesFile}`] : []),
  ].join(' ');
};

export const costCommand = async (opts: CostOptions, io: Output): Promise<CostResult> => {
  const m = measuredFrom(opts.fromReport, opts.scenario);
  const prices = loadPrices(opts.pricesFile);
  const w: Workload = {
    ...opts.workload,
    objectsPerJob: opts.workload.objectsPerJob ?? m.objectsPerJob,
    bytesPerJob: opts.workload.bytesPerJob ?? m.bytesPerJob,
  };
  const r = costModel(w, m, prices);
  const pays = wherePays(w, m, prices);
  const bills = deploymentBills(w, m, prices);
  if (opts.json)
    printJson(io, {
      ...r,
      // The days the access logs were priced at, given or the construct's default.
      workload: { ...r.workload, accessLogDays: accessLogDays(w) },
      // $ a month whatever is archived; by component beside it.
      fixedPerMonth: fixedTotal(r),
      fixedPerMonthByComponent: r.fixedPerMonth,
      deploymentMonthly: bills,
      partsLeftInStandard: partsLeftInStandard(w, m, prices),
      wherePays: pays,
      measured: m,
      prices,
      pricesTaken: PRICES_TAKEN,
    });
  else {
    const measured = [
      opts.workload.objectsPerJob === undefined ? 'objects' : '',
      opts.workload.bytesPerJob === undefined ? 'bytes' : '',
    ].filter(Boolean);
    io.out(
      `every figure below is for: ${costCommandLine(opts, w)}${measured.length > 0 ? ` (${measured.join(' and ')} per job as measured: give yours)` : ''}`,
    );
    for (const l of costLines(r, m, pays, bills, prices)) io.out(l);
  }
  return r;
};

export const runCost = async (opts: CostOptions, io: Output): Promise<number> => {
  await costCommand(opts, io);
  return EXIT_OK;
};
