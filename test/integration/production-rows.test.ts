/**
 * Rows as the production indexer writes them — a Python service, not this library — through the
 * whole path on the embedded stack: seed (an independent client: plain PutItem / UpdateItem /
 * PutObject, infra/cli/python-rows.ts, or hand-written items here), the CDK-synthesized state
 * machine with the real handlers, the row's TTL (DynamoDB Local never expires rows, so the test
 * deletes them as TTL would), and lookup.
 */
import { gzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { buildStepDeps } from '../../functions/deps';
import { EXIT_FINDINGS } from '../../infra/cli/args';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import type { CliContext } from '../../infra/cli/context';
import { lookupCommand } from '../../infra/cli/lookup';
import { memoryOutput } from '../../infra/cli/output';
import { pythonFlushId, pythonIsoformat, pythonJsonDumps, type RowStyle } from '../../infra/cli/python-rows';
import { runCommand } from '../../infra/cli/run';
import { type SeededJob, seedCommand } from '../../infra/cli/seed';
import {
  runArchiverLocally,
  type StateMachineDefinition,
  stepHandlers,
  synthesizedDefinition,
} from '../../infra/local/runner';
import { monthIndexKey, parseMonthIndex, settledCandidates } from '../../shared/archive/format';
import type { RunReport } from '../../shared/archive/steps/types';
import { INLINE_ATTRIBUTES } from '../../shared/details/inline';
import { createJob, getJob, recordFlush } from '../../shared/jobs';
import { archivableRow } from '../../shared/jobs/row-json';
import { JobDetailsReader } from '../../shared/reader';
import { parseTimestamp } from '../../shared/time';
import { forgetWatermark } from '../support/archiver-fixtures';
import { freshCliContext, testS3 } from '../support/local';

jest.setTimeout(240_000);

const NOW = new Date('2026-09-20T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (days: number) => new Date(NOW.getTime() - days * DAY);
let definition: StateMachineDefinition;

const freshContext = (): Promise<CliContext> => freshCliContext(() => NOW);

beforeAll(() => {
  definition = synthesizedDefinition();
});

const run = async (ctx: CliContext, input: Record<string, unknown> = {}) => {
  // Rows here are written back-dated around a fixed NOW, between runs: each run plans from the
  // beginning (no live writer completes a job weeks in the past: docs/steady-state.md).
  await forgetWatermark(ctx);
  const io = memoryOutput();
  const r = await runCommand(
    ctx,
    { input: { olderThanDays: 30, graceHours: 0, now: NOW.toISOString(), ...input }, pollMs: 1, json: true },
    io,
  );
  return { ...r, io, json: io.json<Record<string, unknown>>() };
};

const rowOf = async (ctx: CliContext, shopId: string, jobId: string) =>
  (
    await ctx.ddb.send(
      new GetCommand({ TableName: ctx.table, Key: { pk: `SHOP#${shopId}`, sk: `JOB#${jobId}` } }),
    )
  ).Item as Record<string, unknown> | undefined;

/** What TTL does to a row, which DynamoDB Local never does by itself. */
const expire = (ctx: CliContext, shopId: string, jobId: string) =>
  ctx.ddb.send(
    new DeleteCommand({ TableName: ctx.table, Key: { pk: `SHOP#${shopId}`, sk: `JOB#${jobId}` } }),
  );

const isOld = (j: SeededJob) => parseTimestamp('completedAt', j.completedAt).ms < ago(30).getTime();

describe.each<RowStyle>(['python', 'library', 'pre-migration'])(
  '%s rows: archive → delete → TTL → lookup',
  (style) => {
    let ctx: CliContext;
    let old: SeededJob[];
    const before = new Map<
      string,
      { row: Record<string, unknown>; details: unknown; platformData: unknown }
    >();

    beforeAll(async () => {
      ctx = await freshContext();
      const seeded = await seedCommand(
        ctx,
        { shops: 3, jobsPerShop: 4, months: 3, seed: 5, concurrency: 4, json: true, rowStyle: style },
        memoryOutput(),
      );
      old = seeded.jobs.filter(isOld);
      expect(old.length).toBeGreaterThan(2);
      const reader = new JobDetailsReader(ctx.s3, ctx.bucket);
      for (const j of old) {
        const row = await rowOf(ctx, j.shopId, j.jobId);
        if (!row) throw new Error(`no row for ${j.jobId}`);
        // The design's dual-read on the live row: what a reader saw before archival.
        const look = await reader.lookup({ shopId: j.shopId, jobId: j.jobId, row });
        before.set(j.jobId, { row, details: look.details, platformData: look.platformData });
      }
    });

    it('the rows are written as that indexer writes them', () => {
      const row: Record<string, unknown> = before.get(old[0]?.jobId ?? '')?.row ?? {};
      if (style === 'library') {
        expect(row.completed_at).toMatch(/Z$/);
        expect(row.status_created_at).toBe(row.completed_at);
      } else {
        expect(row.completed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
        expect(row.status_created_at).toBe(row.started_at); // set at IN_PROGRESS, not at completion
        expect(row.tags).toBeInstanceOf(Set);
      }
      if (style === 'pre-migration') {
        expect(old[0]?.jobId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
        expect([...(row.completed_chunks as Set<string>)][0]).toMatch(/#part#\d+$/);
        expect(INLINE_ATTRIBUTES.some((a) => row[a] !== undefined)).toBe(true);
      }
    });

    it('every job completed before the cutoff is archived and its hot objects deleted', async () => {
      const r = await run(ctx);
      expect(r.exitCode).toBe(0);
      expect(r.json).toMatchObject({
        jobsPlanned: old.length,
        jobsArchived: old.length,
        jobsQuarantinedCount: 0,
        groupsFailedCount: 0,
      });
      for (const j of old) expect(await ctx.s3.send(listHot(ctx, j.jobId))).toMatchObject({ KeyCount: 0 });
    });

    it('after TTL removes the rows, lookup returns the same details and every row attribute', async () => {
      for (const j of old) await expire(ctx, j.shopId, j.jobId);
      for (const j of old) {
        const io = memoryOutput();
        const { result, exitCode } = await lookupCommand(
          ctx,
          { shopId: j.shopId, jobId: j.jobId, searchMonths: 24, json: false },
          io,
        );
        expect(exitCode).toBe(0);
        expect(result.row).toBeNull();
        const was = before.get(j.jobId);
        expect(result.lookup.details).toEqual(was?.details);
        expect(result.lookup.platformData).toEqual(was?.platformData);
        const { row: expected } = archivableRow(was?.row ?? {}, INLINE_ATTRIBUTES);
        expect(result.lookup.archivedRow).toEqual(expected);
        if (style !== 'library') {
          // Names and types the indexer chose, unknown to this package, survive.
          expect(result.lookup.archivedRow).toMatchObject({
            indexer_version: expect.any(String),
            sync_settings: { currency: 'USD', include_drafts: false, batch_size: 50 },
            tags: expect.arrayContaining(['catalog']),
            completed_at: was?.row.completed_at,
          });
          expect(io.stdout.join('\n')).toMatch(/^ {2}sync_settings: \{.*"currency":"USD".*\}$/m);
        }
        expect(result.lookup.archivedRow).not.toHaveProperty('completed_chunks');
      }
    });
  },
);

const listHot = (ctx: CliContext, jobId: string) =>
  new ListObjectsV2Command({ Bucket: ctx.bucket, Prefix: `job-details/${jobId}/` });

/** A Python-written row and one flush object, by hand (every field explicit). */
const putPythonJob = async (
  ctx: CliContext,
  shopId: string,
  jobId: string,
  over: Record<string, unknown>,
  opts: { details?: boolean } = {},
) => {
  await ctx.ddb.send(
    new PutCommand({
      TableName: ctx.table,
      Item: {
        pk: `SHOP#${shopId}`,
        sk: `JOB#${jobId}`,
        job_id: jobId,
        job_status: 'FAILED',
        created_at: pythonIsoformat(ago(200), 1),
        started_at: pythonIsoformat(ago(200), 2),
        status_created_at: pythonIsoformat(ago(200), 2),
        completed_at: pythonIsoformat(ago(60), 3),
        last_updated: pythonIsoformat(ago(60), 3),
        total_items: 3,
        processed_items: 2,
        failed_items: 1,
        skipped_items: 0,
        conflict_items: 0,
        completed_chunks: new Set(['p0']),
        job_type: 'full_sync',
        platform: 'shopify',
        ...over,
      },
    }),
  );
  if (opts.details !== false) {
    const payload = { chunk_ids: ['p0'], failed: { timeout: [`${jobId}-d1`] }, skipped: {}, conflict: {} };
    await ctx.s3.send(
      new PutObjectCommand({
        Bucket: ctx.bucket,
        Key: `job-details/${jobId}/${pythonFlushId(['p0'])}.json.gz`,
        Body: gzipSync(Buffer.from(pythonJsonDumps(payload))),
        ContentEncoding: 'gzip',
      }),
    );
  }
};

describe('eligibility, timestamps and loud failures', () => {
  let ctx: CliContext;
  beforeAll(async () => {
    ctx = await freshContext();
  });

  it('a job is due by completed_at: an old status_created_at does not make a recent job due', async () => {
    await putPythonJob(ctx, 'shop-e', 'recent', { completed_at: pythonIsoformat(ago(2), 7) });
    await putPythonJob(ctx, 'shop-e', 'old', {});
    const r = await run(ctx, { olderThanDays: 14 });
    expect(r.exitCode).toBe(0);
    expect(r.json).toMatchObject({ jobsPlanned: 1, jobsArchived: 1, jobsQuarantinedCount: 0 });
    expect(await ctx.s3.send(listHot(ctx, 'recent'))).toMatchObject({ KeyCount: 1 });
    expect(await ctx.s3.send(listHot(ctx, 'old'))).toMatchObject({ KeyCount: 0 });
    // Archived in the UTC month of its completion (isoformat +00:00 normalized).
    const month = parseTimestamp('t', pythonIsoformat(ago(60), 3)).month;
    const reader = new JobDetailsReader(ctx.s3, ctx.bucket);
    const read = await reader.readAllDetails({ shopId: 'shop-e', jobId: 'old', months: [month] });
    expect(read.provenance.source).toBe('archive');
    expect(read.details?.failed).toEqual({ timeout: ['old-d1'] });
  });

  it('unparsable, offset-less or missing completed_at: quarantined with the value quoted, data in place, exit 3', async () => {
    await putPythonJob(ctx, 'shop-q', 'garbage', { completed_at: 'yesterday' });
    await putPythonJob(ctx, 'shop-q', 'naive', { completed_at: '2026-06-01T10:00:00.123456' });
    await putPythonJob(ctx, 'shop-q', 'missing', { completed_at: undefined });
    const r = await run(ctx);
    expect(r.exitCode).toBe(3);
    const report = r.json as unknown as RunReport;
    const reasons = Object.fromEntries(report.jobsQuarantined.map((q) => [q.jobId, q.reason]));
    expect(reasons).toEqual({
      garbage: 'completed_at: "yesterday" is not an ISO-8601 timestamp with a UTC offset',
      naive: 'completed_at: "2026-06-01T10:00:00.123456" has no UTC offset (expected Z or ±HH:MM)',
      missing: expect.stringContaining('terminal row has no completed_at'),
    });
    expect(r.io.stderr.join('\n')).toMatch(/3 job\(s\) quarantined .*exit 3/);
    for (const id of ['garbage', 'naive', 'missing']) {
      expect(await ctx.s3.send(listHot(ctx, id))).toMatchObject({ KeyCount: 1 });
    }
    // audit lists them under their own heading, never as a month named after their garbage.
    const io = memoryOutput();
    const audit = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: false }, io);
    expect(Object.fromEntries(audit.undated.map((u) => [u.jobId, u.reason]))).toEqual({
      ...reasons,
      missing: 'terminal row has no completed_at',
    });
    expect(audit.groups.map((g) => g.month)).not.toContain('yesterd');
    expect(audit.groups.some((g) => g.shopId === 'shop-q')).toBe(false);
    expect(auditExitCode(audit)).toBe(EXIT_FINDINGS);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/undated terminal rows/);
    expect(text).toContain('shop-q job garbage (FAILED): completed_at: "yesterday" is not an ISO-8601');
  });

  it('failed groups: every other group is processed, the run ends FAILED (ArchiveRunIncomplete), exit 1; a dry run does not fail', async () => {
    const c = await freshContext();
    await putPythonJob(c, 'shop-ok', 'j1', {});
    await putPythonJob(c, 'shop-bad', 'j2', {});
    const month = parseTimestamp('t', pythonIsoformat(ago(60), 3)).month;
    await c.s3.send(
      new PutObjectCommand({ Bucket: c.bucket, Key: monthIndexKey('shop-bad', month), Body: 'not json' }),
    );

    const dry = await run(c, { dryRun: true });
    expect(dry.exitCode).toBe(0);
    expect(dry.json).toMatchObject({ dryRun: true, groupsFailedCount: 1 });
    expect(dry.json).not.toHaveProperty('incomplete');

    const r = await run(c);
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({ status: 'FAILED', error: 'ArchiveRunIncomplete' });
    const cause = JSON.parse(String(r.json.cause)) as { reportKey: string; groupsFailed: unknown[] };
    expect(cause.reportKey).toMatch(/^job-details-runs\/.+\/report\.json$/);
    expect(cause.groupsFailed).toEqual([
      expect.objectContaining({ shopId: 'shop-bad', month, error: 'CorruptObjectError' }),
    ]);
    // The report (read back from S3 by the CLI) shows the healthy group archived.
    expect(r.json.report).toMatchObject({ jobsArchived: 1, groupsOk: 1, groupsFailedCount: 1 });
    expect(await c.s3.send(listHot(c, 'j1'))).toMatchObject({ KeyCount: 0 });
    expect(await c.s3.send(listHot(c, 'j2'))).toMatchObject({ KeyCount: 1 });

    const text = memoryOutput();
    // Planned from the beginning again (the watermark would retry the failed group only once what it
    // left is collectable, 12 hours on).
    await forgetWatermark(c);
    await runCommand(
      c,
      { input: { olderThanDays: 30, graceHours: 0, now: NOW.toISOString() }, pollMs: 1, json: false },
      text,
    );
    expect(text.stdout.join('\n')).toMatch(
      /failed groups \(1\):\n {4}shop-bad \d{4}-\d{2}: CorruptObjectError/,
    );
    expect(text.stderr.join('\n')).toMatch(/execution FAILED: ArchiveRunIncomplete — 1 group\(s\) failed/);
  });

  it('the handlers log structured lines with the run and group, and Report publishes the run metrics', async () => {
    const c = await freshContext();
    await putPythonJob(c, 'shop-m', 'ok', {});
    await putPythonJob(c, 'shop-m', 'bad', { completed_at: 'soon' });
    // Wired as `jobarchive run` wires it, to read what the run's sink captured.
    const deps = buildStepDeps(c.cfg, { bucket: c.bucket, table: c.table });
    const r = await runArchiverLocally({
      definition,
      input: { olderThanDays: 30, graceHours: 0, now: NOW.toISOString() },
      handlers: (sink) => stepHandlers(() => deps, sink),
      bucket: c.bucket,
      mapS3: testS3,
    }).finally(() => deps.destroy());
    expect(r.status).toBe('SUCCEEDED');
    const runId = (r.output as RunReport).runId;
    const groupLines = r.logs.filter((l) => l.shopId === 'shop-m');
    expect(groupLines.length).toBe(1); // ArchiveBatch: one line per group of its batch
    for (const l of r.logs)
      expect(l).toMatchObject({ level: expect.any(String), message: expect.any(String), runId });
    expect(groupLines[0]).toMatchObject({
      service: expect.any(String),
      month: expect.stringMatching(/^\d{4}-\d{2}$/),
    });
    expect(r.metrics).toHaveLength(1);
    expect(r.metrics[0]).toMatchObject({ JobsQuarantined: 1, JobsArchived: 1, GroupsFailed: 0 });
    const aws = r.metrics[0]?._aws as
      | { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] }
      | undefined;
    const directive = aws?.CloudWatchMetrics[0];
    expect(directive).toMatchObject({ Namespace: 'JobDetailsArchive', Dimensions: [['service']] });
  });
});

describe('rows from before the migration', () => {
  let ctx: CliContext;
  beforeAll(async () => {
    ctx = await freshContext();
  });

  it('inline details are preferred, S3 objects merged in; archived together and read back after TTL', async () => {
    const jobId = '6f1c2a9e-3b7d-4c1e-9a2f-1b2c3d4e5f60';
    await putPythonJob(ctx, 'shop-l', jobId, {
      completed_chunks: new Set(['imports/a.jsonl#part#0', 'imports/a.jsonl#part#1']),
      failed_items_details: { timeout: new Set(['inline-1']) },
      skipped_items_details: [{ reason: 'unpublished', doc_id: 'inline-2' }],
      conflict_details: { version: [{ doc_id: 'inline-3', existing_version: 4 }] },
      platform_data: { indexer: { batch_size: 25 } },
    });
    const row = await rowOf(ctx, 'shop-l', jobId);
    const reader = new JobDetailsReader(ctx.s3, ctx.bucket);
    const live = await reader.readAllDetails({ shopId: 'shop-l', jobId, row: row ?? {} });
    expect(live.details).toEqual({
      chunk_ids: ['p0'],
      failed: { timeout: ['inline-1', `${jobId}-d1`] },
      skipped: { unpublished: ['inline-2'] },
      conflict: { version: [{ doc_id: 'inline-3', existing_version: 4 }] },
    });
    expect(live.provenance).toMatchObject({
      source: 'hot',
      inline: ['failed_items_details', 'skipped_items_details', 'conflict_details'],
    });
    const pd = await reader.readPlatformData({ shopId: 'shop-l', jobId, row: row ?? {} });
    expect(pd).toMatchObject({
      data: { indexer: { batch_size: 25 } },
      provenance: { source: 'row', requests: 0 },
    });

    expect((await run(ctx)).json).toMatchObject({ jobsArchived: 1, jobsQuarantinedCount: 0 });
    await expire(ctx, 'shop-l', jobId);
    const { result } = await lookupCommand(
      ctx,
      { shopId: 'shop-l', jobId, searchMonths: 24, json: true },
      memoryOutput(),
    );
    expect(result.lookup.details).toEqual(live.details);
    expect(result.lookup.platformData).toEqual({ indexer: { batch_size: 25 } });
    expect(result.lookup.detailsSource).toBe('archive');
    expect(result.lookup.archivedRow).not.toHaveProperty('failed_items_details');
    expect(result.lookup.archivedRow).toMatchObject({ job_id: jobId, job_status: 'FAILED' });
  });

  it('an inline attribute of a shape nobody documented quarantines the job, quoting the value', async () => {
    await putPythonJob(ctx, 'shop-l', 'odd', { failed_items_details: 'timeout: d1, d2' }, { details: false });
    const r = await run(ctx);
    expect(r.exitCode).toBe(3);
    expect((r.json as unknown as RunReport).jobsQuarantined).toEqual([
      {
        shopId: 'shop-l',
        jobId: 'odd',
        reason: expect.stringMatching(/row\.failed_items_details: .*"timeout: d1, d2"/),
      },
    ]);
    expect(await rowOf(ctx, 'shop-l', 'odd')).toBeDefined();
  });
});

it('a redriven job ends again with the right counters and is archived again as a retried job', async () => {
  const ctx = await freshContext();
  const shopId = 'shop-r';
  const deps = { ddb: ctx.ddb, table: ctx.table, detailsWriter: null };
  const { jobId } = await createJob(
    ctx.ddb,
    ctx.table,
    { shopId, jobType: 'full_sync', platform: 'shopify', totalItems: 4 },
    { now: ago(90) },
  );
  const job = { shopId, jobId, totalItems: 4 };
  await recordFlush(
    deps,
    job,
    { chunkIds: ['p0'], counts: { processed: 2, failed: 2, skipped: 0, conflict: 0 } },
    { now: ago(80) },
  );
  expect((await run(ctx)).json).toMatchObject({ jobsArchived: 1 });

  const redrive = { attempt: 1, failed: 2, conflict: 0, attribution: { reason: 'operator' } };
  await recordFlush(
    deps,
    { ...job, knownStatus: 'FAILED', redrive },
    { chunkIds: ['r1-p0'], counts: { processed: 2, failed: 0, skipped: 0, conflict: 0 } },
    { now: ago(45) },
  );
  const row = await getJob(ctx.ddb, ctx.table, shopId, jobId);
  expect(row).toMatchObject({
    job_status: 'COMPLETED',
    completed_at: ago(45).toISOString(),
    processed_items: 4,
    failed_items: 0,
    retry_count: 1,
  });

  expect((await run(ctx)).json).toMatchObject({ jobsArchived: 1 });
  const got = await ctx.s3.send(
    new GetObjectCommand({
      Bucket: ctx.bucket,
      Key: monthIndexKey(shopId, ago(45).toISOString().slice(0, 7)),
    }),
  );
  const index = parseMonthIndex((await got.Body?.transformToByteArray()) ?? new Uint8Array(), 'index');
  // Archived again, its hot copies deleted: the part settled, so the index names it through its block
  // directory and job filter, with no entry left for the job; the lookup below reads the completion.
  expect(index.jobs[jobId]).toBeUndefined();
  expect(settledCandidates(index, jobId).length).toBeGreaterThan(0);
  const { result } = await lookupCommand(
    ctx,
    { shopId, jobId, searchMonths: 24, json: true },
    memoryOutput(),
  );
  expect(result.lookup.archivals.map((a) => a.status)).toEqual(['FAILED', 'COMPLETED']);
  expect(result.lookup.archivals.at(-1)?.entry).toMatchObject({ completed_at: ago(45).toISOString() });
  expect(result.lookup.archivedRow).toMatchObject({
    retry_attribution: { reason: 'operator', first_retry_attempt: 1 },
  });
});
