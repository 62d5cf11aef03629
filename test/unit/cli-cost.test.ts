import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_METRICS } from '../../functions/metric-names';
import { parseFlags } from '../../infra/cli/args';
import {
  costCommand,
  costSpec,
  getPhysics,
  keyScaling,
  measuredFrom,
  parseCostOptions,
  parseStepMemory,
  smallPartsSaving,
} from '../../infra/cli/cost';
import {
  ARCHIVE_CUSTOM_METRICS,
  accessLogDays,
  accessLogDollars,
  archiveOneTime,
  atRest,
  costModel,
  cpuWallSeconds,
  deploymentBills,
  fixedPerMonth,
  floorCohort,
  lambdaSeconds,
  lookupCost,
  lookupFloor,
  type Measured,
  partScale,
  partsLeftInStandard,
  partsMoving,
  runShape,
  scaledOneTime,
  smallestPayingObjectBytes,
  transitionThresholdBytes,
  type Workload,
  type WorkTerms,
  wherePays,
} from '../../infra/cli/cost-model';
import { runCli } from '../../infra/cli/main';
import { memoryOutput } from '../../infra/cli/output';
import { DEFAULT_PRICES, requestPrice } from '../../infra/cli/prices';
import { InvalidInputError } from '../../shared/errors';
import { ACCESS_LOGS_RETENTION_DAYS } from '../../shared/settings';

const measured: Measured = {
  source: 'test',
  objectsPerJob: 2,
  bytesPerJob: 2048,
  s3RequestsPerObject: { GetObject: 1, ListObjectsV2: 0.5, PutObject: 0.01, DeleteObjects: 0.01 },
  taskInvocationsPerJob: 0.1,
  taskSecondsPerJob: 0.01,
  stateTransitionsPerJob: 1,
  dynamodbReadUnitsPerJob: 1,
  bytesAtRestRatio: 0.7,
  indexShare: 0.05,
  partsPerJob: 0.001,
  averagePartBytes: 2 * 1024 * 1024,
  lookup: { indexRequests: 1, indexBytes: 30_000, partRequests: 1, partBytes: 60_000 },
};
const workload: Workload = {
  jobsPerMonth: 1000,
  objectsPerJob: 2,
  bytesPerJob: 2048,
  retentionMonths: 12,
  storageClass: 'GLACIER_IR',
  lookupsPerMonth: 0,
  lambdaMemoryMb: 1024,
};

describe('prices', () => {
  it('DELETE is free, writes and lists bill as PUT, reads as GET', () => {
    expect(requestPrice('DeleteObjects', DEFAULT_PRICES)).toBe(0);
    expect(requestPrice('ListObjectsV2', DEFAULT_PRICES)).toBe(DEFAULT_PRICES.putRequest);
    expect(requestPrice('UploadPart', DEFAULT_PRICES)).toBe(DEFAULT_PRICES.putRequest);
    expect(requestPrice('GetObject', DEFAULT_PRICES)).toBe(DEFAULT_PRICES.getRequest);
    expect(requestPrice('HeadObject', DEFAULT_PRICES)).toBe(DEFAULT_PRICES.getRequest);
  });
});

