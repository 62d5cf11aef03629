/**
 * `npm run bench:archive` stays out of `npm test` (minutes to hours); this proves the script runs end
 * to end on its smallest sizes (`--smoke`, its own embedded stack) and that its last line is the
 * documented JSON object. No figure is asserted here: targets live in the benchmark's output.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { measuredFrom } from '../../infra/cli/cost';
import { STEADY_YEAR_SETTINGS } from '../bench/archive/steady-year';

// The smoke run now also archives and searches a shop of 24 months (~30 s more on an idle machine).
jest.setTimeout(300_000);

const ROOT = resolve(__dirname, '../..');

test('bench:archive --smoke runs and ends with one JSON object of every documented figure', async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (done) => {
      const p = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), ['test/bench/archive/main.ts', '--smoke'], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => {
        stdout += String(d);
      });
      p.stderr.on('data', (d) => {
        stderr += String(d);
      });
      p.on('exit', (c) => done({ code: c, stdout, stderr }));
    },
  );
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
  const last = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
  expect(Object.keys(last)).toEqual(expect.arrayContaining(['scenarios', 'peakRssMb', 'codec']));
  const scenarios = last.scenarios as Record<string, unknown>[];
  expect(scenarios.map((s) => s.name)).toEqual(['month-12', 'seeded-20', 'fleet-8']);
  expect(last.daily).toEqual(
    expect.objectContaining({
      name: 'daily-3x4',
      // Three small shop-months of one month, packed into one shared part (never sliced by day).
      parts: 1,
      shopMonths: 3,
      hotObjectsLeft: 0,
      archivedDay: 14,
    }),
  );
  for (const s of scenarios) {
    for (const k of [
      'jobs',
      'hotObjects',
      'hotBytes',
      'archiveBytes',
      's3Requests',
      'taskInvocations',
      'wallSeconds',
      'floorSeconds',
      'lookupRequests',
      'lookupBytes',
    ]) {
      expect(typeof s[k]).toBe('number');
    }
    expect(s.s3RequestsByType).toEqual(expect.objectContaining({ GetObject: expect.any(Number) }));
  }
  expect(last.peakRssMb).toEqual({ '2MB': expect.any(Number) });
  // The oversize source is quarantined with its size in the reason, before it is read.
  expect(last.giantSource).toEqual({
    sourceMb: 2,
    storedMb: expect.any(Number),
    reason: expect.stringMatching(
      /^oversize object job-details\/.+: \d+ bytes, over the limit of \d+ \(JDA_MAX_SOURCE_MB\)$/,
    ),
    archiveRssMb: expect.any(Number),
  });
  expect(stdout).toMatch(/one 2\.0 MB source object .* quarantined before it is read/);
  expect(last.codec).toEqual(
    expect.objectContaining({ fflateMBps: expect.any(Number), zlibMBps: expect.any(Number) }),
  );
  expect(stdout).toMatch(/^Throughput and cost per scenario/m);
  // Find by document on a shop with 24 archived months: no miss, within the request bound.
  expect(last.search).toEqual(
    expect.objectContaining({
      months: 24,
      missed: 0,
      requestsOverBound: 0,
      falsePositiveBlocks: expect.any(Number),
    }),
  );
  expect(stdout).toMatch(/^Search by document: one shop, 24 archived months/m);
  // steady-year at its smoke size: three daily runs beside February's jobs — idle, January archived
  // on the 15th and its hot objects deleted by that run (no grace by default), idle.
  const steady = last.steadyYear as Record<string, unknown>;
  expect(steady).toEqual(
    expect.objectContaining({
      name: 'steady-year',
      runs: 3,
      hotObjectsLeftRowless: 0,
      jobsByStatus: expect.objectContaining({
        COMPLETED: expect.any(Number),
        FAILED: expect.any(Number),
        CONFLICT: expect.any(Number),
      }),
      bytesAtRest: expect.objectContaining({ 'STANDARD hot': expect.any(Number) }),
    }),
  );
  // The simulated lifecycle moves a part larger than the construct's default transitionMinimumSize
  // (Glacier IR, kept forever) once it is a day old — the last run's day — and leaves the others.
  const sizes = steady.partSizes as number[];
  const moved = sizes.filter((s) => s > STEADY_YEAR_SETTINGS.transitionMinBytes);
  expect(sizes.length).toBeGreaterThan(0);
  expect((steady.parts as { inGlacierIr: number }).inGlacierIr).toBe(moved.length);
  expect((steady.bytesAtRest as Record<string, number>)['GLACIER_IR parts']).toBe(
    moved.reduce((a, b) => a + b, 0),
  );
  const totals = steady.totals as Record<string, number>;
  expect(totals.jobsArchived).toBeGreaterThan(0);
  expect(totals.hotArchived).toBeGreaterThan(0);
  // Whatever is left hot belongs to jobs not yet eligible (February's).
  expect(steady.hotObjectsLeft).toBe(steady.hotObjectsLeftNotYetEligible);
  expect((steady.perRun as unknown[]).length).toBe(3);
  // What the cost model needs: CPU beside wall time (by step), DynamoDB requests, the at-rest $ by
  // prefix in its class; and `jobarchive cost` splits the active runs' work by what it scales with.
  expect(totals.cpuSeconds).toBeGreaterThan(0);
  expect(totals.dynamodbRequests).toBeGreaterThan(0);
  const active = (steady.perRun as Record<string, unknown>[]).filter((r) => Array.isArray(r.byKey));
  expect(active[0]?.steps).toEqual(
    expect.objectContaining({ 'archive-batch': expect.objectContaining({ cpuSeconds: expect.any(Number) }) }),
  );
  expect(steady.atRestUsdMonth).toEqual(
    expect.objectContaining({
      'STANDARD index': expect.any(Number),
      'parts all in DEEP_ARCHIVE': expect.any(Number),
    }),
  );
  const file = join(tmpdir(), `jda-smoke-steady-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(steady));
  const terms = measuredFrom(file).terms;
  expect(terms?.cpuSecondsPerHotObject).toBeGreaterThan(0);
  expect(terms?.perHotObject.GetObject).toBeGreaterThan(0);
  expect(stdout).toMatch(/^ {2}per archived hot object: S3 \d/m);
});
