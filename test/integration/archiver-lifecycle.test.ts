import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { JobRecord } from '../../shared/archive/format';
import type { GroupDone } from '../../shared/archive/steps/types';
import { jobPrefix } from '../../shared/details';
import { jobPk, jobSk } from '../../shared/jobs/schema';
import { JobDetailsReader } from '../../shared/reader';
import {
  archiverEnv,
  HOUR,
  hotState,
  inMonth,
  listKeys,
  memberAt,
  readIndex,
  retryJob,
  runMachine,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/** Time-dependent behaviour: the grace period, jobs retried after (or during) archival. */
jest.setTimeout(120_000);

const monthOf = (j: SeededJob) => j.completedAt.slice(0, 7);

test('grace period: nothing is deleted until graceHours after the commit, then everything is', async () => {
  const env = await archiverEnv();
  const jobs = [
    await seedTerminalJob(env, { shopId: 'shop-g', completedAt: inMonth(2, 8) }),
    await seedTerminalJob(env, { shopId: 'shop-g', completedAt: inMonth(2, 9), status: 'COMPLETED' }),
  ];

  const first = await runMachine(env, { input: { graceHours: 1 } });
  expect(first.report).toMatchObject({ jobsArchived: 2, partsWritten: 1, objectsDeleted: 0, jobsDeleted: 0 });
  expect(first.steps[0]?.delete?.eligible).toBe(0);
  for (const j of jobs) {
    expect((await readIndex(env, j.shopId, monthOf(j)))?.jobs[j.jobId]?.[0]?.deleted_at).toBeNull();
    expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual(j.keys);
  }

  // Later runs start later: the steps' clock and the executions' start time move together (a `now`
  // in the future is refused, so time cannot be skipped through the input).
  env.advance(HOUR / 2);
  const halfHourLater = await runMachine(env, { input: { graceHours: 1 } });
  expect(halfHourLater.report).toMatchObject({ jobsArchived: 0, jobsSkipped: 2, objectsDeleted: 0 });

  env.advance(HOUR + HOUR / 2);
  const twoHoursLater = await runMachine(env, { input: { graceHours: 1 } });
  expect(twoHoursLater.report).toMatchObject({
    jobsArchived: 0,
    jobsSkipped: 2,
    partsWritten: 0,
    objectsDeleted: jobs.reduce((n, j) => n + j.keys.length, 0),
    jobsDeleted: 2,
  });
  for (const j of jobs) {
    const index = await readIndex(env, j.shopId, monthOf(j));
    expect(index?.parts).toHaveLength(1);
    expect(index?.jobs[j.jobId]?.[0]?.deleted_at).not.toBeNull();
    expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
  }
});

test('a job retried after commit, before delete, keeps its new objects and is re-archived with its new completed_at', async () => {
  const env = await archiverEnv();
  const retried = await seedTerminalJob(env, { shopId: 'shop-r', completedAt: inMonth(3, 10) });
  const other = await seedTerminalJob(env, { shopId: 'shop-r', completedAt: inMonth(3, 11) });
  const firstHot = await hotState(env, retried.jobId);
  const firstCompletion = retried.completedAt;
  const oldKeys = [...retried.keys];
  let newKey = '';

  const first = await runMachine(env, {
    hooks: {
      delete: async () => {
        if (newKey === '') newKey = await retryJob(env, retried, inMonth(2, 15));
      },
    },
  });
  const group = first.results[0] as GroupDone;
  // The batch listed the job's objects before the retry wrote its new one: that one is never a
  // candidate (so not counted as kept), and only listed objects matching the archive are deleted.
  expect(group.delete).toMatchObject({ objectsKept: 0, jobsCompleted: 2 });
  expect(first.steps[0]?.delete?.eligible).toBe(2);
  expect(group.delete.objectsDeleted).toBe(oldKeys.length + other.keys.length);
  // Only what was archived went; the retry's object stayed.
  expect(await listKeys(env.s3, env.bucket, jobPrefix(retried.jobId))).toEqual([newKey]);
  const firstIndex = await readIndex(env, 'shop-r', firstCompletion.slice(0, 7));
  expect(firstIndex?.jobs[retried.jobId]).toHaveLength(1);
  expect(firstIndex?.jobs[retried.jobId]?.[0]).toMatchObject({ completed_at: firstCompletion });
  const secondHot = await hotState(env, retried.jobId);

  const second = await runMachine(env);
  expect(second.report).toMatchObject({ jobsArchived: 1, jobsSkipped: 1, partsWritten: 1 });
  const secondIndex = await readIndex(env, 'shop-r', monthOf(retried));
  const entry = secondIndex?.jobs[retried.jobId]?.[0];
  const part = secondIndex?.parts[0];
  if (!entry || !part) throw new Error('retried job not re-archived');
  expect(entry).toMatchObject({ completed_at: retried.completedAt, sources: [] }); // deleted: manifest dropped
  expect(entry.deleted_at).not.toBeNull();
  const record = (await memberAt(env, part.key, entry, { type: 'job', jobId: retried.jobId }))
    .record as JobRecord;
  expect(record.sources).toEqual([expect.objectContaining({ key: newKey })]);
  expect(record.details).toEqual(secondHot.details);
  // The first archival is untouched and still holds what the job had then.
  const again = await readIndex(env, 'shop-r', firstCompletion.slice(0, 7));
  expect(again?.jobs[retried.jobId]).toEqual(firstIndex?.jobs[retried.jobId]);
  const firstEntry = again?.jobs[retried.jobId]?.[0];
  const firstPart = again?.parts[0];
  if (!firstEntry || !firstPart) throw new Error('first archival lost');
  expect(
    (
      (await memberAt(env, firstPart.key, firstEntry, { type: 'job', jobId: retried.jobId }))
        .record as JobRecord
    ).details,
  ).toEqual(firstHot.details);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(retried.jobId))).toEqual([]);
});

