import { HeadObjectCommand } from '@aws-sdk/client-s3';
import {
  COLD_PREFIX,
  HOT_PREFIX,
  INDEX_PREFIX,
  type JobRecord,
  type PartRecord,
  type PlatformDataRecord,
} from '../../shared/archive/format';
import type { RunReport } from '../../shared/archive/steps/types';
import { jobPrefix } from '../../shared/details';
import { createJob, recordFlush } from '../../shared/jobs';
import {
  daysAgo,
  forgetWatermark,
  getBytes,
  hotState,
  inMonth,
  listKeys,
  memberAt,
  monthOfDate,
  partLines,
  readIndex,
  runLocal as runMachineLocally,
  type SeededJob,
  seedTerminalJob,
  setUpMachineRuns,
  sha256,
} from '../support/archiver-fixtures';

/**
 * The whole archiver as deployed: the CDK-synthesized state machine run by the local runner over the
 * real handlers (their factories over `env.machineDeps`, wired as `jobarchive run` wires them), against
 * DynamoDB Local + s3rver.
 */
jest.setTimeout(240_000);

const runs = setUpMachineRuns();

const runLocal = async (
  input: Record<string, unknown>,
  expectInvocations?: Record<string, number>,
): Promise<RunReport> => {
  const r = await runMachineLocally(runs.env, { input, definition: runs.definition });
  expect(r.unexpectedErrors).toEqual([]);
  expect(r.handlerErrors).toEqual([]);
  expect(r.status).toBe('SUCCEEDED');
  // Proof that every Task really ran its handler (a Catch cannot turn a crash into this count).
  if (expectInvocations) expect(r.taskInvocations).toEqual(expectInvocations);
  return r.output as RunReport;
};

const groupKey = (j: SeededJob) => `${j.shopId} ${j.completedAt.slice(0, 7)}`;