describe('costModel', () => {
  it('prices one cohort’s archival from the measured requests, invocations and transitions', () => {
    const once = archiveOneTime(workload, measured, DEFAULT_PRICES);
    const objects = 2000;
    expect(once.s3Requests).toBeCloseTo((objects * (1 * 0.0004 + 0.5 * 0.005 + 0.01 * 0.005)) / 1000, 12);
    expect(once.stepFunctions).toBeCloseTo((1000 * 1 * 0.025) / 1000, 12);
    expect(once.transitions).toBeCloseTo((1000 * 0.001 * 0.02) / 1000, 12);
  });

  it('month 1 is hot everywhere; cohorts accumulate to the retention, then steady', () => {
    const r = costModel(workload, measured, DEFAULT_PRICES);
    expect(r.months).toHaveLength(24);
    expect(r.months[0]?.hot).toBeCloseTo(r.months[0]?.archive ?? -1, 12);
    expect(r.months[0]?.hot).toBeCloseTo(r.months[0]?.lifecycle ?? -1, 12);
    // Twelve months of Standard, and the access-log records of the objects' expiration at the end.
    expect(r.months[11]?.hot).toBeCloseTo(
      (r.months[0]?.hot ?? 0) * 12 + accessLogDollars(0, 2000, workload, DEFAULT_PRICES),
      12,
    );
    expect(r.months[20]?.hot).toBeCloseTo(r.months[11]?.hot ?? -1, 12);
    expect(r.cumulative.at(-1)?.hot).toBeCloseTo(
      r.months.reduce((s, m) => s + m.hot, 0),
      12,
    );
  });

  it('says when archival pays, and when it does not', () => {
    // Large objects, few requests: the Glacier price difference wins.
    const big = costModel(
      { ...workload, bytesPerJob: 50 * 1024 * 1024 },
      { ...measured, bytesPerJob: 50 * 1024 * 1024 },
      DEFAULT_PRICES,
    );
    expect(big.breakEvenVsHot).not.toBeNull();
    // 1 KB objects with a LIST each: requests cost more than years of the storage they save.
    const tiny = costModel(
      { ...workload, bytesPerJob: 1024 },
      { ...measured, s3RequestsPerObject: { ListObjectsV2: 1, GetObject: 1 } },
      DEFAULT_PRICES,
    );
    expect(tiny.breakEvenVsHot).toBeNull();
  });

  it('lifecycling tiny objects to Glacier IR bills 128 KB each', () => {
    const r = costModel(workload, measured, DEFAULT_PRICES);
    const perMonthInClass = ((1000 * 2 * 128 * 1024) / 1024 ** 3) * 0.004;
    expect((r.months[2]?.lifecycle ?? 0) - (r.months[1]?.lifecycle ?? 0)).toBeCloseTo(perMonthInClass, 6);
  });

  it('parts no larger than the construct’s threshold stay in Standard (Glacier IR kept 12 months: 105 KB)', () => {
    const small = costModel(workload, { ...measured, averagePartBytes: 10_000 }, DEFAULT_PRICES);
    expect(
      archiveOneTime(workload, { ...measured, averagePartBytes: 10_000 }, DEFAULT_PRICES).transitions,
    ).toBe(0);
    const big = costModel(workload, measured, DEFAULT_PRICES);
    expect(small.months[5]?.archive ?? 0).toBeGreaterThan(big.months[5]?.archive ?? 0);
  });

  it('payback is per cohort: the age at which one month of jobs has cost no more archived than hot', () => {
    // Small enough a volume that the month's fixed cost delays the payback (500 jobs of 5 MB: 4 months).
    const w = { ...workload, jobsPerMonth: 500, bytesPerJob: 5 * 1024 * 1024, retentionMonths: 36 };
    const r = costModel(w, { ...measured, bytesPerJob: w.bytesPerJob }, DEFAULT_PRICES);
    let a = 0;
    let h = 0;
    let age: number | null = null;
    for (const c of r.cohort) {
      a += c.archive;
      h += c.hot;
      if (age === null && c.month >= 2 && a <= h) age = c.month;
    }
    expect(age).not.toBeNull();
    expect(r.breakEvenVsHot).toBe(age);
    expect(r.cohort).toHaveLength(36);
    expect(r.cohortTotal.archive).toBeCloseTo(a, 12);
    // The bill from an empty bucket pays later than one cohort does (cohorts not yet paid back
    // keep being added): the old reading overstated the payback.
    const fromEmpty = r.cumulative.find((c) => c.month >= 2 && c.archive <= c.hot)?.month ?? Infinity;
    expect(fromEmpty).toBeGreaterThan(age ?? 0);
  });

  it('by default the fixed cost is one alarm on a free metric ($0.10); runMetrics adds 8 custom metrics and 2 alarms', () => {
    const f = fixedPerMonth(workload, measured, DEFAULT_PRICES);
    expect(f.alarms + f.customMetrics).toBeCloseTo(0.1, 12);
    expect(f.customMetrics).toBe(0);
    const opted = fixedPerMonth({ ...workload, runMetrics: true }, measured, DEFAULT_PRICES);
    expect(opted.alarms).toBeCloseTo(3 * 0.1, 12);
    expect(opted.customMetrics).toBeCloseTo(8 * 0.3, 12);
  });

  it('the floor: one GET per hot object, the first month hot, then the parts at 0.75× the hot bytes in the class', () => {
    const w = { ...workload, retentionMonths: 24 };
    const f = floorCohort(w, DEFAULT_PRICES);
    const hotGb = (w.jobsPerMonth * w.bytesPerJob) / 1024 ** 3;
    const gets = w.jobsPerMonth * w.objectsPerJob * 0.0004e-3;
    expect(f.gets).toBeCloseTo(gets, 15);
    expect(f.cohort[0]).toBeCloseTo(hotGb * 0.023, 15);
    expect(f.cohort[1]).toBeCloseTo(gets + hotGb * 0.75 * 0.004, 15);
    expect(f.cohort[23]).toBeCloseTo(hotGb * 0.75 * 0.004, 15);
    const r = costModel(w, measured, DEFAULT_PRICES);
    expect(r.floor.total).toBeCloseTo(
      f.cohort.reduce((a, b) => a + b, 0),
      15,
    );
    expect(r.archiveWithoutFixed).toBeCloseTo(r.cohortTotal.archive - (r.archiveOneTime.fixed ?? 0), 15);
    expect(r.ratioToFloor).toBeCloseTo(r.archiveWithoutFixed / r.floor.total, 12);
    // Deep Archive kept less than its 180 days: the floor pays the rest too.
    const short = floorCohort({ ...w, retentionMonths: 3, storageClass: 'DEEP_ARCHIVE' }, DEFAULT_PRICES);
    expect(short.cohort[2]).toBeCloseTo(hotGb * 0.75 * 0.00099 * (1 + (180 - 60) / 30), 15);
  });

  it("the deployment's monthly bill at 10^4 … 10^7 jobs a month: every kept cohort, the fixed part once", () => {
    const bills = deploymentBills(workload, measured, DEFAULT_PRICES);
    expect(bills.map((b) => b.jobsPerMonth)).toEqual([1e4, 1e5, 1e6, 1e7]);
    for (const b of bills) {
      const r = costModel({ ...workload, jobsPerMonth: b.jobsPerMonth }, measured, DEFAULT_PRICES);
      expect(b.archive).toBeCloseTo(r.cohortTotal.archive, 12);
      expect(b.hot).toBeCloseTo(r.cohortTotal.hot, 12);
      expect(b.floor).toBeCloseTo(r.floor.total, 12);
      expect(b.fixed).toBeCloseTo(0.1 + (r.fixedPerMonth.idleRuns ?? 0) + 30 * 1e-6, 12);
    }
  });

  it('fixed costs (alarms, custom metrics, idle runs) are charged to the cohort of their month', () => {
    const idleRun = {
      s3RequestsByType: { GetObject: 2, PutObject: 2 },
      invocations: 3,
      stateTransitions: 7,
      readUnits: 1,
      taskSeconds: 0.5,
    };
    const f = fixedPerMonth({ ...workload, runMetrics: true }, { ...measured, idleRun }, DEFAULT_PRICES);
    expect(f.alarms).toBeCloseTo(3 * 0.1, 12);
    expect(f.customMetrics).toBeCloseTo(8 * 0.3, 12);
    const run = 2 * 0.0004e-3 + 2 * 0.005e-3 + 3 * 0.2e-6 + 0.5 * 0.0000133334 + 7 * 0.025e-3 + 0.125e-6;
    expect(f.idleRuns).toBeCloseTo(30 * run, 12);
    // EventBridge Scheduler: $1 a million invocations, one a daily run (its free tier is the account's).
    expect(f.schedule).toBeCloseTo(30 * 1e-6, 15);
    expect(
      archiveOneTime({ ...workload, runMetrics: true }, { ...measured, idleRun }, DEFAULT_PRICES).fixed,
    ).toBeCloseTo(f.alarms + f.customMetrics + f.idleRuns + f.schedule, 12);
    // The construct publishes one custom metric per RUN_METRICS entry.
    expect(ARCHIVE_CUSTOM_METRICS).toBe(Object.keys(RUN_METRICS).length);
  });

  it('decides the class per part, as S3 does: parts no larger than the threshold stay in Standard', () => {
    const mixed = { ...measured, partSizes: [10 * 1024, 10 * 1024, 1024 * 1024], partsPerJob: 0.003 };
    const move = partsMoving(workload, mixed);
    expect(move.countShare).toBeCloseTo(1 / 3, 12);
    expect(move.byteShare).toBeCloseTo(1024 / (1024 + 20), 12);
    expect(archiveOneTime(workload, mixed, DEFAULT_PRICES).transitions).toBeCloseTo(
      ((1000 * 0.003) / 3) * 0.00002,
      12,
    );
    // A transitionMinimumSize of 0: every part moves.
    expect(partsMoving({ ...workload, transitionMinimumBytes: 0 }, mixed).countShare).toBe(1);
    // Part sizes scale with the workload's bytes per job: 20× larger jobs lift the 10 KB parts over 97 KB.
    expect(partsMoving({ ...workload, bytesPerJob: 20 * 2048 }, mixed).countShare).toBe(1);
    // The threshold is the construct's default for the class and retention: a 95 KB part stays
    // when kept 12 months in Glacier IR (97 KB), moves when kept 24 (60 KB) or in Deep Archive 60 (49 KB).
    const ninetyFive = { ...measured, partSizes: [95 * 1024] };
    expect(transitionThresholdBytes(workload)).toBe(99_536);
    expect(partsMoving(workload, ninetyFive).countShare).toBe(0);
    expect(partsMoving({ ...workload, retentionMonths: 24 }, ninetyFive).countShare).toBe(1);
    expect(
      partsMoving({ ...workload, storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 }, ninetyFive).countShare,
    ).toBe(1);
    // Given, it decides: strictly larger moves (S3's ObjectSizeGreaterThan).
    expect(partsMoving({ ...workload, transitionMinimumBytes: 95 * 1024 }, ninetyFive).countShare).toBe(0);
    expect(partsMoving({ ...workload, transitionMinimumBytes: 95 * 1024 - 1 }, ninetyFive).countShare).toBe(
      1,
    );
  });

  it('prices a lookup by what it reads: the index in Standard, the part block in its class', () => {
    const p = DEFAULT_PRICES;
    const inIr = lookupCost(workload, measured, p); // 2 MB parts: in Glacier IR
    expect(inIr.archive).toBeCloseTo(1 * p.getRequest + 1 * 0.01e-3 + (60_000 / 1024 ** 3) * 0.03, 15);
    const small = lookupCost(workload, { ...measured, averagePartBytes: 10_000 }, p); // parts stay in Standard
    expect(small.archive).toBeCloseTo(2 * p.getRequest, 15);
    // Flexible Retrieval restores the whole part before its block can be read (Standard tier by
    // default), and the restored copy sits in Standard for the reader's 7 restore days.
    const fr = lookupCost({ ...workload, storageClass: 'GLACIER' }, measured, p);
    expect(fr.archive).toBeCloseTo(
      p.getRequest + 0.0004e-3 + 0.05e-3 + ((2 * 1024 * 1024) / 1024 ** 3) * (0.01 + 0.023 * (7 / 30)),
      15,
    );
    // The hot check's LIST, when measured, is a LIST-priced request.
    const checked = lookupCost(
      workload,
      { ...measured, lookup: { ...measured.lookup, otherRequests: 1 } },
      p,
    );
    expect(checked.archive - inIr.archive).toBeCloseTo(0.005e-3, 15);
  });

  it('where archiving pays: the smallest mean object size per retention and class', () => {
    const w = { ...workload, jobsPerMonth: 100_000, lookupsPerMonth: 100 };
    const size = smallestPayingObjectBytes(w, measured, DEFAULT_PRICES, 'GLACIER_IR', 24);
    expect(size).not.toBeNull();
    const at = (b: number) =>
      costModel({ ...w, retentionMonths: 24, bytesPerJob: b * w.objectsPerJob }, measured, DEFAULT_PRICES)
        .cohortTotal;
    const pays = at(size ?? 0);
    expect(pays.archive).toBeLessThanOrEqual(pays.hot);
    const below = at((size ?? 0) * 0.98);
    expect(below.archive).toBeGreaterThan(below.hot);
    const rows = wherePays(w, measured, DEFAULT_PRICES);
    expect(rows.map((r) => r.retentionMonths)).toEqual([12, 24, 36, 60, 84]);
    // Kept longer, smaller objects pay.
    const ir = rows.map((r) => r.smallestObjectBytes.GLACIER_IR ?? Infinity);
    for (let i = 1; i < ir.length; i++) expect(ir[i]).toBeLessThan(ir[i - 1] ?? 0);
    // A LIST and a PUT per object: requests outweigh any storage saved, even a GB per object for a year.
    const costly = { ...measured, s3RequestsPerObject: { ListObjectsV2: 1000, PutObject: 1000 } };
    expect(
      smallestPayingObjectBytes({ ...w, jobsPerMonth: 1 }, costly, DEFAULT_PRICES, 'DEEP_ARCHIVE', 12),
    ).toBeNull();
  });

  it('refuses a horizon shorter than two months', () => {
    expect(() => costModel({ ...workload, retentionMonths: 1 }, measured, DEFAULT_PRICES)).toThrow(
      InvalidInputError,
    );
  });
});

