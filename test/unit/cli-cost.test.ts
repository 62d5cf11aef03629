import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFlags } from '../../infra/cli/args';
import { costCommand, costSpec, measuredFrom, parseCostOptions } from '../../infra/cli/cost';
import { archiveOneTime, costModel, type Measured, type Workload } from '../../infra/cli/cost-model';
import { memoryOutput } from '../../infra/cli/output';
import { DEFAULT_PRICES, requestPrice } from '../../infra/cli/prices';
import { runCli } from '../../infra/cli/main';
import { InvalidInputError } from '../../shared/errors';

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
  lookupRequests: 2,
  lookupBytes: 60_000,
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
    expect(r.months[11]?.hot).toBeCloseTo((r.months[0]?.hot ?? 0) * 12, 12);
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

  it('parts under 128 KB stay in Standard (S3 does not transition them by default)', () => {
    const small = costModel(workload, { ...measured, averagePartBytes: 10_000 }, DEFAULT_PRICES);
    expect(
      archiveOneTime(workload, { ...measured, averagePartBytes: 10_000 }, DEFAULT_PRICES).transitions,
    ).toBe(0);
    const big = costModel(workload, measured, DEFAULT_PRICES);
    expect(small.months[5]?.archive ?? 0).toBeGreaterThan(big.months[5]?.archive ?? 0);
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
      lookupRequests: 0,
      lookupBytes: 0,
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
    expect(text).toMatch(/^measured: .*scenario month-1500/m);
    expect(text).toMatch(/^month +hot \$\/mo +lifecycle \$\/mo +archive \$\/mo/m);
    expect(text).toMatch(/^archival (does NOT pay|pays) against keeping the objects hot/m);
    const json = memoryOutput();
    await costCommand(parseCostOptions(parseFlags(costSpec, ['--from-report', bench, '--json'])), json);
    const doc = json.json<Record<string, unknown>>();
    expect(doc).toEqual(
      expect.objectContaining({ months: expect.any(Array), pricesTaken: expect.any(String) }),
    );
    expect(doc).toHaveProperty('breakEvenVsHot');
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
