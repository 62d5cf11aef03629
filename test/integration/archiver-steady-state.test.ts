import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { auditCommand } from '../../infra/cli/audit';
import { memoryOutput } from '../../infra/cli/output';
import { type JobRecord, WATERMARK_KEY } from '../../shared/archive/format';
import { ABANDONED_AFTER_MS } from '../../shared/archive/steps/archive/pending-gc';
import type { RunReport } from '../../shared/archive/steps/types';
import { chunkIds } from '../../shared/ids';
import { getJob, recordFlush } from '../../shared/jobs';
import { JobDetailsReader } from '../../shared/reader';
import {
  cliContextFor,
  DAY,
  getBytes,
  HOUR,
  hotListsDuring,
  hotState,
  listKeys,
  memberAt,
  readIndex,
  runLocal,
  type SeededJob,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * A year of scheduled runs is mostly idle runs: the plan watermark (docs/steady-state.md) makes a run
 * plan only what is new since the last one, through the synthesized state machine on the local stack.
 * Every run here uses `olderThanDays` to move its cutoff (a run's `now` may not be in the future).
 */
jest.setTimeout(240_000);

const runs = setUpMachineRuns();

const run = async (input: Record<string, unknown>) => {
  const r = await runLocal(runs.env, {
    input: { graceHours: 0, wholeMonths: false, ...input },
    definition: runs.definition,
  });
  expect(r.unexpectedErrors).toEqual([]);
  expect(r.handlerErrors).toEqual([]);
  expect(r.status).toBe('SUCCEEDED');
  return { report: r.output as RunReport, invocations: r.taskInvocations };
};

const watermark = async () =>
  JSON.parse((await getBytes(runs.env.s3, runs.env.bucket, WATERMARK_KEY)).toString('utf8')) as {
    cutoff: string;
    keys: Record<string, string>;
    retry: Array<{ shopId: string; jobId: string; notBefore?: string; revisit?: true }>;
  };

const ago = (days: number) => new Date(Date.now() - days * DAY);

test('an idle run plans nothing: Plan and Report only, a Query page per status, at most 8 S3 requests', async () => {
  const jobs: SeededJob[] = [];
  for (const [shopId, days] of [
    ['idle-a', 70],
    ['idle-a', 75],
    ['idle-b', 80],
  ] as const) {
    jobs.push(await seedTerminalJob(runs.env, { shopId, completedAt: ago(days) }));
  }
  // Not due: completed yesterday.
  await seedTerminalJob(runs.env, { shopId: 'idle-a', completedAt: ago(1) });

  // Whole months (the default): the cutoff stays put until the next month comes due.
  const first = await run({ olderThanDays: 30, wholeMonths: true });
  expect(first.report).toMatchObject({ jobsArchived: 3, groupsFailedCount: 0, watermark: 'written' });

  const idle = await run({ olderThanDays: 30, wholeMonths: true });
  expect(idle.invocations).toEqual({
    Plan: 1,
    ArchiveBatch: 0,
    Tally: 0,
    Report: 1,
    Forget: 0,
    Redact: 0,
    RedactPending: 0,
  });
  expect(idle.report).toMatchObject({
    jobsPlanned: 0,
    jobsArchived: 0,
    pages: 1,
    watermark: 'unchanged',
    reportKey: null,
  });
  // GET watermark (its erasure summary says there is no forgotten shop or open request: nothing is
  // listed, docs/erasure.md), and nothing written: the page had nothing, so it has no results
  // document, and a run with no scratch files no report.json (its output is the whole report).
  expect(idle.report.requests.byType).toEqual({
    's3.GetObject': 1,
    'dynamodb.Query': 3,
  });
  expect(await listKeys(runs.env.s3, runs.env.bucket, `job-details-runs/${idle.report.runId}/`)).toEqual([]);
  expect(idle.report.requests.s3).toBeLessThanOrEqual(8);
  expect(idle.report.requests.dynamodb).toBe(3);
});

test('late rows are still archived: a redriven job completing again and a Python row keyed at its IN_PROGRESS time', async () => {
  // Due at the first run (cutoff now − 10 days).
  const archived = await seedTerminalJob(runs.env, { shopId: 'late-a', completedAt: ago(15) });
  // Due at the first run and keyed inside the next run's lateness window: planned once only.
  const nearCutoff = await seedTerminalJob(runs.env, { shopId: 'late-a', completedAt: ago(10.2) });
  const first = await run({ olderThanDays: 10 });
  expect(first.report).toMatchObject({ jobsArchived: 2 });
  const w = await watermark();
  expect(Object.values(w.keys).every((k) => k > w.cutoff)).toBe(true);

  // The archived job is redriven and completes again (a new completed_at = status_created_at).
  const row = await getJob(runs.env.ddb, runs.env.table, archived.shopId, archived.jobId, {
    consistentRead: true,
  });
  if (!row) throw new Error('no row');
  const redoneAt = ago(9.5);
  const redo = await recordFlush(
    { ddb: runs.env.ddb, table: runs.env.table, detailsWriter: runs.env.store },
    {
      shopId: archived.shopId,
      jobId: archived.jobId,
      totalItems: row.total_items,
      knownStatus: 'FAILED',
      redrive: { attempt: 1, failed: row.failed_items, conflict: row.conflict_items },
    },
    {
      chunkIds: [chunkIds.redrive(1, 'p0')],
      counts: { processed: row.failed_items, failed: 0, skipped: 0, conflict: 0 },
      details: { skipped: { redone: ['doc-r'] } },
    },
    { now: redoneAt },
  );
  expect(redo.applied).toBe(true);
  const again = await getJob(runs.env.ddb, runs.env.table, archived.shopId, archived.jobId, {
    consistentRead: true,
  });
  expect(again).toMatchObject({ job_status: 'COMPLETED', completed_at: redoneAt.toISOString() });

  // A Python row that turned terminal after the first run: its GSI key is its IN_PROGRESS time, below
  // the watermark (within the lateness window); completed after the first run's cutoff.
  const pyCompleted = ago(9.8);
  await runs.env.ddb.send(
    new PutCommand({
      TableName: runs.env.table,
      Item: {
        pk: 'SHOP#late-py',
        sk: 'JOB#py-late-1',
        job_id: 'py-late-1',
        job_status: 'FAILED',
        status_created_at: ago(10.6).toISOString().replace('Z', '+00:00'),
        created_at: ago(10.7).toISOString(),
        started_at: ago(10.6).toISOString(),
        completed_at: pyCompleted.toISOString().replace('Z', '+00:00'),
        total_items: 1,
        processed_items: 0,
        failed_items: 1,
        skipped_items: 0,
        conflict_items: 0,
        job_type: 'full_sync',
        platform: 'shopify',
      },
    }),
  );
  const pyKey = 'job-details/py-late-1/platform-data.json';
  await runs.env.s3.send(
    new PutObjectCommand({ Bucket: runs.env.bucket, Key: pyKey, Body: '{"indexer":{"v":1}}' }),
  );

  const second = await run({ olderThanDays: 9 });
  // The redriven job and the Python row; not `nearCutoff` again.
  expect(second.report).toMatchObject({ jobsPlanned: 2, jobsArchived: 2, jobsQuarantinedCount: 0 });
  const redoneIndex = await readIndex(runs.env, archived.shopId, redoneAt.toISOString().slice(0, 7));
  expect(redoneIndex?.jobs[archived.jobId]?.map((e) => e.completed_at)).toContain(redoneAt.toISOString());
  const pyIndex = await readIndex(runs.env, 'late-py', pyCompleted.toISOString().slice(0, 7));
  expect(pyIndex?.jobs['py-late-1']).toHaveLength(1);
  expect(nearCutoff.jobId).toBeDefined();
});

test('a failed group goes to the retry list and the next run archives it by key, without re-planning the rest', async () => {
  const ok = await seedTerminalJob(runs.env, { shopId: 'retry-ok', completedAt: ago(40) });
  const bad = await seedTerminalJob(runs.env, { shopId: 'retry-bad', completedAt: ago(40) });
  // The bad group's month index is not an index: its commit fails, the group fails, the run is incomplete.
  const month = bad.completedAt.slice(0, 7);
  const indexKey = `job-details-index/retry-bad/${month}/index.json`;
  await runs.env.s3.send(new PutObjectCommand({ Bucket: runs.env.bucket, Key: indexKey, Body: 'not json' }));
  const failed = await runLocal(runs.env, {
    input: { graceHours: 0, wholeMonths: false, olderThanDays: 30 },
    definition: runs.definition,
  });
  expect(failed.status).toBe('FAILED');
  const w = await watermark();
  // Retried by the next run, and once more when what the failed attempt left is collectable.
  expect(w.retry).toEqual([{ shopId: 'retry-bad', jobId: bad.jobId, revisit: true }]);

  await runs.env.s3.send(new DeleteObjectCommand({ Bucket: runs.env.bucket, Key: indexKey }));
  const next = await run({ olderThanDays: 30 });
  expect(next.report).toMatchObject({
    jobsPlanned: 1,
    jobsArchived: 1,
    groupsFailedCount: 0,
    watermark: 'written',
  });
  expect((await readIndex(runs.env, 'retry-bad', month))?.jobs[bad.jobId]).toHaveLength(1);
  const followUp = (await watermark()).retry;
  expect(followUp).toEqual([{ shopId: 'retry-bad', jobId: bad.jobId, notBefore: expect.any(String) }]);
  expect(Date.parse(followUp[0]?.notBefore ?? '') - Date.now()).toBeGreaterThan(ABANDONED_AFTER_MS - 60_000);

  // Too early: carried over. After it: planned (already committed: skipped), and the list is empty.
  expect((await run({ olderThanDays: 30 })).report).toMatchObject({ jobsPlanned: 0 });
  runs.env.advance(ABANDONED_AFTER_MS + HOUR);
  const last = await run({ olderThanDays: 30 }).finally(() => runs.env.advance(-(ABANDONED_AFTER_MS + HOUR)));
  expect(last.report).toMatchObject({ jobsPlanned: 1, jobsArchived: 0, jobsSkipped: 1 });
  expect((await watermark()).retry).toEqual([]);
  expect(ok.jobId).toBeDefined();
});

test('orphan sweep: hot objects whose row expired before archival are archived with row null, once older than jobTtlDays', async () => {
  const job = await seedTerminalJob(runs.env, { shopId: 'orphan-shop', completedAt: ago(3) });
  const before = await hotState(runs.env, job.jobId);
  // DynamoDB Local never deletes by TTL: the row goes as TTL would.
  await runs.env.ddb.send(
    new DeleteCommand({ TableName: runs.env.table, Key: { pk: 'SHOP#orphan-shop', sk: `JOB#${job.jobId}` } }),
  );
  const audit = () =>
    auditCommand(cliContextFor(runs.env), { maxHeads: 100, concurrency: 4, json: true }, memoryOutput());
  expect((await audit()).orphans).toEqual([
    expect.objectContaining({ jobId: job.jobId, shopId: 'orphan-shop', objects: job.keys.length }),
  ]);

  // Its objects are younger than jobTtlDays (90): a row may still be on its way. The sweep leaves them.
  const young = await run({ olderThanDays: 30 });
  expect(young.report).toMatchObject({ orphansPlanned: 0 });
  expect(await listKeys(runs.env.s3, runs.env.bucket, `job-details/${job.jobId}/`)).toEqual(job.keys);

  // 91 days on (the handlers' clock), the next sweep is due and the objects are old enough.
  runs.env.advance(91 * DAY);
  const swept = await run({ olderThanDays: 30 }).finally(() => runs.env.advance(-91 * DAY));
  expect(swept.report).toMatchObject({
    orphansPlanned: 1,
    jobsArchived: 1,
    objectsDeleted: job.keys.length,
    groupsFailedCount: 0,
  });
  expect(await listKeys(runs.env.s3, runs.env.bucket, `job-details/${job.jobId}/`)).toEqual([]);
  expect((await audit()).orphans).toEqual([]);

  // The record: row null (expired before archival), status ROW_EXPIRED, completed_at = its newest object.
  const month = new Date().toISOString().slice(0, 7);
  const index = await readIndex(runs.env, 'orphan-shop', month);
  const entry = index?.jobs[job.jobId]?.[0];
  const part = index?.parts[0];
  if (!entry || !part) throw new Error('orphan not indexed');
  const record = (await memberAt(runs.env, part.key, entry, { type: 'job', jobId: job.jobId }))
    .record as JobRecord;
  expect(record.row).toBeNull();
  expect(record.job.status).toBe('ROW_EXPIRED');
  // Read back through the reader, as it was hot.
  const reader = new JobDetailsReader(runs.env.s3, runs.env.bucket);
  const read = await reader.readAllDetails({
    shopId: 'orphan-shop',
    jobId: job.jobId,
    completedAt: entry.completed_at,
  });
  expect(read.provenance.source).toBe('archive');
  expect(read.details).toEqual(before.details);
});

test('listing beside neighbours: one walk for the page, at most 0.02 LIST per archived hot object', async () => {
  // Due jobs are a fifth of the hot prefix; the rest completed yesterday (random ids interleave them).
  const due: SeededJob[] = [];
  for (let i = 0; i < 25; i++) {
    due.push(await seedTerminalJob(runs.env, { shopId: `nb-${i % 10}`, completedAt: ago(70 + (i % 5)) }));
  }
  for (let i = 0; i < 100; i++)
    await seedTerminalJob(runs.env, { shopId: `nb-${i % 10}`, completedAt: ago(1) });
  const hotObjects = due.reduce((n, j) => n + j.keys.length, 0);

  const { value: out, hotLists } = await hotListsDuring(runs.env, () =>
    run({ olderThanDays: 30, wholeMonths: true }),
  );
  expect(out.report).toMatchObject({
    jobsArchived: due.length,
    objectsDeleted: hotObjects,
    groupsFailedCount: 0,
  });
  // One walk for the page (here the orphan sweep's, which is the page's listing); the batches list nothing.
  expect(hotLists).toHaveLength(1);
  expect(hotLists.length / hotObjects).toBeLessThanOrEqual(0.02);
});