test('a job retried between Plan and its archive stage is left for a later run; the rest of its group is archived', async () => {
  const env = await archiverEnv();
  const retried = await seedTerminalJob(env, { shopId: 'shop-p', completedAt: inMonth(3, 10) });
  const other = await seedTerminalJob(env, { shopId: 'shop-p', completedAt: inMonth(3, 12) });
  const plannedMonth = monthOf(retried);
  let done = false;

  const first = await runMachine(env, {
    hooks: {
      archive: async ({ group }) => {
        if (done || group.month !== plannedMonth) return;
        done = true;
        await retryJob(env, retried, inMonth(2, 1));
      },
    },
  });
  const group = first.steps.find((g) => g.group.month === plannedMonth);
  expect(group?.archive).toMatchObject({
    planned: 2,
    changedSincePlan: 1,
    summary: { archived: 1, skipped: 1 },
  });
  const index = await readIndex(env, 'shop-p', plannedMonth);
  expect(Object.keys(index?.jobs ?? {})).toEqual([other.jobId]);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(retried.jobId))).toEqual(retried.keys);

  const second = await runMachine(env);
  expect(second.report).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  expect((await readIndex(env, 'shop-p', monthOf(retried)))?.jobs[retried.jobId]).toHaveLength(1);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(retried.jobId))).toEqual([]);
});

test('jobs redriven while they wait for their grace period: the delete run plans them from their retry entries, deletes only what was archived, and every reader still sees every object', async () => {
  const env = await archiverEnv();
  const completed = await seedTerminalJob(env, { shopId: 'shop-w', completedAt: inMonth(2, 4) });
  const running = await seedTerminalJob(env, { shopId: 'shop-w', completedAt: inMonth(2, 5) });
  const month = monthOf(completed);
  const archivedKeys = [...completed.keys];
  const first = await runMachine(env, { input: { graceHours: 1 }, keepWatermark: true });
  expect(first.report).toMatchObject({ jobsArchived: 2, objectsDeleted: 0 });

  // During the grace period: one job redriven and completed again (a new object, a new completion
  // not due yet); the other back to IN_PROGRESS with nothing written yet.
  const newKey = await retryJob(env, completed, new Date(Date.now() - HOUR));
  await env.ddb.send(
    new UpdateCommand({
      TableName: env.table,
      Key: { pk: jobPk(running.shopId), sk: jobSk(running.jobId) },
      UpdateExpression: 'SET job_status = :s',
      ExpressionAttributeValues: { ':s': 'IN_PROGRESS' },
    }),
  );
  const want = {
    completed: await hotState(env, completed.jobId),
    running: await hotState(env, running.jobId),
  };

  env.advance(2 * HOUR);
  const del = await runMachine(env, { input: { graceHours: 1 }, keepWatermark: true });
  expect(del.run.status).toBe('SUCCEEDED');
  expect(del.report).toMatchObject({
    jobsPlanned: 2,
    jobsArchived: 0,
    jobsDeleted: 2,
    objectsDeleted: archivedKeys.length + running.keys.length,
  });
  // No row read at Plan; the delete step reads the one row whose prefix changed (the retry's object):
  // a new completion, so what its entry archived goes and the retry's object stays for its own.
  expect(del.report?.requests.byType?.['dynamodb.BatchGetItem']).toBe(1);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(completed.jobId))).toEqual([newKey]);
  expect(await listKeys(env.s3, env.bucket, jobPrefix(running.jobId))).toEqual([]);
  const index = await readIndex(env, 'shop-w', month);
  for (const j of [completed, running]) expect(index?.jobs[j.jobId]?.[0]?.deleted_at).not.toBeNull();
  // Readers lose nothing: the first archival and (for the retried job) its hot object.
  const reader = new JobDetailsReader(env.s3, env.bucket);
  for (const [j, w] of [
    [completed, want.completed],
    [running, want.running],
  ] as const) {
    // Created before its first completion (the retried job's archival is in an earlier month).
    const createdAt = new Date(Date.parse(`${month}-01T00:00:00Z`)).toISOString();
    const seen = await reader.readAllDetails({
      shopId: j.shopId,
      jobId: j.jobId,
      completedAt: j.completedAt,
      createdAt,
    });
    expect(seen.details).toEqual(w.details);
  }
});
