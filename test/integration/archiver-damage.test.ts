import { DeleteObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { synthesizedDefinition } from '../../infra/local/runner';
import { type JobRecord, monthIndexKey } from '../../shared/archive/format';
import { rebuildMonthIndex } from '../../shared/archive/reindex';
import { jobPrefix } from '../../shared/details';
import { getJob, recordFlush } from '../../shared/jobs';
import { JobDetailsReader } from '../../shared/reader';
import { normalizeEtag } from '../../shared/s3/objects';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  getBytes,
  hotState,
  inMonth,
  listKeys,
  memberAt,
  readIndex,
  runLocal,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Issue 25, cases 3, 4 and 6: damage between runs (a part rewritten during the grace period, hot
 * objects changed after their archival, a lost month index) on the synthesized state machine over
 * the real handlers, against DynamoDB Local + s3rver. Each test has its own bucket and table: a
 * damaged group fails every run until repaired.
 */
jest.setTimeout(240_000);

const definition = synthesizedDefinition();
let env: ArchiverEnv;
beforeEach(async () => {
  env = await archiverEnv();
});

const run = (input: Record<string, unknown>) => runLocal(env, { input, definition });
const audit = async () => {
  const io = memoryOutput();
  const r = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: false, deep: false },
    io,
  );
  return { r, exit: auditExitCode(r), text: io.stdout.join('\n') };
};
const reader = () => new JobDetailsReader(env.s3, env.bucket);

test('case 3: a part byte-flipped during the grace period deletes nothing; its group fails; audit flags it; reindex + a run converge', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-flip', completedAt: inMonth(2, 5), flushes: 3 });
  const before = await hotState(env, job.jobId);
  const first = await run({ graceHours: 1 });
  expect(first.status).toBe('SUCCEEDED');
  const month = job.completedAt.slice(0, 7);
  const index = await readIndex(env, job.shopId, month);
  const part = index?.parts[0];
  if (!part) throw new Error('no part');
  expect(part.etag).toEqual(expect.any(String)); // index@4: the ETag verify read, recorded at commit

  // Same size, one byte flipped (an overwrite of the write-once part): the local S3 stores the MD5 of
  // every PUT's bytes as its ETag, as S3 gives every write a new ETag.
  const bytes = Buffer.from(await getBytes(env.s3, env.bucket, part.key));
  const at = bytes.length - 5; // in the last block's CRC-32: every reader of the block sees it
  bytes[at] = (bytes[at] ?? 0) ^ 0xff;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: part.key, Body: bytes }));
  const head = await env.s3.send(new HeadObjectCommand({ Bucket: env.bucket, Key: part.key }));
  expect(head.ContentLength).toBe(part.size);
  expect(normalizeEtag(head.ETag)).not.toBe(part.etag);

  const second = await run({ graceHours: 0 });
  expect(second.status).toBe('FAILED'); // a run that could not do its work ends failed
  expect(second.handlerErrors.map((e) => e.message).join('\n')).not.toMatch(/InternalError/);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual(job.keys); // every hot copy
  expect((await readIndex(env, job.shopId, month))?.jobs[job.jobId]?.[0]?.deleted_at).toBeNull();

  const a = await audit();
  expect(a.r.mismatches).toEqual(
    expect.arrayContaining([expect.objectContaining({ kind: 'damaged-part', key: part.key })]),
  );
  expect(a.text).toMatch(/jobarchive reindex --shop shop-flip --month/);
  expect(a.exit).not.toBe(0);

  // Repair: rebuild the index without the unreadable part, then a run archives the hot copies again.
  const rebuilt = await rebuildMonthIndex(env.deps, job.shopId, month, { dryRun: false, force: true });
  expect(rebuilt.partsExcluded).toEqual([{ key: part.key, reason: expect.stringMatching(/unreadable/) }]);
  const third = await run({ graceHours: 0 });
  expect(third.status).toBe('SUCCEEDED');
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual([]);
  const read = await reader().readAllDetails({
    shopId: job.shopId,
    jobId: job.jobId,
    completedAt: job.completedAt,
  });
  expect(read.details).toEqual(before.details);
});

