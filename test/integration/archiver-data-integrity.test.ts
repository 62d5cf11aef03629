import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { auditCommand } from '../../infra/cli/audit';
import { lookupCommand } from '../../infra/cli/lookup';
import { memoryOutput } from '../../infra/cli/output';
import type { RunReport } from '../../shared/archive/steps/types';
import {
  canonicalJson,
  detailsKey,
  flushIdForChunks,
  type JobDetails,
  META_JOB_ID,
  META_SHOP_ID,
  platformDataKey,
} from '../../shared/details';
import { createJob, recordFlush } from '../../shared/jobs';
import { getJob } from '../../shared/jobs/job-repo';
import { itemToJson } from '../../shared/jobs/row-json';
import { JobDetailsReader } from '../../shared/reader';
import {
  cliContextFor,
  inMonth,
  listKeys,
  runLocal,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * Issue 25, the archiver's side of "nothing lost, whatever the data", each case driven through the
 * synthesized state machine over the real handlers:
 * - one job id in two shops: only the archived shop's objects are archived and deleted; the other
 *   shop's stay, readable by its lookup, and the run reports them;
 * - integers a float64 cannot hold, written by Python, survive archival and every read bit for bit;
 * - a payload nested 50,000 levels deep quarantines its own job only; its neighbours are archived.
 */
jest.setTimeout(180_000);

const ROOT = resolve(__dirname, '../..');
const PYTHON = process.env.PYTHON ?? 'python3';
const INPUT = { olderThanDays: 30, graceHours: 0 };

const machine = setUpMachineRuns();

const run = async (): Promise<RunReport> => {
  const r = await runLocal(machine.env, { definition: machine.definition, input: INPUT });
  expect(r.status).toBe('SUCCEEDED');
  return r.output as RunReport;
};

test('one job id in two shops: the archived shop takes only its own objects; the other shop’s stay and read', async () => {
  const { env } = machine;
  const jobId = 'dupjob-2shops';
  const deps = { ddb: env.ddb, table: env.table, detailsWriter: env.store };
  const due = inMonth(2, 10);
  // shop-x: FAILED two months ago (due). shop-y: the same id, IN_PROGRESS now, with platform data.
  await createJob(
    env.ddb,
    env.table,
    { shopId: 'shop-x', jobType: 'full_sync', platform: 'shopify', totalItems: 1 },
    { now: new Date(due.getTime() - 60_000), idGenerator: () => jobId },
  );
  await recordFlush(
    deps,
    { shopId: 'shop-x', jobId, totalItems: 1 },
    {
      chunkIds: ['x0'],
      counts: { processed: 0, failed: 1, skipped: 0, conflict: 0 },
      details: { failed: { timeout: ['x-doc'] } },
    },
    { now: due },
  );
  await createJob(
    env.ddb,
    env.table,
    { shopId: 'shop-y', jobType: 'full_sync', platform: 'shopify', totalItems: 10 },
    { idGenerator: () => jobId },
  );
  await env.store.writePlatformData('shop-y', jobId, { owner: 'shop-y' });
  await recordFlush(
    deps,
    { shopId: 'shop-y', jobId, totalItems: 10 },
    {
      chunkIds: ['y0'],
      counts: { processed: 0, failed: 0, skipped: 0, conflict: 1 },
      details: { conflict: { version: [{ doc_id: 'y-doc', existing_version: 3 }] } },
    },
  );
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const yBefore = await reader.lookup({ shopId: 'shop-y', jobId });
  expect(yBefore).toMatchObject({ detailsSource: 'hot', platformData: { owner: 'shop-y' } });
  const yKeys = [
    detailsKey(jobId, flushIdForChunks(['y0'])),
    `job-details/${jobId}/platform-data.json`,
  ].sort();

  const report = await run();
  expect(report.groupsFailedCount).toBe(0);
  // Reported, loudly: the other shop's objects were found under the job's prefix and left in place.
  const mine = report.jobsQuarantined.filter((q) => q.jobId === jobId);
  expect(mine).toHaveLength(2);
  for (const q of mine) {
    expect(q).toMatchObject({ shopId: 'shop-x', reason: expect.stringMatching(/belongs to shop shop-y/) });
  }

  // shop-y's objects are all still there and its lookup sees exactly what it saw before.
  expect(await listKeys(env.s3, env.bucket, `job-details/${jobId}/`)).toEqual(yKeys);
  const yAfter = await reader.lookup({ shopId: 'shop-y', jobId });
  expect(yAfter).toMatchObject({
    details: yBefore.details,
    platformData: { owner: 'shop-y' },
    detailsSource: 'hot',
    archivals: [],
  });
  // shop-x's archive holds shop-x's details only, and no platform data (it wrote none).
  const x = await reader.lookup({ shopId: 'shop-x', jobId, completedAt: due.toISOString() });
  expect(x).toMatchObject({
    details: { chunk_ids: ['x0'], failed: { timeout: ['x-doc'] }, skipped: {}, conflict: {} },
    platformData: null,
    detailsSource: 'archive',
  });
  expect(x.archivals).toHaveLength(1);
  // audit names the shared id (from the rows and the listing it reads anyway).
  const audit = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(audit.sharedJobIds).toEqual([{ jobId, shops: ['shop-x', 'shop-y'], hotObjects: 2 }]);
});

test('integers beyond 2^53 written by Python survive archival and every read, hot and archived, bit for bit', async () => {
  const { env } = machine;
  const shopId = 'python-exact.myshopify.com';
  const w = spawnSync(
    PYTHON,
    [
      join(ROOT, 'test/python/write_job.py'),
      'job',
      '--table',
      env.table,
      '--bucket',
      env.bucket,
      '--shop',
      shopId,
      '--completed-at',
      inMonth(2, 12).toISOString(),
      '--exact-numbers',
    ],
    { cwd: ROOT, env: process.env, encoding: 'utf8' },
  );
  expect({ status: w.status, stderr: w.stderr }).toEqual({ status: 0, stderr: '' });
  const written = JSON.parse(w.stdout) as {
    job_id: string;
    completed_at: string;
    details_json: string;
    platform_data_json: string;
  };
  // What Python wrote, as text: the values a float64 would round.
  for (const n of ['9223372036854775807', '9007199254740993', '12345678901234567891']) {
    expect(written.details_json).toContain(n);
    expect(written.platform_data_json).toContain(n);
  }
  expect(written.platform_data_json).toContain('"ratio":1.0');

  const reader = new JobDetailsReader(env.s3, env.bucket);
  const q = { shopId, jobId: written.job_id, completedAt: written.completed_at };
  const exact = (r: { details: unknown; platformData: unknown }) => ({
    details: canonicalJson(r.details as never),
    platformData: canonicalJson(r.platformData as never),
    // What a caller serializing the result gets: the same digits.
    stringified: JSON.stringify(r.platformData).includes('"max_version":9223372036854775807'),
  });
  const want = { details: written.details_json, platformData: written.platform_data_json, stringified: true };
  const hot = await reader.lookup(q);
  expect(hot.detailsSource).toBe('hot');
  expect(exact(hot)).toEqual(want);

  const report = await run();
  expect(report.jobsQuarantined.filter((j) => j.shopId === shopId)).toEqual([]);
  expect(await listKeys(env.s3, env.bucket, `job-details/${written.job_id}/`)).toEqual([]);
  const archived = await reader.lookup(q);
  expect(archived).toMatchObject({ detailsSource: 'archive', platformDataSource: 'archive' });
  expect(exact(archived)).toEqual(want);
  const details = await reader.readAllDetails(q);
  expect(canonicalJson(details.details as never)).toBe(written.details_json);
  const pd = await reader.readPlatformData(q);
  expect(canonicalJson(pd.data as never)).toBe(written.platform_data_json);
});

test('a Python-written row with numbers beyond float64 is archived and read back exactly: archivedRow, inline details, CLI', async () => {
  const { env } = machine;
  const shopId = 'python-row.myshopify.com';
  const w = spawnSync(
    PYTHON,
    [
      join(ROOT, 'test/python/write_job.py'),
      'job',
      ...['--table', env.table, '--bucket', env.bucket, '--shop', shopId],
      ...['--completed-at', inMonth(2, 18).toISOString(), '--exact-row'],
    ],
    { cwd: ROOT, env: process.env, encoding: 'utf8' },
  );
  expect({ status: w.status, stderr: w.stderr }).toEqual({ status: 0, stderr: '' });
  const { job_id: jobId, completed_at: completedAt } = JSON.parse(w.stdout) as {
    job_id: string;
    completed_at: string;
  };
  // The texts Python wrote (boto3 sends str(Decimal)); a float64 rounds or refuses every one.
  const rowWant =
    '{"cursor":12345678901234567891,"fine":0.1000000000000000000001,"huge":1.5E+100,"versions":[3,9007199254740993]}';
  const itemWant =
    '{"doc_id":"row-1","existing_version":9223372036854775807,"incoming_version":9007199254740993}';
  const rowPart = (row: Record<string, unknown> | null) =>
    canonicalJson({
      cursor: row?.cursor,
      fine: row?.fine,
      huge: row?.huge,
      versions: row?.versions,
    } as never);
  const inlineItem = (details: unknown) =>
    canonicalJson(
      ((details as JobDetails).conflict.version_conflict ?? []).find((i) => i.doc_id === 'row-1') as never,
    );
  const cliLookup = async (json = true) => {
    const io = memoryOutput();
    const { exitCode } = await lookupCommand(
      cliContextFor(env),
      { shopId, jobId, searchMonths: 24, json },
      io,
    );
    expect(exitCode).toBe(0);
    return io.stdout.join('\n');
  };

  // Live row: the CLI reads it (getJob) and hands it to the reader, whose dual-read merges it.
  const hotText = await cliLookup();
  for (const t of [
    /"cursor": 12345678901234567891,/,
    /"huge": 1\.5E\+100,/,
    /"fine": 0\.1000000000000000000001,/,
    /"existing_version": 9223372036854775807,/,
  ]) {
    expect(hotText).toMatch(t);
  }

  const report = await run();
  expect(report.jobsQuarantined.filter((j) => j.shopId === shopId)).toEqual([]);
  expect(await listKeys(env.s3, env.bucket, `job-details/${jobId}/`)).toEqual([]);

  // Archived: the row (inline details moved into the record, stored once) and the details, exact.
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const archived = await reader.lookup({ shopId, jobId, completedAt });
  expect(archived.detailsSource).toBe('archive');
  expect(rowPart(archived.archivedRow)).toBe(rowWant);
  expect(archived.archivedRow).not.toHaveProperty('conflict_details');
  expect(inlineItem(archived.details)).toBe(itemWant);
  expect(JSON.stringify(archived.archivedRow)).toContain('"cursor":12345678901234567891');
  const all = await reader.readAllDetails({ shopId, jobId, completedAt });
  expect(inlineItem(all.details)).toBe(itemWant);
  // The CLI after archival (live row + archive), and with the row as the caller's exact read gives it.
  expect(await cliLookup()).toMatch(/"existing_version": 9223372036854775807,/);
  expect(await cliLookup(false)).toMatch(
    /counters: {3}12 items: 8 processed, 2 failed, 1 skipped, 1 conflict/,
  );
  const row = await getJob(env.ddb, env.table, shopId, jobId);
  expect(rowPart(itemToJson(row as never))).toBe(rowWant);
  const withRow = await reader.lookup({ shopId, jobId, completedAt, row: row as never });
  expect(inlineItem(withRow.details)).toBe(itemWant);
});

test('a payload nested 50,000 levels deep (or not UTF-8) quarantines its job alone; its neighbours are archived', async () => {
  const { env } = machine;
  const shopId = 'deep-shop';
  const deep = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 14), platformData: null });
  const deepPlatform = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 14, 1) });
  const notUtf8 = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 14, 2), platformData: null });
  const neighbour = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 14, 5) });
  const put = (jobId: string, key: string, body: Uint8Array | string, gzip: boolean) =>
    env.s3.send(
      new PutObjectCommand({
        Bucket: env.bucket,
        Key: key,
        Body: gzip ? gzipSync(body) : body,
        ...(gzip ? { ContentEncoding: 'gzip' } : {}),
        ContentType: 'application/json',
        Metadata: { [META_SHOP_ID]: shopId, [META_JOB_ID]: jobId },
      }),
    );
  // Writers' objects (any language): a valid flush payload whose conflict item is 50,000 deep, a
  // platform-data.json as deep, a flush whose bytes are not UTF-8.
  const nested = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
  const key = detailsKey(deep.jobId, flushIdForChunks(['p9']));
  await put(
    deep.jobId,
    key,
    `{"chunk_ids":["p9"],"conflict":{"deep":[{"doc_id":"d","v":${nested}}]},"failed":{},"skipped":{}}`,
    true,
  );
  await put(deepPlatform.jobId, platformDataKey(deepPlatform.jobId), `{"v":${nested}}`, false);
  const badKey = detailsKey(notUtf8.jobId, flushIdForChunks(['p9']));
  await put(notUtf8.jobId, badKey, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), true);

  const report = await run();
  expect(report.groupsFailedCount).toBe(0);
  const reasons = new Map(
    report.jobsQuarantined.filter((q) => q.shopId === shopId).map((q) => [q.jobId, q.reason]),
  );
  expect(reasons).toEqual(
    new Map([
      [deep.jobId, expect.stringMatching(/JSON nests deeper than 256 levels/)],
      [deepPlatform.jobId, expect.stringMatching(/platform-data\.json: JSON nests deeper than 256 levels/)],
      [notUtf8.jobId, expect.stringMatching(/not valid UTF-8/)],
    ]),
  );
  // The bad jobs keep every source; the neighbour of the same shop-month is archived and deleted.
  expect(await listKeys(env.s3, env.bucket, `job-details/${deep.jobId}/`)).toEqual(
    [...deep.keys, key].sort(),
  );
  expect(await listKeys(env.s3, env.bucket, `job-details/${deepPlatform.jobId}/`)).toEqual(deepPlatform.keys);
  expect(await listKeys(env.s3, env.bucket, `job-details/${notUtf8.jobId}/`)).toEqual(
    [...notUtf8.keys, badKey].sort(),
  );
  expect(await listKeys(env.s3, env.bucket, `job-details/${neighbour.jobId}/`)).toEqual([]);
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const n = await reader.lookup({ shopId, jobId: neighbour.jobId, completedAt: neighbour.completedAt });
  expect(n.detailsSource).toBe('archive');
  // The bad job's reader gets the typed error naming the object, not a stack overflow.
  await expect(reader.lookup({ shopId, jobId: deep.jobId })).rejects.toMatchObject({
    name: 'CorruptObjectError',
    key,
  });
});