test('a full run archives every old terminal job exactly once, verifiably, and deletes its hot objects', async () => {
  const m2 = inMonth(2, 10);
  const m3 = inMonth(3, 12);
  const old: SeededJob[] = [
    await seedTerminalJob(runs.env, { shopId: 'shop-a', completedAt: m2, status: 'FAILED', flushes: 3 }),
    await seedTerminalJob(runs.env, { shopId: 'shop-a', completedAt: inMonth(2, 11), status: 'CONFLICT' }),
    await seedTerminalJob(runs.env, {
      shopId: 'shop-a',
      completedAt: m3,
      status: 'COMPLETED',
      platformData: { indexer: { v: 2 } },
    }),
    await seedTerminalJob(runs.env, { shopId: 'shop-b', completedAt: inMonth(2, 3), status: 'FAILED' }),
    // No hot objects at all: it still gets a record documenting the job.
    await seedTerminalJob(runs.env, {
      shopId: 'shop-b',
      completedAt: inMonth(2, 4),
      status: 'COMPLETED',
      platformData: null,
      withDetails: false,
    }),
    await seedTerminalJob(runs.env, {
      shopId: 'shop-c.myshopify.com',
      completedAt: inMonth(3, 20),
      status: 'FAILED',
      flushes: 1,
    }),
  ];
  // Not eligible: completed yesterday, and one still running.
  const recent = await seedTerminalJob(runs.env, { shopId: 'shop-a', completedAt: daysAgo(1) });
  const running = await createJob(
    runs.env.ddb,
    runs.env.table,
    { shopId: 'shop-a', jobType: 'full_sync', platform: 'shopify', totalItems: 100 },
    { now: inMonth(3, 1) },
  );
  const runningFlush = await recordFlush(
    { ddb: runs.env.ddb, table: runs.env.table, detailsWriter: runs.env.store },
    { shopId: 'shop-a', jobId: running.jobId, totalItems: 100 },
    {
      chunkIds: ['p0'],
      counts: { processed: 1, failed: 1, skipped: 0, conflict: 0 },
      details: { failed: { x: ['d'] } },
    },
    { now: inMonth(3, 1) },
  );

  const before = new Map<string, Awaited<ReturnType<typeof hotState>>>();
  const hotBytes = new Map<string, number>();
  for (const j of old) {
    before.set(j.jobId, await hotState(runs.env, j.jobId));
    for (const k of j.keys) hotBytes.set(k, (await getBytes(runs.env.s3, runs.env.bucket, k)).length);
  }

  const out = await runLocal(
    { graceHours: 0 },
    // The four groups go in one batch: one child execution, one invocation.
    { Plan: 1, ArchiveBatch: 1, Tally: 1, Report: 1, Forget: 0, Redact: 0, RedactPending: 0 },
  );

  const groups = new Set(old.map(groupKey));
  expect(groups.size).toBe(4);
  const hotKeys = old.flatMap((j) => j.keys);
  expect(out).toMatchObject({
    dryRun: false,
    jobsPlanned: old.length,
    jobsArchived: old.length,
    jobsSkipped: 0,
    jobsQuarantined: [],
    jobsQuarantinedCount: 0,
    partsWritten: 4,
    bytesIn: [...hotBytes.values()].reduce((a, b) => a + b, 0),
    objectsDeleted: hotKeys.length,
    objectsKept: 0,
    deleteErrors: 0,
    jobsDeleted: old.length,
    groupsOk: 4,
    groupsFailed: [],
    groupsFailedCount: 0,
    pages: 1,
  });
  // Every request the handlers' clients sent is attributed to exactly one step and summed once.
  expect(out.requests).toEqual(runs.env.machineDeps.meter.total);
  expect(out.requests.dynamodb).toBe(3 + 4); // a Query per terminal status + a BatchGetItem per group
  // The stored report is the same run.
  expect(out.reportKey).toBe(`job-details-runs/${out.runId}/report.json`);
  const stored = JSON.parse(
    (await getBytes(runs.env.s3, runs.env.bucket, out.reportKey ?? '')).toString('utf8'),
  );
  expect(stored).toMatchObject({ runId: out.runId, jobsArchived: old.length, partsWritten: 4 });

  let bytesOut = 0;
  for (const g of groups) {
    const [shopId, month] = g.split(' ') as [string, string];
    const jobs = old.filter((j) => groupKey(j) === g);
    const index = await readIndex(runs.env, shopId, month);
    expect(index?.parts).toHaveLength(1);
    const part = index?.parts[0];
    if (!index || !part) throw new Error('no index');
    bytesOut += part.size;
    expect(part.job_count).toBe(jobs.length);
    expect(Object.keys(index.jobs).sort()).toEqual(jobs.map((j) => j.jobId).sort());

    // The part as a whole: `gzip -dc` gives the header, then platform data before the jobs using it.
    const whole = await getBytes(runs.env.s3, runs.env.bucket, part.key);
    expect(whole.length).toBe(part.size); // index@3 names a part by name + size (verify checked its bytes; parts are never rewritten)
    expect(part.sha256).toBeUndefined();
    const lines = await partLines(runs.env, part.key);
    expect(lines[0]).toMatchObject({
      type: 'part',
      shop_id: shopId,
      month,
      run_id: out.runId,
    });
    expect(lines[0]).not.toHaveProperty('part'); // part@4: the key names it
    const records = lines.filter((r): r is JobRecord => r.type === 'job');
    expect(records.map((r) => r.job_id)).toEqual(jobs.map((j) => j.jobId).sort());

    for (const j of jobs) {
      const entries = index.jobs[j.jobId] ?? [];
      expect(entries).toHaveLength(1); // exactly once
      const e = entries[0];
      if (!e) throw new Error('no entry');
      // The entry keeps no status (the record says it: checked below).
      expect(e).toMatchObject({ part: part.name, completed_at: j.completedAt });
      expect(e).not.toHaveProperty('status');
      expect(e.deleted_at).not.toBeNull();
      expect(e.sources).toEqual([]); // deleted: the manifest stays in the part record only
      // Each member alone, by its range.
      const member = await memberAt(runs.env, part.key, e, { type: 'job', jobId: j.jobId });
      expect(e.sha256).toBeUndefined(); // index@2 keeps no record digest (the block's CRC-32 guards it)
      const rec = member.record as JobRecord;
      expect(rec).toMatchObject({ type: 'job', job_id: j.jobId, shop_id: shopId });
      expect(rec.job.status).toBe(j.status);
      const hot = before.get(j.jobId);
      expect(rec.details).toEqual(hot?.details);
      expect(rec.sources.map((s) => [s.key, s.size])).toEqual(j.keys.map((k) => [k, hotBytes.get(k)]));
      if (hot?.platformData) {
        expect(e.platform_data).not.toBeNull();
        const pd = await memberAt(runs.env, part.key, e.platform_data ?? { offset: 0, length: 0 }, {
          type: 'platform_data',
          ref: rec.platform_data_ref ?? '',
        });
        expect((pd.record as PlatformDataRecord).data).toEqual(hot.platformData);
        expect(rec.platform_data_ref).toBe((pd.record as PlatformDataRecord).ref);
      } else {
        expect(e.platform_data).toBeNull();
        expect(rec.platform_data_ref).toBeNull();
      }
      // The hot prefix is gone.
      expect(await listKeys(runs.env.s3, runs.env.bucket, jobPrefix(j.jobId))).toEqual([]);
    }
  }
  expect(out.bytesOut).toBe(bytesOut);

  // Untouched: the recent job, the running job; and no staging docs are left.
  expect(await listKeys(runs.env.s3, runs.env.bucket, jobPrefix(recent.jobId))).toEqual(recent.keys);
  expect(await listKeys(runs.env.s3, runs.env.bucket, jobPrefix(running.jobId))).toEqual([
    runningFlush.detailsKey,
  ]);
  const index = await listKeys(runs.env.s3, runs.env.bucket, INDEX_PREFIX);
  expect(index.filter((k) => k.includes('/pending/'))).toEqual([]);

  // ----- a second run after new jobs appear: a NEW part; the first part's bytes are untouched -----
  const first = await readIndex(runs.env, 'shop-a', monthOfDate(m2));
  const firstPart = first?.parts[0];
  if (!firstPart) throw new Error('no first part');
  const firstBytes = await getBytes(runs.env.s3, runs.env.bucket, firstPart.key);
  const late = await seedTerminalJob(runs.env, {
    shopId: 'shop-a',
    completedAt: inMonth(2, 20),
    status: 'FAILED',
  });
  const lateHot = await hotState(runs.env, late.jobId);
  // A completion two months back, written now, is below the watermark's lateness window (no live
  // writer does that): this run plans from the beginning, re-planning the archived jobs too.
  await forgetWatermark(runs.env);

  const total = runs.env.machineDeps.meter.total;
  const counted = { ...total, byType: { ...total.byType } };
  const second = await runLocal({ graceHours: 0 });
  const now = runs.env.machineDeps.meter.total;
  const byType = Object.fromEntries(
    Object.entries(now.byType ?? {})
      .map(([k, n]) => [k, n - (counted.byType[k] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
  expect(second.requests).toEqual({
    s3: now.s3 - counted.s3,
    dynamodb: now.dynamodb - counted.dynamodb,
    byType,
  });
  expect(second).toMatchObject({
    jobsPlanned: old.length + 1,
    jobsArchived: 1,
    jobsSkipped: old.length, // committed with the same completed_at
    partsWritten: 1,
    objectsDeleted: late.keys.length,
    groupsOk: 4,
  });
  const after = await readIndex(runs.env, 'shop-a', monthOfDate(m2));
  expect(after?.parts.map((p) => p.name)).toEqual([firstPart.name, expect.any(String)]);
  expect(after?.parts[0]).toEqual(firstPart);
  const head = await runs.env.s3.send(new HeadObjectCommand({ Bucket: runs.env.bucket, Key: firstPart.key }));
  expect(head.ContentLength).toBe(firstPart.size); // index@3 keeps no ETag: the part is written once
  expect(sha256(await getBytes(runs.env.s3, runs.env.bucket, firstPart.key))).toBe(sha256(firstBytes));
  for (const j of old.filter((o) => groupKey(o) === `shop-a ${monthOfDate(m2)}`)) {
    expect(after?.jobs[j.jobId]).toEqual(first?.jobs[j.jobId]);
  }
  const newPart = after?.parts[1];
  if (!newPart) throw new Error('no second part');
  const newRecords = (await partLines(runs.env, newPart.key)).filter((r: PartRecord) => r.type === 'job');
  expect(newRecords.map((r) => (r as JobRecord).job_id)).toEqual([late.jobId]);
  const lateEntry = after?.jobs[late.jobId]?.[0];
  if (!lateEntry) throw new Error('no entry');
  expect(
    (
      (await memberAt(runs.env, newPart.key, lateEntry, { type: 'job', jobId: late.jobId }))
        .record as JobRecord
    ).details,
  ).toEqual(lateHot.details);
  // Exactly one part per group and run: groups with nothing new got none.
  expect((await listKeys(runs.env.s3, runs.env.bucket, COLD_PREFIX)).length).toBe(5);
  expect((await listKeys(runs.env.s3, runs.env.bucket, HOT_PREFIX)).sort()).toEqual(
    [...recent.keys, runningFlush.detailsKey].sort(),
  );
});

test('a dry run through the state machine writes nothing but its own run scratch', async () => {
  await seedTerminalJob(runs.env, { shopId: 'shop-d', completedAt: inMonth(2, 5) });
  const outside = async () =>
    (await listKeys(runs.env.s3, runs.env.bucket, '')).filter((k) => !k.startsWith('job-details-runs/'));
  const snapshot = await outside();
  const etags = await Promise.all(
    snapshot.map(
      async (k) => (await runs.env.s3.send(new HeadObjectCommand({ Bucket: runs.env.bucket, Key: k }))).ETag,
    ),
  );

  const out = await runLocal({ graceHours: 0, dryRun: true });
  expect(out).toMatchObject({ dryRun: true, jobsArchived: 1, partsWritten: 0, groupsFailed: [] });
  expect(await outside()).toEqual(snapshot);
  const etagsAfter = await Promise.all(
    snapshot.map(
      async (k) => (await runs.env.s3.send(new HeadObjectCommand({ Bucket: runs.env.bucket, Key: k }))).ETag,
    ),
  );
  expect(etagsAfter).toEqual(etags);
});
