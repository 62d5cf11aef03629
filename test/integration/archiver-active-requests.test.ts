import { randomBytes } from 'node:crypto';
import type { RequestCounts } from '../../shared/metrics';
import {
  archiverEnv,
  HOUR,
  inMonth,
  listKeys,
  type MachineRun,
  runMachine,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * What an active run costs in S3 requests, by API, on a fixed workload (issue 20; the table in
 * docs/steady-state.md, "Requests of an active run"): one shop-month with a part of its own and two
 * packed into the month's shared part, archived by one run (graceHours 1: the sources wait) and
 * deleted by the next, as the daily schedule does. Counts, not timing: any new request per run, per
 * batch or per shop-month shows here. The steps' requests (RunReport.requests) and the emulated
 * Distributed Map's (ItemReader GET, ResultWriter PUTs) are what S3 bills for the run.
 */
jest.setTimeout(180_000);

const s3Of = (r: MachineRun): Record<string, number> => {
  const all: Record<string, number> = {};
  for (const c of [r.report?.requests, r.run.mapRequests] as (RequestCounts | undefined)[]) {
    for (const [k, v] of Object.entries(c?.byType ?? {}))
      if (k.startsWith('s3.')) all[k.slice(3)] = (all[k.slice(3)] ?? 0) + v;
  }
  return all;
};

/** The run's DynamoDB requests by API (the steps' own: the Map emulation sends none). */
const ddbOf = (r: MachineRun): Record<string, number> =>
  Object.fromEntries(
    Object.entries(r.report?.requests?.byType ?? {})
      .filter(([k]) => k.startsWith('dynamodb.'))
      .map(([k, v]) => [k.slice(9), v]),
  );

const sum = (parts: Record<string, number>): number => Object.values(parts).reduce((a, b) => a + b, 0);

test('an archive run and its delete run: the S3 requests beyond one GET per hot object, by API', async () => {
  // Parts of a shop-month below 8 KB of hot bytes are packed; `own` has ~40 KB of platform data.
  const env = await archiverEnv({ packBelowKb: 8 });
  const jobs: SeededJob[] = [];
  for (const [shopId, n, big] of [
    ['own.myshopify.com', 2, true],
    ['tail-a.myshopify.com', 1, false],
    ['tail-b.myshopify.com', 2, false],
  ] as const) {
    for (let i = 0; i < n; i++)
      jobs.push(
        await seedTerminalJob(env, {
          shopId,
          completedAt: inMonth(2, 3 + i),
          platformData: big ? { blob: randomBytes(10_000).toString('hex') } : { shop: shopId },
        }),
      );
  }
  const hot = jobs.reduce((n, j) => n + j.keys.length, 0);

  // A scheduled run before the month came due: the watermark exists, as in steady state (a first run
  // ever also LISTs the index prefix once, to learn whether anything was archived before packing).
  const before = await runMachine(env, { input: { olderThanDays: 200 } });
  expect(before.report).toMatchObject({ jobsPlanned: 0, watermark: 'written' });

  const archive = await runMachine(env, { input: { graceHours: 1 }, keepWatermark: true });
  expect(archive.run.status).toBe('SUCCEEDED');
  expect(archive.report).toMatchObject({
    jobsArchived: jobs.length,
    objectsDeleted: 0,
    groupsFailedCount: 0,
  });
  expect(archive.pages[0]?.planned.map((g) => [g.shopId, g.pack ?? 'own'])).toEqual([
    ['own.myshopify.com', 'own'],
    ['tail-a.myshopify.com', true],
    ['tail-b.myshopify.com', true],
  ]);
  // Each request named (docs/steady-state.md, "Requests of an active run"): 1 own shop-month, 1
  // packed month of 2 shop-months, 3 shops, 1 batch, 1 page.
  expect(s3Of(archive)).toEqual({
    GetObject: sum({
      hot,
      // The watermark (docs/steady-state.md, erasure summary in docs/erasure.md): Plan's read, the
      // batch's, the re-check before each commit (own shop-month, packed month), Report's before its PUT.
      watermark: 1 + 1 + 1 + 1 + 1,
      itemReaderBatches: 1,
      batchJobsRange: 1,
      tallyResultWriterFiles: 2,
      reportPageResults: 1,
      ownIndex404: 1,
      ownPartVerify: 1,
      sharedIndex: 1,
      sharedPartVerify: 1,
      reportRetryBatches: 1, // the groups wait for the grace period: Report reads their jobs for the retry list
      reportRetryJobs: 1,
      packDecisions: 1, // own or shared, decided once per shop-month of a first-archived month
    }),
    ListObjectsV2: sum({ hotWalk: 1, ownLostIndexCheck: 1, tallyAttempts: 1, reportOwnErasureMarkers: 1 }),
    PutObject: sum({
      watermark: 1,
      planFiles: 2,
      resultWriter: 2,
      pageResults: 1,
      report: 1,
      attemptMarker: 1,
      ownIntentPartIndex: 3,
      sharedIntentPartIndex: 3,
      sharedIndexBeforeFirstIntent: 1, // a month's first packing: an empty shared.json, so pending GC may run
      packDecisions: 1,
    }),
    // The staging docs and the attempt marker, in one call.
    DeleteObjects: 1,
  });
  // Each archived job's row read once, by the archive step of its group (3 shop-months, 3 shops).
  expect(ddbOf(archive).BatchGetItem).toBe(3);
  // A group's result keeps its counts only (the worst-case state at BATCH_GROUPS_MAX); its requests,
  // counted in the figures above, reach the report through its batch's overhead.
  expect(archive.results).toHaveLength(3);
  expect(JSON.stringify(archive.results)).not.toContain('requests');

  env.advance(2 * HOUR);
  const del = await runMachine(env, { input: { graceHours: 1 }, keepWatermark: true });
  expect(del.run.status).toBe('SUCCEEDED');
  expect(del.report).toMatchObject({ jobsArchived: 0, objectsDeleted: hot, groupsFailedCount: 0 });
  for (const j of jobs) expect(await listKeys(env.s3, env.bucket, `job-details/${j.jobId}/`)).toEqual([]);
  // The delete run: the per-run files again (no retry reads: nothing waits); per own shop-month the
  // index GET, the GC LIST of its staging, the HEAD of its part (ETag as committed) and the index PUT
  // marking its entries deleted; the same for the packed month's shared index, staging and part; all
  // hot objects in one ETag-conditional DeleteObjects. The batch stages no part, so it writes no
  // attempt marker (nothing a killed attempt could leave to collect) and removes none.
  expect(s3Of(del)).toEqual({
    GetObject: sum({
      watermark: 1 + 1 + 1, // Plan, the batch, Report
      itemReaderBatches: 1,
      batchJobsRange: 1,
      tallyResultWriterFiles: 2,
      reportPageResults: 1,
      ownIndex: 1,
      sharedIndex: 1,
    }),
    HeadObject: sum({ ownPart: 1, sharedPart: 1 }),
    ListObjectsV2: sum({
      hotWalk: 1,
      ownStagingGc: 1,
      sharedStagingGc: 1,
      tallyAttempts: 1,
      reportOwnErasureMarkers: 1, // docs/erasure.md "Run scratch"
    }),
    PutObject: sum({
      watermark: 1,
      planFiles: 2,
      resultWriter: 2,
      pageResults: 1,
      report: 1,
      ownIndex: 1,
      sharedIndex: 1,
    }),
    DeleteObjects: 1,
  });
  // The jobs waiting for the grace period are planned from their retry entries (the completion the
  // archive run committed), not from their rows read again: no prefix changed, so no row is read.
  expect(ddbOf(del).BatchGetItem).toBeUndefined();
});

/** The S3 requests `client` sends from now on, as `API key` (a LIST's prefix, a DeleteObjects' first key). */
const traceKeys = (client: { middlewareStack: unknown }): string[] => {
  const seen: string[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: a pass-through middleware over any command
  (client.middlewareStack as any).add(
    // biome-ignore lint/suspicious/noExplicitAny: a pass-through middleware over any command
    (next: any, context: { commandName?: string }) => async (args: any) => {
      const input = args.input ?? {};
      const key = String(input.Key ?? input.Prefix ?? input.Delete?.Objects?.[0]?.Key ?? '');
      seen.push(`${(context.commandName ?? '?').replace(/Command$/, '')} ${key}`);
      return next(args);
    },
    { step: 'initialize' },
  );
  return seen;
};

test('a batch a shop-month: the shared staging listed once a page, an attempt marker only where a part is staged', async () => {
  // As above, each shop-month in a batch of its own (batchGroups 1): 3 batches on each run's page.
  const env = await archiverEnv({ packBelowKb: 8, batchGroups: 1 });
  const jobs: SeededJob[] = [];
  for (const [shopId, big] of [
    ['own.myshopify.com', true],
    ['tail-a.myshopify.com', false],
    ['tail-b.myshopify.com', false],
  ] as const) {
    jobs.push(
      await seedTerminalJob(env, {
        shopId,
        completedAt: inMonth(2, 3),
        platformData: big ? { blob: randomBytes(10_000).toString('hex') } : { shop: shopId },
      }),
    );
  }
  const hot = jobs.reduce((n, j) => n + j.keys.length, 0);
  await runMachine(env, { input: { olderThanDays: 200 } });
  const trace = traceKeys(env.s3);
  const archive = await runMachine(env, { input: { graceHours: 1 }, keepWatermark: true });
  expect(archive.report).toMatchObject({ jobsArchived: jobs.length, groupsFailedCount: 0 });
  expect(archive.pages[0]?.batches).toBe(3);
  const attempts = (api: string) => trace.filter((t) => t.startsWith(`${api} `) && t.includes('/attempts/'));
  // Every batch of the archive run stages a part (an own one, or a shared one each): its marker before
  // its intent, gone with its staging in the batch's one DeleteObjects (never a DELETE of its own).
  expect(attempts('PutObject')).toHaveLength(3);
  expect(attempts('DeleteObject')).toEqual([]);
  expect(s3Of(archive).DeleteObjects).toBe(3);
  // The first intent of the run comes after a marker.
  const firstIntent = trace.findIndex(
    (t) => t.startsWith('PutObject job-details-index/') && t.includes('/pending/'),
  );
  const firstMarker = trace.findIndex((t) => t.startsWith('PutObject') && t.includes('/attempts/'));
  expect(firstMarker).toBeGreaterThan(-1);
  expect(firstMarker).toBeLessThan(firstIntent);

  trace.length = 0;
  env.advance(2 * HOUR);
  const del = await runMachine(env, { input: { graceHours: 1 }, keepWatermark: true });
  expect(del.report).toMatchObject({ jobsArchived: 0, objectsDeleted: hot, groupsFailedCount: 0 });
  expect(del.pages[0]?.batches).toBe(3);
  // Every batch loads the month's shared index (its shop-month may be in it: 'if-packed'); only the
  // page's first such batch lists the month's shared staging (PlannedBatch.collectShared): 1 LIST, not
  // one a batch. The own shop-month's staging is listed once, by its own group.
  expect(trace.filter((t) => t.startsWith('ListObjectsV2 job-details-index/_shared/'))).toHaveLength(1);
  expect(s3Of(del).ListObjectsV2).toBe(
    sum({ hotWalk: 1, ownStagingGc: 1, sharedStagingGc: 1, tallyAttempts: 1, reportOwnErasureMarkers: 1 }),
  );
  // No batch stages anything: no attempt marker written or removed.
  expect(attempts('PutObject')).toEqual([]);
  expect(attempts('DeleteObject')).toEqual([]);
  expect(s3Of(del).DeleteObject).toBeUndefined();
});
