import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { auditCommand } from '../../infra/cli/audit';
import { memoryOutput } from '../../infra/cli/output';
import { COLD_PREFIX } from '../../shared/archive/format';
import { jobPrefix } from '../../shared/details';
import { JobDetailsReader } from '../../shared/reader';
import {
  archiverEnv,
  cliContextFor,
  HOUR,
  hotState,
  inMonth,
  listKeys,
  monthOfDate,
  readIndex,
  readStoredIndex,
  retryJob,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * A job planned again after its part settled (its entry left the month index: the delete step turned
 * the part's entries into its summary). The archive step reads the candidate record from the part (one
 * ranged GET, only for such jobs) and classifies as before; in a restore class it archives the job a
 * second time rather than skip it on the directory's word (readers merge both archivals).
 *
 * Each run here forgets the plan watermark (runMachine's default), so the second run plans the first
 * run's jobs again, as a replan or a retry list would.
 */
jest.setTimeout(120_000);

const SHOP = 'settled-shop.myshopify.com';
const MONTH = monthOfDate(inMonth(2, 1));

/** The archive stage's S3 client, recording its ranged part GETs; `glacier`: those fail as S3 does for a part in a restore class. */
const watchedS3 = (s3: S3Client, glacier: boolean) => {
  const ranged: string[] = [];
  const client = new Proxy(s3, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown, ...rest: unknown[]) => {
        if (command instanceof GetObjectCommand) {
          const { Key, Range } = command.input;
          if (Key?.startsWith(`${COLD_PREFIX}${SHOP}/`) && Range !== undefined) {
            ranged.push(`${Key} ${Range}`);
            // s3rver has no storage classes: what S3 answers a GET of an object in Glacier Flexible
            // Retrieval / Deep Archive that is not restored (the only mocked behaviour here).
            if (glacier)
              throw Object.assign(new Error("The operation is not valid for the object's storage class"), {
                name: 'InvalidObjectState',
                $metadata: { httpStatusCode: 403 },
              });
          }
        }
        return (target.send as (...a: unknown[]) => unknown)(command, ...rest);
      };
    },
  });
  return { client, ranged };
};

const archivedOnce = async () => {
  const env = await archiverEnv({ graceHours: 0 });
  const jobs = [
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3), status: 'FAILED' }),
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 4) }),
  ];
  const hot = new Map<string, Awaited<ReturnType<typeof hotState>>>();
  for (const j of jobs) hot.set(j.jobId, await hotState(env, j.jobId));
  const first = await runMachine(env);
  expect(first.report).toMatchObject({ jobsArchived: 2, partsWritten: 1, groupsFailedCount: 0 });
  const stored = await readStoredIndex(env, SHOP, MONTH);
  // The delete settled the part: its summary in the index, no entry.
  expect(stored?.jobs).toEqual({});
  expect(stored?.parts.map((p) => p.settled !== undefined)).toEqual([true]);
  return { env, jobs, hot, part: stored?.parts[0]?.key };
};

test('planned again after its part settled: the record is read (one ranged GET a block), the job skipped, no second archival', async () => {
  const { env, jobs, part } = await archivedOnce();
  const { client, ranged } = watchedS3(env.s3, false);
  const again = await runMachine(env, { stageDeps: { archive: env.withDeps({ s3: client }) } });
  expect(again.report).toMatchObject({
    jobsArchived: 0,
    jobsSkipped: 2,
    partsWritten: 0,
    groupsFailedCount: 0,
  });
  // Both jobs' records: one GET for each block the directory names, of the settled part only.
  expect(ranged.length).toBeGreaterThanOrEqual(1);
  expect(ranged.length).toBeLessThanOrEqual(jobs.length);
  for (const r of ranged) expect(r.startsWith(`${part} bytes=`)).toBe(true);
  const stored = await readStoredIndex(env, SHOP, MONTH);
  expect(stored?.parts).toHaveLength(1);
  expect(stored?.jobs).toEqual({});
});

test('planned again while its settled part is in a restore class: archived a second time, never skipped; readers merge', async () => {
  const { env, jobs, hot } = await archivedOnce();
  const { client, ranged } = watchedS3(env.s3, true);
  const again = await runMachine(env, { stageDeps: { archive: env.withDeps({ s3: client }) } });
  expect(ranged.length).toBeGreaterThanOrEqual(1);
  expect(again.report).toMatchObject({ jobsArchived: 2, partsWritten: 1, groupsFailedCount: 0 });
  // Two archivals of each job (the second settled in turn); the reader returns the job as it was.
  const index = await readIndex(env, SHOP, MONTH);
  expect(index?.parts).toHaveLength(2);
  for (const j of jobs) expect(index?.jobs[j.jobId]?.map((e) => e.completed_at)).toHaveLength(2);
  const reader = new JobDetailsReader(env.s3, env.bucket);
  for (const j of jobs) {
    const got = await reader.readAllDetails({ shopId: SHOP, jobId: j.jobId, completedAt: j.completedAt });
    expect(got.provenance.source).toBe('archive');
    expect(got.details).toEqual(hot.get(j.jobId)?.details);
  }
});