test('case 4: objects changed after the commit are kept, stay visible to every reader, and the next run archives them', async () => {
  const job = await seedTerminalJob(env, {
    shopId: 'shop-late',
    completedAt: inMonth(2, 6),
    status: 'COMPLETED',
    platformData: { indexer: { v: 1 } },
  });
  const q = { shopId: job.shopId, jobId: job.jobId, completedAt: job.completedAt };
  expect((await run({ graceHours: 1 })).status).toBe('SUCCEEDED');
  // During the grace period: a late flush on the COMPLETED job and a new platform-data.json.
  const late = await recordFlush(
    { ddb: env.ddb, table: env.table, detailsWriter: env.store },
    { shopId: job.shopId, jobId: job.jobId, totalItems: 1, knownStatus: 'COMPLETED' },
    {
      chunkIds: ['late'],
      counts: { processed: 0, failed: 0, skipped: 1, conflict: 0 },
      details: { skipped: { late: ['late-doc'] } },
    },
  );
  expect(late.detailsKey).toEqual(expect.any(String));
  const row = await getJob(env.ddb, env.table, job.shopId, job.jobId, { consistentRead: true });
  expect(row).toMatchObject({ job_status: 'COMPLETED', completed_at: job.completedAt });
  await env.store.writePlatformData(job.shopId, job.jobId, { indexer: { v: 2 } });
  const want = await hotState(env, job.jobId);
  expect(want.details?.skipped.late).toEqual(['late-doc']);

  const second = await run({ graceHours: 0 });
  expect(second.status).toBe('SUCCEEDED');
  // Nothing of the job deleted; its entry says why; every reader sees the late data.
  const month = job.completedAt.slice(0, 7);
  const entries = (await readIndex(env, job.shopId, month))?.jobs[job.jobId] ?? [];
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({ deleted_at: null, rearchive: expect.any(String) });
  expect((await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).length).toBe(job.keys.length + 1);
  const seen = await reader().lookup(q);
  expect(seen.details).toEqual(want.details);
  expect(seen.platformData).toEqual({ indexer: { v: 2 } });
  expect((await reader().readPlatformData(q)).data).toEqual({ indexer: { v: 2 } });

  // The next run archives the prefix again and (grace 0) deletes it; the archive alone is complete.
  // A second later than the first part: reindex (below) takes parts in name order, stamped to the
  // second, and runs a day apart never share one (two here once did, and the order was a coin toss).
  env.advance(1000);
  const third = await run({ graceHours: 0 });
  expect(third.status).toBe('SUCCEEDED');
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual([]);
  const after = (await readIndex(env, job.shopId, month))?.jobs[job.jobId] ?? [];
  expect(after).toHaveLength(2);
  expect(after.every((e) => e.deleted_at !== null)).toBe(true);
  // Planned from its retry entry (no row read at Plan), archived again with its row: the second
  // record's planned attributes are the first's (job_type, platform… from the row, never null for
  // want of the GSI's; the counters moved with the late flush).
  const index = await readIndex(env, job.shopId, month);
  const records = await Promise.all(
    after.map(async (e) => {
      const part = index?.parts.find((p) => p.name === e.part);
      if (!part) throw new Error(`no part ${e.part}`);
      return (await memberAt(env, part.key, e, { type: 'job', jobId: job.jobId })).record as JobRecord;
    }),
  );
  const planned = (r: JobRecord | undefined) => {
    const { job_type, platform, error_message, retry_count } = (r?.job ?? {}) as Record<string, unknown>;
    return { job_type, platform, error_message, retry_count };
  };
  expect(planned(records[1])).toEqual(planned(records[0]));
  expect((await reader().lookup(q)).archivedJob).toMatchObject({
    job_type: 'full_sync',
    platform: 'shopify',
  });
  const archived = await reader().lookup(q);
  expect(archived.details).toEqual(want.details);
  expect(archived.platformData).toEqual({ indexer: { v: 2 } });
  expect((await reader().readPlatformData(q)).data).toEqual({ indexer: { v: 2 } });
  expect((await audit()).exit).toBe(0);

  // A rebuilt index keeps both archivals (the second covers objects the first does not).
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: monthIndexKey(job.shopId, month) }));
  await rebuildMonthIndex(env.deps, job.shopId, month, { dryRun: false });
  expect((await readIndex(env, job.shopId, month))?.jobs[job.jobId]).toHaveLength(2);
  const rebuilt = await reader().readAllDetails(q);
  expect(rebuilt.details).toEqual(want.details);
});

test('case 4: an object written after the delete is flagged by audit and archived by the next run', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-after', completedAt: inMonth(2, 7) });
  const q = { shopId: job.shopId, jobId: job.jobId, completedAt: job.completedAt };
  expect((await run({ graceHours: 0 })).status).toBe('SUCCEEDED');
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual([]);
  await env.store.writePlatformData(job.shopId, job.jobId, { indexer: { v: 3 } });
  // lookup and readPlatformData agree on the current platform data meanwhile.
  expect((await reader().readPlatformData(q)).data).toEqual((await reader().lookup(q)).platformData);
  const a = await audit();
  expect(a.r.mismatches).toEqual([expect.objectContaining({ kind: 'hidden-hot-object', jobId: job.jobId })]);
  expect(a.exit).not.toBe(0);
  // Nothing about the job's row changed, so the watermark does not plan it again: the repair audit
  // names re-plans past it. (A plain run leaves it hot and flagged.)
  expect(a.text).toContain('jobarchive run --replan');
  expect((await run({ graceHours: 0 })).status).toBe('SUCCEEDED');
  expect((await audit()).r.mismatches).toEqual([expect.objectContaining({ kind: 'hidden-hot-object' })]);

  const replanned = await run({ graceHours: 0, replan: true });
  expect({ status: replanned.status, errors: replanned.handlerErrors.map((e) => e.message) }).toEqual({
    status: 'SUCCEEDED',
    errors: [],
  });
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual([]);
  expect((await reader().lookup(q)).platformData).toEqual({ indexer: { v: 3 } });
  expect((await reader().readPlatformData(q)).data).toEqual({ indexer: { v: 3 } });
  expect((await audit()).exit).toBe(0);
});