describe('jobarchive cost', () => {
  const bench = join(tmpdir(), `jda-cost-${process.pid}.txt`);
  writeFileSync(
    bench,
    `a table line\n${JSON.stringify({
      scenarios: [
        {
          name: 'month-1500',
          jobs: 100,
          hotObjects: 200,
          hotBytes: 204800,
          archiveBytes: 143360,
          indexBytes: 7168,
          s3Requests: 300,
          s3RequestsByType: { GetObject: 200, ListObjectsV2: 100 },
          taskInvocations: 10,
          taskSeconds: 2,
          stateTransitions: 20,
          dynamodbReadUnits: 100,
          parts: 1,
          wholePartBytes: 136192,
          lookupRequests: 2,
          lookupBytes: 50000,
        },
      ],
    })}\n`,
  );

  it('reads the figures of a bench scenario, per job and per hot object', () => {
    const m = measuredFrom(bench);
    expect(m).toMatchObject({
      objectsPerJob: 2,
      bytesPerJob: 2048,
      s3RequestsPerObject: { GetObject: 1, ListObjectsV2: 0.5 },
      taskInvocationsPerJob: 0.1,
      stateTransitionsPerJob: 0.2,
      bytesAtRestRatio: 0.7,
      indexShare: 0.05,
    });
    expect(() => measuredFrom(bench, 'nope')).toThrow(/"nope" is not in/);
  });

  it('reads a run report: its S3 figures; what a report lacks counts 0 and the source says so', () => {
    const report = join(tmpdir(), `jda-cost-report-${process.pid}.json`);
    writeFileSync(
      report,
      JSON.stringify({
        jobsArchived: 10,
        objectsDeleted: 30,
        objectsKept: 0,
        bytesIn: 30_000,
        bytesOut: 21_000,
        partsWritten: 1,
        requests: {
          s3: 45,
          dynamodb: 2,
          byType: { 's3.GetObject': 30, 's3.ListObjectsV2': 1, 'dynamodb.Query': 1 },
        },
      }),
    );
    const m = measuredFrom(report);
    expect(m).toMatchObject({
      objectsPerJob: 3,
      bytesPerJob: 3000,
      s3RequestsPerObject: { GetObject: 1, ListObjectsV2: 1 / 30 },
      bytesAtRestRatio: 0.7,
      taskInvocationsPerJob: 0,
      lookup: { indexRequests: 0, indexBytes: 0, partRequests: 0, partBytes: 0 },
    });
    expect(m.source).toMatch(/no Lambda, transition, index or lookup figures in a report: counted as 0/);
  });

  it('prints the table and the verdicts; --json the whole result', async () => {
    const io = memoryOutput();
    await costCommand(
      parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--jobs-per-month', '1000'])),
      io,
    );
    const text = io.stdout.join('\n');
    // The first line is the command behind every table, measured figures spelled out.
    expect(io.stdout[0]).toMatch(
      /^every figure below is for: jobarchive cost --jobs-per-month 1000 --objects-per-job [\d.]+ --bytes-per-job [\d.]+ --retention-months 24 --storage-class GLACIER_IR --lookups-per-month 100 --access-log-days 0 --lambda-memory-mb 512 --from-report \S+ \(objects and bytes per job as measured: give yours\)$/,
    );
    expect(text).toMatch(/^measured: .*scenario month-1500/m);
    // What the construct deploys by default: no access logs.
    expect(text).toMatch(/^workload: .*; no access logs$/m);
    // The floor beside every archive figure, and the ratio.
    expect(text).toMatch(
      /^age +hot \$ +lifecycle \$ +archive \$ +floor \$ +hot cum\. +lifecycle cum\. +archive cum\. +floor cum\./m,
    );
    expect(text).toMatch(
      /^one cohort over its 24 months: archive \$[\d.]+ \(\$[\d.]+ without the month's fixed costs\) vs floor \$[\d.]+: [\d.]+× the floor/m,
    );
    expect(text).toMatch(/without fixed \$[\d.]+ vs the floor's GETs \$[\d.]+ \([\d.]+×\)/);
    expect(text).toMatch(/^archival (does NOT pay|pays) against keeping the objects hot/m);
    expect(text).toMatch(/^fixed per month: \$0\.1000 \(alarms \$0\.1000, customMetrics \$0\.0000/m);
    expect(text).toMatch(/^jobs\/month +hot \$ +archive \$ +of it fixed \$ +floor \$ +archive\/floor/m);
    for (const n of ['10,000', '100,000', '1,000,000', '10,000,000'])
      expect(text).toMatch(new RegExp(`^${n} +\\$`, 'm'));
    expect(text).toContain('| kept | Glacier IR | Flexible Retrieval | Deep Archive |');
    expect(text).toMatch(/^\| 84 months \| (\d|never)/m);
    const json = memoryOutput();
    await costCommand(parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--json'])), json);
    const doc = json.json<Record<string, unknown>>();
    expect(doc).toEqual(
      expect.objectContaining({ months: expect.any(Array), pricesTaken: expect.any(String) }),
    );
    expect(doc).toHaveProperty('breakEvenVsHot');
    expect(doc).toHaveProperty('wherePays');
    // fixedPerMonth: $ a month (≤ $0.30 by default: one alarm, no custom metric), its components beside.
    expect(doc.fixedPerMonth).toBeCloseTo(0.1 + 30e-6, 12);
    expect(doc.fixedPerMonthByComponent).toEqual({
      alarms: 0.1,
      customMetrics: 0,
      idleRuns: 0,
      schedule: expect.closeTo(30e-6, 12),
    });
    expect(doc).toHaveProperty('ratioArchivalToFloor');
    expect(doc).toHaveProperty('lookups.ratioToFloor');
    expect(doc).toHaveProperty('partsLeftInStandard.perMonth');
    expect(doc).toHaveProperty('deploymentMonthly');
    expect(doc).toHaveProperty('ratioToFloor');
    const opted = memoryOutput();
    await costCommand(
      parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--json', '--run-metrics'])),
      opted,
    );
    expect(opted.json<{ fixedPerMonth: number }>().fixedPerMonth).toBeCloseTo(2.7 + 30e-6, 12);
  });

  it('--transition-minimum-kb: the construct’s transitionMinimumSize priced, echoed; by default the construct’s threshold, printed; the parts left say what moving them would save', async () => {
    const flags = (...args: string[]) => parseCostOptions(parseFlags(costSpec, args)).workload;
    expect(flags().transitionMinimumBytes).toBeUndefined();
    expect(flags('--transition-minimum-kb', '200').transitionMinimumBytes).toBe(200 * 1024);
    expect(() => flags('--transition-minimum-kb', '-1')).toThrow(/--transition-minimum-kb/);
    const run = async (...args: string[]) => {
      const out = memoryOutput();
      await costCommand(parseCostOptions(parseFlags(costSpec, ['--from-report', bench, ...args])), out);
      return out.stdout.join('\n');
    };
    // The one 133 KB part moves: larger than 60 KB, Glacier IR's break-even kept 24 months.
    const dflt = await run();
    expect(dflt).not.toMatch(/--transition-minimum-kb/);
    expect(dflt).toMatch(
      /parts: 100 % of them \(100 % of part bytes\) are larger than 59\.7 KB \(61,165 bytes: the construct's default transitionMinimumSize, where a move pays for itself in GLACIER_IR kept 24 months\) and move to GLACIER_IR \(decided per part, as S3 does\): all of them/,
    );
    // 200 KB: it stays, and moving it would save.
    const kept = await run('--transition-minimum-kb', '200');
    expect(kept).toMatch(/^every figure below is for: jobarchive cost .* --transition-minimum-kb 200 /im);
    expect(kept).toMatch(/are larger than 200\.0 KB \(204,800 bytes: --transition-minimum-kb\)/);
    expect(kept).toMatch(
      /: 1000\.0 parts, .* moving them saves \$[0-9.e-]+ \(--transition-minimum-kb 0 prices it\)/,
    );
    const json = memoryOutput();
    await costCommand(parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--json'])), json);
    expect(json.json<{ partsMoving: { thresholdBytes: number } }>().partsMoving.thresholdBytes).toBe(61_165);
    // The verdict is the saving over the cohort's months as parts, less the transitions.
    const left = { perMonth: 3e-6, movedPerMonth: 1e-6, movedTransitions: 20e-6 };
    expect(smallPartsSaving({ ...workload, retentionMonths: 24 }, left)).toBeCloseTo(23 * 2e-6 - 20e-6, 15);
    expect(smallPartsSaving({ ...workload, retentionMonths: 6 }, left)).toBeLessThan(0);
  });

  it('--access-log-days: parsed, echoed in the command line, priced; refused unless whole days ≥ 0', async () => {
    const flags = (...args: string[]) => parseCostOptions(parseFlags(costSpec, args)).workload;
    expect(flags().accessLogDays).toBeUndefined();
    expect(flags('--access-log-days', '0').accessLogDays).toBe(0);
    expect(flags('--access-log-days', '365').accessLogDays).toBe(365);
    expect(() => flags('--access-log-days', '-1')).toThrow(InvalidInputError);
    expect(() => flags('--access-log-days', '1.5')).toThrow(/--access-log-days/);
    expect(() => costModel({ ...workload, accessLogDays: -3 }, measured, DEFAULT_PRICES)).toThrow(
      /--access-log-days/,
    );
    const json = async (...args: string[]) => {
      const out = memoryOutput();
      await costCommand(
        parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--json', ...args])),
        out,
      );
      const doc = out.json<{ archiveOneTime: { accessLogs: number }; workload: { accessLogDays: number } }>();
      // The days priced at, given or the construct's default (0: it logs nothing unless asked).
      expect(doc.workload.accessLogDays).toBe(args.length > 0 ? Number(args[1]) : ACCESS_LOGS_RETENTION_DAYS);
      return doc.archiveOneTime.accessLogs;
    };
    expect(await json()).toBe(0);
    expect(await json('--access-log-days', '0')).toBe(0);
    expect(await json('--access-log-days', '365')).toBeCloseTo(
      (await json('--access-log-days', '90')) * (365 / 90),
      12,
    );
    // Its help says the default is the construct's (none) and how to price opting in.
    expect(costSpec.options['access-log-days']?.help).toMatch(
      /default 0: the construct logs nothing unless asked.*price opting in.*accessLogsRetention.*serverAccessLogsBucket/,
    );
    const text = memoryOutput();
    await costCommand(
      parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--access-log-days', '30'])),
      text,
    );
    expect(text.stdout[0]).toContain('--access-log-days 30');
    expect(text.stdout.join('\n')).toMatch(/^workload: .*; access logs kept 30 days$/m);
  });

  it('reads steady-year figures: per archived object with the idle runs taken out and charged per run', () => {
    const file = join(tmpdir(), `jda-cost-steady-${process.pid}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        name: 'steady-year',
        runs: 10,
        jobs: 120,
        hotObjectsWritten: 240,
        hotBytesWritten: 240 * 1000,
        totals: {
          jobsArchived: 100,
          hotArchived: 200,
          s3ByType: { GetObject: 260, ListObjectsV2: 30, PutObject: 40 },
          invocations: 50,
          taskSeconds: 10,
          stateTransitions: 90,
          readUnits: 120,
          bytesIn: 200_000,
        },
        idle: {
          mean: {
            s3ByType: { GetObject: 1, ListObjectsV2: 1, PutObject: 2 },
            invocations: 3,
            taskSeconds: 0.5,
            stateTransitions: 7,
            readUnits: 1,
          },
        },
        bytesAtRest: { 'STANDARD parts': 100_000, 'GLACIER_IR parts': 40_000, 'STANDARD index': 10_000 },
        parts: { count: 4, meanBytes: 35_000 },
        partSizes: [10_000, 10_000, 20_000, 100_000],
        lookup: { indexRequests: 1, indexBytes: 2000, partRequests: 1, partBytes: 9000 },
      }),
    );
    const m = measuredFrom(file);
    expect(m).toMatchObject({
      objectsPerJob: 2,
      bytesPerJob: 2000,
      s3RequestsPerObject: { GetObject: 1.25, ListObjectsV2: 0.1, PutObject: 0.1 },
      taskInvocationsPerJob: 0.2,
      stateTransitionsPerJob: 0.2,
      dynamodbReadUnitsPerJob: 1.1,
      bytesAtRestRatio: 0.75,
      partSizes: [10_000, 10_000, 20_000, 100_000],
      lookup: { indexRequests: 1, partBytes: 9000 },
      idleRun: expect.objectContaining({ invocations: 3, stateTransitions: 7 }),
    });
    expect(m.indexShare).toBeCloseTo(10 / 150, 12);
    // The index is an entry a job: its bytes per job, not a share of the hot bytes.
    expect(m.indexBytesPerJob).toBe(100);
    // No per-run request keys in the file: the work is not split by what it scales with.
    expect(m.terms).toBeUndefined();
    expect(m.source).toMatch(/steady-year: 10 daily runs, 100 jobs \/ 200 hot objects archived/);
  });

  it('splits steady-year’s active runs by what their work scales with (request keys, pages, batches, CPU)', () => {
    const file = join(tmpdir(), `jda-cost-terms-${process.pid}.json`);
    const activeRun = (day: string, hot: boolean) => ({
      day,
      groupsOk: 5,
      readUnits: 60,
      dynamodbRequests: 12,
      cpuSeconds: 3,
      invocations: 6, // Report, a page (Plan, Tally), 3 batches
      stateTransitions: 12, // Route, Report, RunComplete, Done; a page's 5; 3 batches' 1
      byKey: [
        ...(hot ? [['GetObject hot', 100]] : [['DeleteObjects hot', 1]]),
        ['ListObjectsV2 hot', 2],
        ['PutObject part', 2],
        ['GetObject month index', 4],
        ['PutObject state', 1],
        ['PutObject run report', 1],
        ['PutObject run plan/jobs.jsonl', 1],
        ['PutObject run pages', 1],
        ['PutObject run attempts', 3],
      ],
    });
    writeFileSync(
      file,
      JSON.stringify({
        name: 'steady-year',
        runs: 4,
        jobs: 50,
        hotObjectsWritten: 200,
        hotBytesWritten: 200_000,
        totals: { jobsArchived: 50, hotArchived: 200, s3ByType: {}, bytesIn: 200_000 },
        idle: {
          mean: {
            s3ByType: { GetObject: 1 },
            invocations: 2,
            taskSeconds: 0.1,
            cpuSeconds: 0.5,
            dynamodbRequests: 1,
            stateTransitions: 6,
            readUnits: 10,
          },
        },
        bytesAtRest: { 'GLACIER_IR parts': 150_000, 'STANDARD index': 5000 },
        parts: { count: 4, meanBytes: 37_500 },
        lookup: {},
        perRun: [
          activeRun('2025-02-15', true),
          activeRun('2025-02-16', false),
          activeRun('2025-03-15', true),
          activeRun('2025-03-16', false),
        ],
      }),
    );
    const t = measuredFrom(file).terms;
    expect(t).toBeDefined();
    if (!t) return;
    // Hot keys per archived hot object; archive keys per part; run scratch per run, page or batch.
    expect(t.perHotObject).toEqual({ GetObject: 1, ListObjectsV2: 0.04, DeleteObjects: 0.01 });
    expect(t.perPart).toEqual({ PutObject: 2, GetObject: 4 });
    expect(t.perRun.s3).toEqual({ PutObject: 2 });
    expect(t.perPage.s3).toEqual({ PutObject: 2 });
    expect(t.perBatch.s3).toEqual({ PutObject: 1 });
    // What is left of an active run once its page and batches are taken out: Route, Report, RunComplete, Done.
    expect(t.perRun).toMatchObject({ invocations: 1, stateTransitions: 4 });
    // A batch: its ArchiveBatch state as counted locally, and the child execution's start AWS bills.
    expect(t.perBatch).toMatchObject({ invocations: 1, stateTransitions: 2 });
    expect(t.activeRunsPerMonth).toBe(2);
    // 4 runs over 2 months, 5 shop-months each: 10 shop-months for 50 jobs.
    expect(t.jobsPerShopMonth).toBe(5);
    // The idle run's reads and CPU (they scale with the table and the run, not the jobs) taken out.
    expect(t.readUnitsPerJob).toBeCloseTo((4 * 60 - 4 * 10) / 50, 12);
    expect(t.dynamodbRequestsPerJob).toBeCloseTo((4 * 12 - 4) / 50, 12);
    expect(t.cpuSecondsPerHotObject).toBeCloseTo((4 * 3 - 4 * 0.5) / 200, 12);
  });

  it("counts a run's batches by its ArchiveBatch invocations: a delete run's batches write no attempt marker", () => {
    const file = join(tmpdir(), `jda-cost-batches-${process.pid}.json`);
    const activeRun = (day: string, archive: boolean) => ({
      day,
      groupsOk: 5,
      readUnits: 60,
      invocations: 6, // Report, a page (Plan, Tally), 3 batches
      stateTransitions: 12, // Route, Report, RunComplete, Done; a page's 5; 3 batches' 1
      steps: { 'archive-batch': { invocations: 3, seconds: 1, cpuSeconds: 1 } },
      byKey: [
        ...(archive ? [['GetObject hot', 100]] : [['DeleteObjects hot', 1]]),
        ['PutObject run pages', 1],
        // Markers only where a part is staged: the archive run's batches.
        ...(archive ? [['PutObject run attempts', 3]] : []),
      ],
    });
    writeFileSync(
      file,
      JSON.stringify({
        name: 'steady-year',
        runs: 4,
        jobs: 50,
        hotObjectsWritten: 200,
        hotBytesWritten: 200_000,
        totals: { jobsArchived: 50, hotArchived: 200, s3ByType: {}, bytesIn: 200_000 },
        idle: { mean: { s3ByType: { GetObject: 1 }, invocations: 2, taskSeconds: 0.1, stateTransitions: 6 } },
        bytesAtRest: { 'GLACIER_IR parts': 150_000, 'STANDARD index': 5000 },
        parts: { count: 4, meanBytes: 37_500 },
        lookup: {},
        perRun: [
          activeRun('2025-02-15', true),
          activeRun('2025-02-16', false),
          activeRun('2025-03-15', true),
          activeRun('2025-03-16', false),
        ],
      }),
    );
    const t = measuredFrom(file).terms;
    // 12 batches over the 4 runs, 6 markers: half a PUT a batch; the run's own work as before.
    expect(t?.perBatch.s3).toEqual({ PutObject: 0.5 });
    expect(t?.perRun).toMatchObject({ invocations: 1, stateTransitions: 4 });
  });

  it('runs without any stack; bad flags are one line and exit 2', async () => {
    const io = memoryOutput();
    expect(await runCli(['cost', '--from-report', bench, '--storage-class', 'STANDARD'], io)).toBe(2);
    expect(io.stderr).toEqual([
      expect.stringMatching(/invalid --storage-class: expected one of GLACIER_IR, GLACIER, DEEP_ARCHIVE/),
    ]);
    const ok = memoryOutput();
    expect(await runCli(['cost', '--from-report', bench], ok)).toBe(0);
    expect(ok.stderr.join('\n')).not.toMatch(/embedded stack/);
    const missing = memoryOutput();
    expect(await runCli(['cost', '--from-report', '/nonexistent.json'], missing)).toBe(2);
  });
});

describe('the model scales each term with what it scales with', () => {
  const terms: WorkTerms = {
    perHotObject: { GetObject: 1, ListObjectsV2: 0.01, DeleteObjects: 0.001 },
    perPart: { PutObject: 4, GetObject: 3 },
    perRun: { s3: { PutObject: 3, GetObject: 5 }, invocations: 1, stateTransitions: 4 },
    perPage: { s3: { PutObject: 5, GetObject: 8 }, invocations: 2, stateTransitions: 5 },
    perBatch: { s3: { PutObject: 1 }, invocations: 1, stateTransitions: 1 },
    activeRunsPerMonth: 2,
    jobsPerShopMonth: 100,
    readUnitsPerJob: 0.5,
    dynamodbRequestsPerJob: 0.02,
    cpuSecondsPerHotObject: 0.001,
  };
  const m: Measured = {
    ...measured,
    indexBytesPerJob: 30,
    idleRun: {
      s3RequestsByType: { GetObject: 1 },
      invocations: 2,
      stateTransitions: 6,
      readUnits: 8,
      taskSeconds: 0.05,
      cpuSeconds: 0.02,
      dynamodbRequests: 1,
    },
    terms,
  };
  const at = (jobsPerMonth: number, w: Partial<Workload> = {}) =>
    scaledOneTime({ ...workload, jobsPerMonth, ...w }, m, terms, DEFAULT_PRICES);

  it('doubling the jobs doubles the per-object, per-part and per-job terms, not the per-run ones', () => {
    const one = at(500);
    const two = at(1000);
    // Both within one plan page and one batch a run.
    expect(one.shape).toEqual({ pages: 1, batches: 1 });
    expect(two.shape).toEqual({ pages: 1, batches: 1 });
    expect(two.dollars.perHotObject).toBeCloseTo(2 * one.dollars.perHotObject, 15);
    expect(two.dollars.perPart).toBeCloseTo(2 * one.dollars.perPart, 15);
    expect(two.dollars.perJobReads).toBeCloseTo(2 * one.dollars.perJobReads, 15);
    expect(two.dollars.lambdaCpu).toBeCloseTo(2 * one.dollars.lambdaCpu, 15);
    expect(two.dollars.perActiveRun).toBeCloseTo(one.dollars.perActiveRun, 15);
    expect(one.dollars.perActiveRun).toBeGreaterThan(0);
  });

  it('an active run: its fixed work, a plan page’s and a batch’s, less the idle run it replaces', () => {
    const p = DEFAULT_PRICES;
    const r = at(1000);
    // S3 a run: PutObject 3 + 5 + 1, GetObject 5 + 8 − 1 (the idle run's); 2 runs a month.
    const s3 = 2 * (9 * p.putRequest + 12 * p.getRequest);
    const transitions = 2 * (4 + 5 + 1 - 6);
    const invocations = 2 * (1 + 2 + 1 - 2);
    expect(r.dollars.perActiveRun).toBeCloseTo(
      s3 + transitions * p.stateTransition + invocations * p.lambdaRequest,
      15,
    );
    expect(r.stepFunctions).toBeCloseTo(transitions * p.stateTransition, 15);
  });

  it('plan pages and batches grow with the jobs of a run, by the plan settings’ defaults', () => {
    // 100,000 jobs a plan page; a batch holds at most 5,000 jobs or 300 shop-months (the state-size
    // bound, BATCH_GROUPS_MAX): 10,000 shop-months of 10 jobs are 34 batches of 300, not 200 of 50
    // shop-months; 50,000 of 2 jobs (5 pages of 10,000) are 167 of 300; 2,500 of 100 are 50 of 5,000 jobs.
    expect(runShape(250_000, 100)).toEqual({ pages: 3, batches: 50 });
    expect(runShape(100_000, 10)).toEqual({ pages: 1, batches: 34 });
    expect(runShape(100_000, 2)).toEqual({ pages: 5, batches: 167 });
    expect(runShape(10, 100)).toEqual({ pages: 1, batches: 1 });
    const big = at(250_000);
    const small = at(1000);
    const p = DEFAULT_PRICES;
    // Two more pages and 49 more batches in each of the 2 runs.
    expect(big.stepFunctions - small.stepFunctions).toBeCloseTo(2 * (2 * 5 + 49 * 1) * p.stateTransition, 12);
  });

  it('Lambda bills CPU at its memory’s share of a vCPU, the hot GETs (readConcurrency, 32, at a time) overlapping it, then each other request’s latency', () => {
    const p = DEFAULT_PRICES; // S3 50 ms, DynamoDB 10 ms
    // At 1,769 MB and more a function has a whole vCPU; at 512 MB the same work takes 1769/512 as long.
    expect(cpuWallSeconds(2, 1769)).toBe(2);
    expect(cpuWallSeconds(2, 3008)).toBe(2);
    expect(cpuWallSeconds(2, 512)).toBeCloseTo((2 * 1769) / 512, 12);
    // CPU-bound: the hot GETs' 0.25 s of waiting hides behind 2 s of CPU.
    expect(lambdaSeconds(2, { hotGets: 160, otherS3: 10, dynamodb: 100 }, p, 1769)).toBeCloseTo(
      2 + 10 * 0.05 + 100 * 0.01,
      12,
    );
    // Waiting-bound: 32,000 hot GETs wait 50 s, longer than the CPU's 2 s.
    expect(lambdaSeconds(2, { hotGets: 32_000, otherS3: 0, dynamodb: 0 }, p, 1769)).toBeCloseTo(50, 12);
    expect(
      lambdaSeconds(0, { hotGets: 0, otherS3: 1, dynamodb: 0 }, { ...p, s3LatencyMs: 100 }, 512),
    ).toBeCloseTo(0.1, 12);
    const r = at(1000);
    const objects = 2000;
    expect(r.lambdaSeconds.wallTime).toBe(false);
    expect(r.lambdaSeconds.cpu).toBeCloseTo(objects * 0.001, 12);
    const hotGets = objects;
    const otherS3 = objects * 0.011 + 1000 * measured.partsPerJob * 7 + 2 * (9 + 12); // hot LIST/DELETE, parts, runs
    const mb = workload.lambdaMemoryMb;
    const cpuWall = cpuWallSeconds(objects * 0.001, mb);
    expect(r.lambdaSeconds.waiting).toBeCloseTo(
      Math.max(cpuWall, (hotGets / 32) * 0.05) - cpuWall + otherS3 * 0.05 + 1000 * 0.02 * 0.01,
      9,
    );
    expect(r.lambda).toBeCloseTo(
      2 * 2 * p.lambdaRequest + ((cpuWall + r.lambdaSeconds.waiting) * mb * p.lambdaGbSecond) / 1024,
      15,
    );
  });

  it('each step’s CPU is billed at its memory, the waiting at ArchiveBatch’s', () => {
    const shared: WorkTerms = { ...terms, cpuShareByStep: { plan: 0.25, 'archive-batch': 0.75 } };
    const w: Workload = { ...workload, lambdaMemoryMb: 512, stepMemoryMb: { 'archive-batch': 1024 } };
    const r = scaledOneTime(w, m, shared, DEFAULT_PRICES);
    expect(r.lambdaMemoryMb).toEqual({ cpu: 0.25 * 512 + 0.75 * 1024, waiting: 1024 });
    // Under 1,769 MB a step's CPU work costs the same GB-seconds whatever its memory (it runs slower).
    expect(r.dollars.lambdaCpu).toBeCloseTo(
      ((r.lambdaSeconds.cpu * 1769) / 1024) * DEFAULT_PRICES.lambdaGbSecond,
      15,
    );
    expect(r.dollars.lambdaWaiting).toBeCloseTo(r.lambdaSeconds.waiting * DEFAULT_PRICES.lambdaGbSecond, 15);
    // Above it, the memory is billed and buys no speed (one thread).
    const big = scaledOneTime({ ...w, stepMemoryMb: { 'archive-batch': 3008 } }, m, shared, DEFAULT_PRICES);
    expect(big.dollars.lambdaCpu).toBeCloseTo(
      ((big.lambdaSeconds.cpu * (0.25 * 1769 + 0.75 * 3008)) / 1024) * DEFAULT_PRICES.lambdaGbSecond,
      15,
    );
    expect(parseStepMemory('archive-batch=1024,plan=256')).toEqual({ 'archive-batch': 1024, plan: 256 });
    expect(() => parseStepMemory('batch=1024')).toThrow(InvalidInputError);
    expect(() => parseStepMemory('plan=64')).toThrow(InvalidInputError);
  });

  it('without measured CPU, Lambda is billed the local wall time and says so', () => {
    const { cpuSecondsPerHotObject: _, ...noCpu } = terms;
    const r = scaledOneTime(workload, m, noCpu, DEFAULT_PRICES);
    expect(r.lambdaSeconds).toEqual({ cpu: 1000 * measured.taskSecondsPerJob, waiting: 0, wallTime: true });
  });

  it('the index at rest is per job: more bytes per job grow the parts, not the index', () => {
    const base = atRest(workload, m);
    const fat = atRest({ ...workload, bytesPerJob: workload.bytesPerJob * 2 }, m);
    const more = atRest({ ...workload, jobsPerMonth: workload.jobsPerMonth * 2 }, m);
    expect(base.indexGb).toBeCloseTo((1000 * 30) / 1024 ** 3, 15);
    expect(fat.indexGb).toBeCloseTo(base.indexGb, 15);
    expect(fat.partGb).toBeCloseTo(2 * base.partGb, 15);
    expect(more.indexGb).toBeCloseTo(2 * base.indexGb, 15);
    // Without a per-job figure the index keeps its share of the hot bytes (older files).
    const { indexBytesPerJob: _, ...share } = m;
    expect(atRest({ ...workload, bytesPerJob: 4096 }, share).indexGb).toBeCloseTo(
      (1000 * 4096 * 0.7 * 0.05) / 1024 ** 3,
      15,
    );
  });

  it('costModel uses the terms for the one-time cost and shows them', () => {
    const r = costModel(workload, m, DEFAULT_PRICES);
    const s = at(1000);
    expect(r.scaled).toEqual(s);
    expect(r.archiveOneTime.s3Requests).toBeCloseTo(s.s3, 15);
    expect(r.archiveOneTime.lambda).toBeCloseTo(s.lambda, 15);
    expect(r.archiveOneTime.dynamodb).toBeCloseTo(1000 * 0.5 * DEFAULT_PRICES.dynamodbReadUnit, 15);
  });

  it('a part holds a shop-month: more jobs a shop-month, fewer and bigger parts (input, else as measured)', () => {
    expect(partScale(workload, m)).toEqual({ partsPerJob: measured.partsPerJob, sizeFactor: 1 });
    const big = partScale({ ...workload, jobsPerShopMonth: 400 }, m);
    expect(big.partsPerJob).toBeCloseTo(measured.partsPerJob / 4, 15);
    expect(big.sizeFactor).toBeCloseTo(4, 15);
    expect(partScale({ ...workload, bytesPerJob: 4096 }, m).sizeFactor).toBeCloseTo(2, 15);
    // Fewer parts: fewer per-part requests; the batches follow the shop-months.
    const r = scaledOneTime({ ...workload, jobsPerShopMonth: 400 }, m, terms, DEFAULT_PRICES);
    expect(r.dollars.perPart).toBeCloseTo(at(1000).dollars.perPart / 4, 15);
    // Figures that do not say how many jobs their shop-months held cannot honour it.
    expect(() => partScale({ ...workload, jobsPerShopMonth: 400 }, measured)).toThrow(InvalidInputError);
  });

  it('says why a workload never pays: one GET buys ~25 months of Standard storage of a 700-byte object', () => {
    const text = getPhysics(
      { ...workload, objectsPerJob: 1, bytesPerJob: 700, retentionMonths: 24 },
      DEFAULT_PRICES,
    );
    // $0.0004 per 1,000 GETs / (700 B × $0.023 per GB-month) = 26.7 months.
    expect(text).toMatch(/costs as much as 27 months of Standard storage of a 700 B object/);
    expect(text).toMatch(/saves at most 23 months/);
  });

  it('classifies request keys: hot per object, run scratch per run, page or batch, the rest per part', () => {
    expect(keyScaling('hot')).toBe('hot');
    expect(keyScaling('run plan/jobs.jsonl')).toBe('page');
    expect(keyScaling('run pages')).toBe('page');
    expect(keyScaling('run results')).toBe('page');
    expect(keyScaling('run attempts')).toBe('batch');
    expect(keyScaling('run report')).toBe('run');
    expect(keyScaling('state')).toBe('run');
    expect(keyScaling('month index')).toBe('part');
    expect(keyScaling('shared intent')).toBe('part');
  });
});

describe('restore tiers', () => {
  const p = DEFAULT_PRICES;
  const partGb = (2 * 1024 * 1024) / 1024 ** 3;
  const restored = partGb * 0.023 * (7 / 30); // the restored copy, 7 days in Standard
  const get = 0.0004e-3;

  it('a lookup restores the whole part at the tier: Standard by default (the reader’s), Bulk and Expedited by flag', () => {
    const fr = (restoreTier?: 'Standard' | 'Bulk' | 'Expedited') =>
      lookupCost(
        { ...workload, storageClass: 'GLACIER', ...(restoreTier ? { restoreTier } : {}) },
        measured,
        p,
      ).archive;
    expect(fr()).toBeCloseTo(fr('Standard'), 15);
    expect(fr('Standard')).toBeCloseTo(p.getRequest + get + 0.05e-3 + partGb * 0.01 + restored, 15);
    expect(fr('Bulk')).toBeCloseTo(p.getRequest + get + restored, 15); // Flexible Retrieval's Bulk is free
    expect(fr('Expedited')).toBeCloseTo(p.getRequest + get + 10e-3 + partGb * 0.03 + restored, 15);
    const da = (restoreTier: 'Standard' | 'Bulk') =>
      lookupCost({ ...workload, storageClass: 'DEEP_ARCHIVE', restoreTier }, measured, p).archive;
    expect(da('Standard')).toBeCloseTo(p.getRequest + get + 0.1e-3 + partGb * 0.02 + restored, 15);
    expect(da('Bulk')).toBeCloseTo(p.getRequest + get + 0.025e-3 + partGb * 0.0025 + restored, 15);
    // Glacier IR reads without a restore: the tier changes nothing.
    expect(lookupCost({ ...workload, restoreTier: 'Expedited' }, measured, p).archive).toBeCloseTo(
      lookupCost(workload, measured, p).archive,
      15,
    );
    // Lifecycled small objects: each object restored on its own.
    const objectGb = 1024 / 1024 ** 3;
    expect(
      lookupCost({ ...workload, storageClass: 'DEEP_ARCHIVE', restoreTier: 'Bulk' }, measured, p).lifecycle,
    ).toBeCloseTo(0.005e-3 + 2 * (get + 0.025e-3 + objectGb * (0.0025 + 0.023 * (7 / 30))), 15);
  });

  it('Deep Archive has no Expedited: refused with a typed error naming the flag, before anything is priced', () => {
    const w = { ...workload, storageClass: 'DEEP_ARCHIVE' as const, restoreTier: 'Expedited' as const };
    expect(() => costModel(w, measured, p)).toThrow(InvalidInputError);
    expect(() => costModel(w, measured, p)).toThrow(/--restore-tier.*DEEP_ARCHIVE offers no Expedited/);
    expect(() => parseCostOptions(parseFlags(costSpec, ['--restore-tier', 'Fast']))).toThrow(
      /--restore-tier: expected one of Expedited, Standard, Bulk/,
    );
    expect(parseCostOptions(parseFlags(costSpec, ['--restore-tier', 'Bulk'])).workload.restoreTier).toBe(
      'Bulk',
    );
  });

  it('where it pays: each class at the workload’s tier where it offers it, else the reader’s default (said)', async () => {
    const w = { ...workload, jobsPerMonth: 100_000, lookupsPerMonth: 100, restoreTier: 'Expedited' as const };
    const rows = wherePays(w, measured, p);
    const at = (cls: 'GLACIER' | 'DEEP_ARCHIVE', restoreTier: 'Expedited' | 'Standard') =>
      smallestPayingObjectBytes({ ...w, restoreTier }, measured, p, cls, 24);
    expect(rows[1]?.smallestObjectBytes.GLACIER).toBe(at('GLACIER', 'Expedited'));
    expect(rows[1]?.smallestObjectBytes.DEEP_ARCHIVE).toBe(at('DEEP_ARCHIVE', 'Standard'));
    const out = memoryOutput();
    await costCommand(
      parseCostOptions(parseFlags(costSpec, ['--storage-class', 'GLACIER', '--restore-tier', 'Expedited'])),
      out,
    );
    expect(out.stdout.join('\n')).toContain('DEEP_ARCHIVE restored at Standard, having no Expedited');
  });

  it('the CLI says the tier and what it means for the person waiting', async () => {
    const out = memoryOutput();
    await costCommand(
      parseCostOptions(
        parseFlags(costSpec, [
          '--storage-class',
          'DEEP_ARCHIVE',
          '--restore-tier',
          'Bulk',
          '--retention-months',
          '24',
        ]),
      ),
      out,
    );
    const text = out.stdout.join('\n');
    expect(text).toContain('--restore-tier Bulk');
    expect(text).toContain('at the Bulk tier');
    expect(text).toContain('the person waits within 48 hours');
    expect(text).toMatch(
      /the archival alone \(the cohort's [\d.]+ lookups left out; the floor has none\): \$[\d.]+ vs floor \$[\d.]+: [\d.]+× the floor/,
    );
    expect(text).toMatch(
      /its lookups: [\d.]+ at \$[\d.e-]+ each = \$[\d.]+, against their physical minimum .*one Bulk restore request/,
    );
    const bad = memoryOutput();
    await expect(
      costCommand(
        parseCostOptions(
          parseFlags(costSpec, ['--storage-class', 'DEEP_ARCHIVE', '--restore-tier', 'Expedited']),
        ),
        bad,
      ),
    ).rejects.toThrow(InvalidInputError);
  });
});

describe('lookups beside the floor', () => {
  const p = DEFAULT_PRICES;
  const w = { ...workload, jobsPerMonth: 100_000, lookupsPerMonth: 100, retentionMonths: 24 };

  it('ratioToFloor keeps the lookups; beside it the archival alone and the lookups against their minimum', () => {
    const r = costModel(w, measured, p);
    const none = costModel({ ...w, lookupsPerMonth: 0 }, measured, p);
    // The issue's figure is unchanged: lookups in the cohort, none in the floor.
    expect(r.ratioToFloor).toBeCloseTo(r.archiveWithoutFixed / r.floor.total, 12);
    // The archival alone is the cohort without lookups.
    expect(r.archivalWithoutFixed).toBeCloseTo(none.archiveWithoutFixed, 12);
    expect(r.ratioArchivalToFloor).toBeCloseTo(none.ratioToFloor, 12);
    expect(none.lookups.archive).toBe(0);
    // 100 lookups a month over 24 cohorts, each cohort archived 23 months.
    expect(r.lookups.count).toBeCloseTo((100 / 24) * 23, 12);
    expect(r.lookups.archive).toBeCloseTo(r.lookups.count * lookupCost(w, measured, p).archive, 15);
    expect(r.archiveWithoutFixed - r.archivalWithoutFixed).toBeCloseTo(r.lookups.archive, 12);
    expect(r.lookups.ratioToFloor).toBeCloseTo(r.lookups.perLookup / r.lookups.floorPerLookup, 12);
  });

  it('a lookup’s physical minimum: one GET of the job’s bytes, or one restore of an object holding only the job', () => {
    const jobGb = (2048 * 0.75) / 1024 ** 3;
    expect(lookupFloor(w, p)).toBeCloseTo(0.01e-3 + jobGb * 0.03, 15);
    expect(lookupFloor({ ...w, storageClass: 'DEEP_ARCHIVE' }, p)).toBeCloseTo(
      0.0004e-3 + 0.1e-3 + jobGb * 0.02,
      15,
    );
    expect(lookupFloor({ ...w, storageClass: 'GLACIER', restoreTier: 'Bulk' }, p)).toBeCloseTo(0.0004e-3, 15);
  });
});

describe('billing rules', () => {
  const p = DEFAULT_PRICES;

  it('the access log: a record per request, per hot key deleted and per part transitioned, kept the construct’s accessLogsRetention in Standard', () => {
    // One default, read by the construct (no access logs unless asked: its prop's @default,
    // construct-docs.test.ts) and the model: nothing to price.
    expect(ACCESS_LOGS_RETENTION_DAYS).toBe(0);
    expect(accessLogDays(workload)).toBe(ACCESS_LOGS_RETENTION_DAYS);
    expect(accessLogDollars(1e6, 1e6, workload, p)).toBe(0);
    expect(archiveOneTime(workload, measured, p).accessLogs).toBe(0);
    // Opted in (accessLogsRetention: Duration.days(90)).
    const logged = { ...workload, accessLogDays: 90 };
    expect(accessLogDollars(1e6, 1e6, logged, p)).toBeCloseTo(
      ((1e6 * (800 + 350)) / 1024 ** 3) * 0.023 * (90 / 30),
      12,
    );
    expect(accessLogDollars(1e6, 1e6, { accessLogDays: 365 }, p)).toBeCloseTo(
      ((1e6 * (800 + 350)) / 1024 ** 3) * 0.023 * (365 / 30),
      12,
    );
    expect(accessLogDollars(1e6, 1e6, { accessLogDays: 0 }, p)).toBe(0);
    const once = archiveOneTime(logged, measured, p);
    const objects = 1000 * 2;
    const requests = objects * (1 + 0.5 + 0.01 + 0.01);
    const parts = 1000 * 0.001; // 2 MB parts: all move
    expect(once.accessLogs).toBeCloseTo(accessLogDollars(requests + objects, parts, logged, p), 12);
    // Hot: the objects' expiration records, in the cohort's last month.
    const r = costModel(logged, measured, p);
    expect((r.cohort[11]?.hot ?? 0) - (r.cohort[10]?.hot ?? 0)).toBeCloseTo(
      accessLogDollars(0, objects, logged, p),
      12,
    );
  });

  it('--access-log-days prices the retention chosen (0: not kept or billed elsewhere), all three ways', async () => {
    const at = (days: number | undefined) =>
      costModel({ ...workload, ...(days !== undefined ? { accessLogDays: days } : {}) }, measured, p);
    const [dflt, quarter, year, none] = [at(undefined), at(90), at(365), at(0)];
    // The default is the construct's: no access logs.
    expect(dflt.cohortTotal).toEqual(none.cohortTotal);
    expect(none.archiveOneTime.accessLogs).toBe(0);
    expect(quarter.archiveOneTime.accessLogs).toBeGreaterThan(0);
    expect(year.archiveOneTime.accessLogs).toBeCloseTo(
      (quarter.archiveOneTime.accessLogs ?? 0) * (365 / 90),
      12,
    );
    // The records are the only difference: linear in the days, each way.
    for (const k of ['hot', 'lifecycle', 'archive'] as const) {
      const perDay = (quarter.cohortTotal[k] - none.cohortTotal[k]) / 90;
      expect(perDay).toBeGreaterThan(0);
      expect(year.cohortTotal[k] - none.cohortTotal[k]).toBeCloseTo(perDay * 365, 12);
    }
  });

  it('Glacier IR bills each moved part at least 128 KB, part by part (10 KB parts move only with a threshold under them)', () => {
    const w = { ...workload, transitionMinimumBytes: 0 };
    const { partGb, indexGb } = atRest(w, measured);
    // Parts of 10, 10 and 300 KB, as many as hold the cohort's part bytes.
    const sizes = [10 * 1024, 10 * 1024, 300 * 1024];
    const mean = (320 * 1024) / 3;
    const mixed = {
      ...measured,
      partSizes: sizes,
      averagePartBytes: mean,
      partsPerJob: (partGb * 1024 ** 3) / mean / 1000,
    };
    const r = costModel(w, mixed, p);
    // Age 3: each 10 KB part billed 128 KB, the 300 KB one its size; the index in Standard.
    const billedGb = partGb * ((2 * 128 + 300) / 320);
    expect(r.cohort[2]?.archive).toBeCloseTo(billedGb * 0.004 + indexGb * 0.023, 12);
    // What staying costs, beside what moving would: 2 parts of 10 KB (their share of the part bytes).
    const left = partsLeftInStandard(workload, mixed, p);
    const parts = 1000 * mixed.partsPerJob;
    expect(left.count).toBeCloseTo((parts * 2) / 3, 9);
    expect(left.perMonth).toBeCloseTo(partGb * (20 / 320) * 0.023, 12);
    expect(left.movedPerMonth).toBeCloseTo(partGb * ((2 * 128) / 320) * 0.004, 12);
    expect(left.movedTransitions).toBeCloseTo(((parts * 2) / 3) * 0.02e-3, 12);
    // With the construct's threshold (105 KB) the 10 KB parts stay in Standard at their size.
    const kept = costModel(workload, mixed, p);
    expect(kept.cohort[2]?.archive).toBeCloseTo(
      partGb * (300 / 320) * 0.004 + partGb * (20 / 320) * 0.023 + indexGb * 0.023,
      12,
    );
  });

  it('deleted before the minimum duration: the rest of what the class bills (its minimum size and overhead), not the 8 KB in Standard', () => {
    // Kept 4 months, 3 of them in Deep Archive: 180 − 90 = 90 days (3 months) more at deletion.
    const w = { ...workload, storageClass: 'DEEP_ARCHIVE' as const, retentionMonths: 4 };
    const r = costModel(w, measured, p);
    const parts = 1000 * 0.001;
    const { partGb } = atRest(w, measured);
    const partsInClass = (partGb + (parts * 32 * 1024) / 1024 ** 3) * 0.00099;
    expect((r.cohort[3]?.archive ?? 0) - (r.cohort[2]?.archive ?? 0)).toBeCloseTo(3 * partsInClass, 12);
    // Lifecycle: 2,000 objects of 1 KB + 32 KB each in the class; their 8 KB in Standard owes nothing.
    const objectsInClass = ((2000 * (1024 + 32 * 1024)) / 1024 ** 3) * 0.00099;
    expect((r.cohort[3]?.lifecycle ?? 0) - (r.cohort[2]?.lifecycle ?? 0)).toBeCloseTo(
      3 * objectsInClass + accessLogDollars(0, 2000, w, p),
      12,
    );
  });
});