test('retried between its archival and that part’s delete: the older entry stays (its part never settles), the newer part settles; planned again, the job is skipped on the newer record, not archived a third time', async () => {
  const env = await archiverEnv({ graceHours: 24 });
  const job = await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3), status: 'FAILED' });
  await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 4) });
  const first = await runMachine(env);
  expect(first.report).toMatchObject({ jobsArchived: 2, partsWritten: 1 });
  // Retried in the same month before the first part's grace passed: its second archival is newer.
  await retryJob(env, job, inMonth(2, 9));
  const hot = await hotState(env, job.jobId);
  env.advance(25 * HOUR);
  const second = await runMachine(env);
  expect(second.report).toMatchObject({ jobsArchived: 1, partsWritten: 1, groupsFailedCount: 0 });
  env.advance(25 * HOUR);
  await runMachine(env);
  const stored = await readStoredIndex(env, SHOP, MONTH);
  // The first part keeps the job's older entry (never deleted: not its latest archival), the second settled.
  expect(stored?.parts.map((p) => p.settled !== undefined)).toEqual([false, true]);
  expect(stored?.jobs[job.jobId]?.map((e) => e.completed_at)).toEqual([inMonth(2, 3).toISOString()]);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual([]);

  const again = await runMachine(env);
  expect(again.report).toMatchObject({ jobsArchived: 0, partsWritten: 0, groupsFailedCount: 0 });
  expect((await readStoredIndex(env, SHOP, MONTH))?.parts).toHaveLength(2);
  const got = await new JobDetailsReader(env.s3, env.bucket).readAllDetails({
    shopId: SHOP,
    jobId: job.jobId,
    completedAt: job.completedAt,
  });
  expect(got.details).toEqual(hot.details);
});

test('the same older entry beside a newer settled part: an object written after that part’s delete is named by audit (readers skip the hot prefix) and archived by the next run', async () => {
  const env = await archiverEnv({ graceHours: 24 });
  const job = await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3), status: 'FAILED' });
  await runMachine(env);
  await retryJob(env, job, inMonth(2, 9));
  env.advance(25 * HOUR);
  await runMachine(env);
  env.advance(25 * HOUR);
  await runMachine(env);
  expect((await readStoredIndex(env, SHOP, MONTH))?.parts.map((p) => p.settled !== undefined)).toEqual([
    false,
    true,
  ]);
  await env.store.writePlatformData(SHOP, job.jobId, { indexer: { v: 3 } });
  const audit = async () => {
    const io = memoryOutput();
    return auditCommand(cliContextFor(env), { maxHeads: 100, concurrency: 2, json: false, deep: false }, io);
  };
  expect((await audit()).mismatches).toEqual([
    expect.objectContaining({ kind: 'hidden-hot-object', jobId: job.jobId }),
  ]);
  const again = await runMachine(env);
  expect(again.report).toMatchObject({ jobsArchived: 1, partsWritten: 1, groupsFailedCount: 0 });
  // Its grace passed, the next run deletes what the re-archival holds.
  env.advance(25 * HOUR);
  await runMachine(env);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual([]);
  const q = { shopId: SHOP, jobId: job.jobId, completedAt: job.completedAt };
  expect((await new JobDetailsReader(env.s3, env.bucket).lookup(q)).platformData).toEqual({
    indexer: { v: 3 },
  });
  expect((await audit()).mismatches).toEqual([]);
});

test('two overlapping runs: the second commits after the first settled its part; it reads that part’s records and adds no second archival', async () => {
  const env = await archiverEnv({ graceHours: 0 });
  const jobs = [
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3) }),
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 4) }),
  ];
  const hot = new Map<string, Awaited<ReturnType<typeof hotState>>>();
  for (const j of jobs) hot.set(j.jobId, await hotState(env, j.jobId));
  let overlapped = false;
  // The second run has archived and verified its part; the first runs whole (commit, delete, settle).
  const second = await runMachine(env, {
    hooks: {
      commit: async () => {
        if (overlapped) return;
        overlapped = true;
        const first = await runMachine(env);
        expect(first.report).toMatchObject({ jobsArchived: 2, partsWritten: 1, groupsFailedCount: 0 });
      },
    },
  });
  expect(overlapped).toBe(true);
  expect(second.report).toMatchObject({ groupsFailedCount: 0 });
  const stored = await readStoredIndex(env, SHOP, MONTH);
  // The first run's part settled; the second's records are pointed at by no entry (never settles).
  expect(stored?.parts.map((p) => p.settled !== undefined)).toEqual([true, false]);
  expect(stored?.jobs).toEqual({});
  const index = await readIndex(env, SHOP, MONTH);
  const reader = new JobDetailsReader(env.s3, env.bucket);
  for (const j of jobs) {
    expect(index?.jobs[j.jobId]).toHaveLength(1);
    const got = await reader.readAllDetails({ shopId: SHOP, jobId: j.jobId, completedAt: j.completedAt });
    expect(got.details).toEqual(hot.get(j.jobId)?.details);
    expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
  }
});
