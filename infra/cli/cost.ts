import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../package-root';
import { InvalidInputError } from '../../shared/errors';
import {
  boolFlag,
  type CommandSpec,
  EXIT_OK,
  type Flags,
  numberFlag,
  stringFlag,
  wholeNumberFlag,
} from './args';
import { type CostResult, costModel, type Measured, type Workload } from './cost-model';
import { type Output, printJson, table } from './output';
import { DEFAULT_PRICES, type Prices, PRICES_TAKEN, STORAGE_CLASSES, type StorageClass } from './prices';

/** Measured figures the model starts from when no --from-report is given (bench:archive output). */
export const DEFAULT_MEASUREMENTS = join(packageRoot(), 'docs/bench/archive.json');
const DEFAULT_SCENARIO = 'month-1500';

export const costSpec: CommandSpec = {
  name: 'cost',
  short:
    'what keeping job details costs: hot, lifecycled to Glacier, or archived (measured figures, list prices)',
  summary:
    'Cost over the retention horizon of three ways to keep job details — hot in S3 Standard, the small objects ' +
    'lifecycled straight to a Glacier class, and this archiver — from request counts, bytes at rest, Lambda time ' +
    'and state transitions MEASURED by a run (`npm run bench:archive` output or a run report) and published list ' +
    'prices (infra/cli/prices.ts). Prints $/month, cumulative, and the break-even month, or says that archival does not pay.',
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
    'lambda-memory-mb': {
      type: 'string',
      value: 'MB',
      help: 'memory of the archiver functions (default 1024)',
    },
    'from-report': {
      type: 'string',
      value: 'FILE',
      help: 'measured figures: bench:archive output (its last line) or a run report (default docs/bench/archive.json)',
    },
    scenario: {
      type: 'string',
      value: 'NAME',
      help: `with bench output: which scenario (default ${DEFAULT_SCENARIO})`,
    },
    prices: { type: 'string', value: 'FILE', help: 'JSON overriding any price of infra/cli/prices.ts' },
  },
  notes: [`Prices: ${PRICES_TAKEN}. Hot-path writes are the same for all three and left out.`],
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
      lambdaMemoryMb: wholeNumberFlag(flags, 'lambda-memory-mb', 1024, { min: 128, max: 10240 }),
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

/** The per-job figures of a bench scenario or a run report. */
export const measuredFrom = (file: string, scenarioName?: string): Measured => {
  const doc = readJson(file, '--from-report');
  if (typeof doc !== 'object' || doc === null)
    throw new InvalidInputError('--from-report', 'expected a JSON object');
  const d = doc as Obj;
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
      partsPerJob: num(s, 'parts') / jobs,
      averagePartBytes: num(s, 'wholePartBytes'),
      lookupRequests: num(s, 'lookupRequests'),
      lookupBytes: num(s, 'lookupBytes'),
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
      lookupRequests: 0,
      lookupBytes: 0,
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

/** The months shown: the first year's milestones, then every half year to the horizon. */
const shown = (r: CostResult) => {
  const last = r.months.length;
  const marks = new Set([1, 2, 3, 6, 12, r.workload.retentionMonths, last]);
  for (let m = 18; m <= last; m += 6) marks.add(m);
  return [...marks].filter((m) => m <= last).sort((a, b) => a - b);
};

export const costLines = (r: CostResult, m: Measured): string[] => {
  const w = r.workload;
  const lines = [
    `workload: ${w.jobsPerMonth.toLocaleString('en-US')} jobs/month × ${w.objectsPerJob.toFixed(2)} objects × ${Math.round(w.bytesPerJob).toLocaleString('en-US')} bytes; kept ${w.retentionMonths} months; ${w.storageClass}; ${w.lookupsPerMonth} lookups/month`,
    `measured: ${m.source}`,
    `  per hot object: ${Object.entries(m.s3RequestsPerObject)
      .map(([k, n]) => `${k} ${n.toFixed(2)}`)
      .join(', ')}`,
    `  per job: ${m.taskInvocationsPerJob.toFixed(3)} Lambda invocations, ${m.stateTransitionsPerJob.toFixed(2)} state transitions, ${m.dynamodbReadUnitsPerJob.toFixed(2)} read units; bytes at rest ${m.bytesAtRestRatio.toFixed(2)}× the hot bytes (${(m.indexShare * 100).toFixed(0)} % index), parts of ${Math.round(m.averagePartBytes / 1024)} KB`,
    `prices: ${PRICES_TAKEN}`,
    `one-time archival of a month: ${Object.entries(r.archiveOneTime)
      .map(([k, v]) => `${k} ${usd(v)}`)
      .join(', ')}`,
    '',
    ...table([
      ['month', 'hot $/mo', 'lifecycle $/mo', 'archive $/mo', 'hot cum.', 'lifecycle cum.', 'archive cum.'],
      ...shown(r).map((i) => {
        const c = r.months[i - 1];
        const k = r.cumulative[i - 1];
        return [
          i,
          usd(c?.hot ?? 0),
          usd(c?.lifecycle ?? 0),
          usd(c?.archive ?? 0),
          usd(k?.hot ?? 0),
          usd(k?.lifecycle ?? 0),
          usd(k?.archive ?? 0),
        ];
      }),
    ]),
    '',
  ];
  const last = r.cumulative.at(-1);
  lines.push(
    r.breakEvenVsHot === null
      ? `archival does NOT pay against keeping the objects hot within ${r.months.length} months (cumulative ${usd(last?.archive ?? 0)} vs ${usd(last?.hot ?? 0)})`
      : `archival pays against keeping the objects hot from month ${r.breakEvenVsHot}`,
  );
  lines.push(
    r.breakEvenVsLifecycle === null
      ? `archival does NOT pay against lifecycling the objects to ${w.storageClass} within ${r.months.length} months`
      : `archival pays against lifecycling the objects to ${w.storageClass} from month ${r.breakEvenVsLifecycle}`,
  );
  return lines;
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
  if (opts.json) printJson(io, { ...r, measured: m, prices, pricesTaken: PRICES_TAKEN });
  else for (const l of costLines(r, m)) io.out(l);
  return r;
};

export const runCost = async (opts: CostOptions, io: Output): Promise<number> => {
  await costCommand(opts, io);
  return EXIT_OK;
};
