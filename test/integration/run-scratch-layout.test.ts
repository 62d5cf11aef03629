import { gunzipSync } from 'node:zlib';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { planBatchesKey, plannedJobsKey, runPrefix } from '../../shared/archive/format';
import { readBatchJobs } from '../../shared/archive/steps/run-files/planned-jobs';
import type { PlannedBatch, PlannedGroup, RunContext, RunReport } from '../../shared/archive/steps/types';
import { jobPk, jobSk } from '../../shared/jobs/schema';
import { getObjectBytes } from '../../shared/s3/objects';
import {
  DAY,
  getBytes,
  inMonth,
  listKeys,
  runLocal,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * Run scratch on the embedded stack (docs/operations.md "Run scratch"): a plan page's planned jobs are
 * one gzip member per shop-month at the byte range its batch line names — a batch still reads all its
 * groups in one ranged GET and inflates each alone — and forget's scrub empties the forgotten shop's
 * members at their length, masks a mention of it in another shop's job, and leaves every other range
 * reading its own jobs.
 */
jest.setTimeout(300_000);

const runs = setUpMachineRuns();
const GONE = 'rs-gone.myshopify.com';
const SHOPS = ['rs-a.myshopify.com', GONE, 'rs-b.myshopify.com'];

const lines = (b: Buffer): string[] =>
  gunzipSync(b)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');

test('planned jobs: a gzip member per group at its range, one ranged GET a batch; forget empties the shop’s members in place', async () => {
  const { env, definition } = runs;
  const seeded = new Map<string, string[]>();
  for (const shopId of SHOPS)
    for (const day of [3, 9])
      seeded.set(shopId, [
        ...(seeded.get(shopId) ?? []),
        (await seedTerminalJob(env, { shopId, completedAt: inMonth(2, day) })).jobId,
      ]);
  // Another shop's job whose error names the shop (free text the GSI projects into the plan).
  const mentions = seeded.get('rs-b.myshopify.com')?.[0] ?? '';
  await env.ddb.send(
    new UpdateCommand({
      TableName: env.table,
      Key: { pk: jobPk('rs-b.myshopify.com'), sk: jobSk(mentions) },
      UpdateExpression: 'SET error_message = :m',
      ExpressionAttributeValues: { ':m': `upstream ${GONE} timed out` },
    }),
  );
  const archived = await runLocal(env, { definition, input: { olderThanDays: 30, graceHours: 1 } });
  expect(archived.output).toMatchObject({ jobsArchived: 6, groupsFailedCount: 0 });
  const { runId } = archived.output as RunReport;
  expect((await listKeys(env.s3, env.bucket, `${runPrefix(runId)}plan/0/`)).sort()).toEqual([
    planBatchesKey(runId, 0),
    plannedJobsKey(runId, 0),
  ]);

  const jobsKey = plannedJobsKey(runId, 0);
  const file = await getBytes(env.s3, env.bucket, jobsKey);
  const batches = (await getBytes(env.s3, env.bucket, planBatchesKey(runId, 0)))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PlannedBatch);
  const groups = batches.flatMap((b) => b.groups);
  expect(groups.map((g) => g.shopId).sort()).toEqual([...SHOPS].sort());
  // Each range is one member holding the group's lines, read by a ranged GET of its own.
  for (const g of groups) {
    const [start, end] = g.jobsRange;
    const got = await getObjectBytes(env.s3, env.bucket, jobsKey, { offset: start, length: end - start });
    const ids = lines(got?.bytes ?? Buffer.alloc(0)).map((l) => (JSON.parse(l) as { job_id: string }).job_id);
    expect(ids.sort()).toEqual([...(seeded.get(g.shopId) ?? [])].sort());
  }
  // The whole file is the members one after the other: `gzip -dc` reads every planned job.
  expect(lines(file)).toHaveLength(6);
  expect(file.length).toBe(Math.max(...groups.map((g) => g.jobsRange[1])));

  // The batch's groups as the archive step and Report read them: one GET, each group inflated alone.
  const run = { runId } as RunContext;
  const read = (gs: readonly PlannedGroup[]) =>
    env.deps.meter.measure(async () => {
      const jobs = await readBatchJobs(env.deps, run, gs);
      return gs.map((g) => jobs.get(g).map((j) => j.job_id));
    });
  const kept = groups.filter((g) => g.shopId !== GONE);
  const before = await read(kept);
  expect(before.requests.byType).toEqual({ 's3.GetObject': 1 });

  env.advance(DAY); // past the run timeout: the archival has ended
  const forgot = await runLocal(env, { definition, input: { forget: { shopId: GONE } } }).finally(() =>
    env.advance(-DAY),
  );
  expect(forgot.status).toBe('SUCCEEDED');

  const scrubbed = await getBytes(env.s3, env.bucket, jobsKey);
  expect(scrubbed.length).toBe(file.length);
  const after = (await getBytes(env.s3, env.bucket, planBatchesKey(runId, 0))).toString('utf8');
  expect(after).not.toContain(GONE);
  // Every other group's range reads its own jobs, in one GET as before.
  const again = await read(kept);
  expect(again.value).toEqual(before.value);
  expect(again.requests.byType).toEqual({ 's3.GetObject': 1 });
  // The shop's members hold nothing; no line names it or is one of its jobs.
  for (const g of groups.filter((x) => x.shopId === GONE))
    expect(gunzipSync(scrubbed.subarray(g.jobsRange[0], g.jobsRange[1])).length).toBe(0);
  const text = gunzipSync(scrubbed).toString('utf8');
  expect(text).not.toContain(GONE);
  for (const id of seeded.get(GONE) ?? []) expect(text).not.toContain(id);
  expect(text).toContain(`upstream ${'*'.repeat(GONE.length)} timed out`);
  expect(lines(scrubbed)).toHaveLength(4);
});