test('case 6: a lost month index fails its group loudly, commits no empty records, and reindex brings it back', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-lost', completedAt: inMonth(2, 8) });
  const want = await hotState(env, job.jobId);
  const q = { shopId: job.shopId, jobId: job.jobId, completedAt: job.completedAt };
  expect((await run({ graceHours: 0 })).status).toBe('SUCCEEDED');
  const month = job.completedAt.slice(0, 7);
  const key = monthIndexKey(job.shopId, month);
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: key }));

  // A scheduled run does not plan the month's jobs again (the watermark is past them): it touches
  // nothing, commits nothing. A re-plan (what audit's repairs ask for) meets the guard: the group
  // fails loudly, and still nothing is committed.
  expect((await run({ graceHours: 0 })).status).toBe('SUCCEEDED');
  expect(await readIndex(env, job.shopId, month)).toBeNull();
  const second = await run({ graceHours: 0, replan: true });
  expect(second.status).toBe('FAILED');
  expect(await readIndex(env, job.shopId, month)).toBeNull(); // no empty records committed
  expect(await listKeys(env.s3, env.bucket, `job-details-cold/${job.shopId}/${month}/`)).toHaveLength(1);
  const a = await audit();
  expect(a.r.mismatches).toEqual([
    expect.objectContaining({ kind: 'lost-index', shopId: job.shopId, month }),
  ]);
  expect(a.text).toMatch(`jobarchive reindex --shop ${job.shopId} --month ${month}`);
  expect(a.exit).not.toBe(0);

  await rebuildMonthIndex(env.deps, job.shopId, month, { dryRun: false });
  expect((await run({ graceHours: 0, replan: true })).status).toBe('SUCCEEDED');
  expect((await reader().readAllDetails(q)).details).toEqual(want.details);
  expect((await audit()).exit).toBe(0);
});

test('case 5: audit --deep names a damaged block; delete refuses a rewritten part; a truncated part is flagged cheaply', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-deep', completedAt: inMonth(2, 9) });
  expect((await run({ graceHours: 1 })).status).toBe('SUCCEEDED');
  const month = job.completedAt.slice(0, 7);
  const index = await readIndex(env, job.shopId, month);
  const part = index?.parts[0];
  if (!index || !part) throw new Error('no part');
  const bytes = Buffer.from(await getBytes(env.s3, env.bucket, part.key));
  bytes[bytes.length - 5] = (bytes[bytes.length - 5] ?? 0) ^ 0xff;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: part.key, Body: bytes }));

  const io = memoryOutput();
  const deep = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: false, deep: true },
    io,
  );
  expect(deep.mismatches).toEqual([
    expect.objectContaining({
      kind: 'damaged-part',
      key: part.key,
      // Every part's ETag is committed (format 1.0): a rewrite is named before any block is read.
      detail: expect.stringMatching(/rewritten after its commit|decompress/),
    }),
  ]);
  expect(deep.requests.s3Get).toBeLessThanOrEqual(3); // the index (and the part), the watermark
  expect(auditExitCode(deep)).not.toBe(0);

  expect((await run({ graceHours: 0 })).status).toBe('FAILED');
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual(job.keys);

  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: part.key, Body: bytes.subarray(0, 20) }));
  const cheap = await audit();
  expect(cheap.r.mismatches).toEqual([
    expect.objectContaining({ kind: 'damaged-part', detail: expect.stringMatching(/stored 20 bytes/) }),
  ]);
  expect(cheap.exit).not.toBe(0);
});

test('point 10: a row without status_created_at is no orphan "with no job row": audit names it a row the archiver cannot plan', async () => {
  const shopId = 'shop-unplanned';
  const jobId = 'unplannedjob1';
  await env.ddb.send(
    new PutCommand({
      TableName: env.table,
      Item: {
        pk: `SHOP#${shopId}`,
        sk: `JOB#${jobId}`,
        job_id: jobId,
        job_status: 'FAILED',
        completed_at: inMonth(2, 3).toISOString(),
      },
    }),
  );
  await env.store.writePlatformData(shopId, jobId, { indexer: { v: 1 } });
  const a = await audit();
  expect(a.r.orphans).toEqual([]);
  expect(a.r.mismatches).toEqual([
    expect.objectContaining({
      kind: 'unplannable-row',
      shopId,
      jobId,
      detail: expect.stringMatching(/no status_created_at/),
    }),
  ]);
  expect(a.text).toMatch(/^unplannable-row \(1\):$/m);
  expect(a.text).toMatch(/repair: set status_created_at/);
  expect(a.exit).not.toBe(0);
});