test('forget: another shop’s jobs whose errors name both shops keep their planned jobs (masked, else cut, else the string blanked: never emptied)', async () => {
  const { env, definition } = runs;
  const gone = 'rs2-gone.myshopify.com';
  const other = `big-${gone}`; // holds the gone id, not as a whole id: its keys back-reference it
  const ids: string[] = [];
  for (const day of [4, 5, 6])
    ids.push((await seedTerminalJob(env, { shopId: other, completedAt: inMonth(2, day) })).jobId);
  await seedTerminalJob(env, { shopId: gone, completedAt: inMonth(2, 4) });
  // Free text naming both myshopify.com shops: masked with as many `*`, the member deflates longer.
  for (const [i, id] of ids.entries())
    await env.ddb.send(
      new UpdateCommand({
        TableName: env.table,
        Key: { pk: jobPk(other), sk: jobSk(id) },
        UpdateExpression: 'SET error_message = :m',
        ExpressionAttributeValues: { ':m': `sync with ${gone} failed; retried ${i + 1} times (${other})` },
      }),
    );
  const archived = await runLocal(env, { definition, input: { olderThanDays: 30, graceHours: 1 } });
  expect(archived.output).toMatchObject({ jobsArchived: 4, groupsFailedCount: 0 });
  const { runId } = archived.output as RunReport;
  const groups = (await getBytes(env.s3, env.bucket, planBatchesKey(runId, 0)))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .flatMap((l) => (JSON.parse(l) as PlannedBatch).groups)
    .filter((g) => g.shopId === other);
  const run = { runId } as RunContext;
  const read = async () => (await readBatchJobs(env.deps, run, groups)).get(groups[0] as PlannedGroup);

  env.advance(DAY); // past the run timeout: the archival has ended
  const forgot = await runLocal(env, { definition, input: { forget: { shopId: gone } } }).finally(() =>
    env.advance(-DAY),
  );
  expect(forgot.status).toBe('SUCCEEDED');
  const jobs = await read();
  expect(jobs.map((j) => j.job_id).sort()).toEqual([...ids].sort());
  // Masked, cut, or (when neither fits) the whole string `*`: never the gone shop, never emptied.
  const kept = new RegExp(
    `^(\\*|sync with \\*+ failed; retried \\d times \\(${other.replace(/\./g, '\\.')}\\))$`,
  );
  for (const j of jobs) expect(j.error_message).toMatch(kept);
});

test('forget: a shop named only in another shop’s free text, with no group on the page, is masked in the planned jobs', async () => {
  const { env, definition } = runs;
  const gone = 'rs3-gone.myshopify.com';
  const other = 'rs3-other.myshopify.com';
  const job = await seedTerminalJob(env, { shopId: other, completedAt: inMonth(2, 4) });
  await env.ddb.send(
    new UpdateCommand({
      TableName: env.table,
      Key: { pk: jobPk(other), sk: jobSk(job.jobId) },
      UpdateExpression: 'SET error_message = :m',
      ExpressionAttributeValues: { ':m': `webhook from ${gone} rejected` },
    }),
  );
  const archived = await runLocal(env, { definition, input: { olderThanDays: 30, graceHours: 1 } });
  expect(archived.output).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  const { runId } = archived.output as RunReport;
  const jobsKey = plannedJobsKey(runId, 0);
  expect(gunzipSync(await getBytes(env.s3, env.bucket, jobsKey)).toString('utf8')).toContain(gone);

  env.advance(DAY); // past the run timeout: the archival has ended
  const forgot = await runLocal(env, { definition, input: { forget: { shopId: gone } } }).finally(() =>
    env.advance(-DAY),
  );
  expect(forgot.status).toBe('SUCCEEDED');
  // No scratch object of the run names the shop; the other shop's job is still planned, masked.
  for (const key of await listKeys(env.s3, env.bucket, runPrefix(runId))) {
    const bytes = await getBytes(env.s3, env.bucket, key);
    const text = (bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes).toString('utf8');
    expect({ key, named: text.includes(gone) }).toEqual({ key, named: false });
  }
  const text = gunzipSync(await getBytes(env.s3, env.bucket, jobsKey)).toString('utf8');
  expect(text).toContain(job.jobId);
  expect(text).toContain(`webhook from ${'*'.repeat(gone.length)} rejected`);
});
