import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { WATERMARK_KEY } from '../../shared/archive/format';
import { SWEEP_EVERY_MS, SWEEP_WITH_WALK_MS } from '../../shared/archive/steps/plan/orphans';
import type { RunReport } from '../../shared/archive/steps/types';
import {
  archiverEnv,
  DAY,
  getBytes,
  hotListsDuring,
  listKeys,
  runLocal,
  runMachine,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * When the orphan sweep (docs/steady-state.md) walks the hot prefix, through the synthesized state
 * machine: in the walk a run makes for its planned jobs anyway once the last sweep is a week old, and
 * on its own (an idle run too) only once it is a month old. Idle days in between list nothing.
 */
jest.setTimeout(240_000);

const runs = setUpMachineRuns();

/** A run, and the LISTs of the hot prefix it sent. */
const run = async (input: Record<string, unknown>) => {
  const { value: r, hotLists } = await hotListsDuring(runs.env, () =>
    runLocal(runs.env, {
      input: { graceHours: 0, wholeMonths: false, olderThanDays: 30, ...input },
      definition: runs.definition,
    }),
  );
  expect(r.handlerErrors).toEqual([]);
  expect(r.status).toBe('SUCCEEDED');
  return { report: r.output as RunReport, hotLists };
};

const sweptAt = async (): Promise<string | undefined> =>
  (
    JSON.parse((await getBytes(runs.env.s3, runs.env.bucket, WATERMARK_KEY)).toString('utf8')) as {
      sweptAt?: string;
    }
  ).sweptAt;

/** `days` after the real now. */
const at = (days: number) => new Date(Date.now() + days * DAY);

test('the orphan sweep rides the walk of a run with jobs after a week, and runs on its own only after a month', async () => {
  expect(SWEEP_WITH_WALK_MS).toBe(7 * DAY);
  expect(SWEEP_EVERY_MS).toBe(31 * DAY);
  const first = await seedTerminalJob(runs.env, { shopId: 'cadence', completedAt: at(-40) });
  // The first run ever sweeps (no sweep recorded), in the walk that lists its job's objects.
  const start = await run({});
  expect(start.report).toMatchObject({ jobsArchived: 1, objectsDeleted: first.keys.length });
  expect(start.hotLists).toHaveLength(1);
  const firstSweep = await sweptAt();
  expect(firstSweep).toBeDefined();

  // Eight days on by the handlers' clock (sweeps and grace follow it), nothing new: no walk, no report filed, the sweep time stays.
  runs.env.advance(8 * DAY);
  const idle = await run({});
  expect(idle.report).toMatchObject({ jobsPlanned: 0, reportKey: null });
  expect(idle.hotLists).toEqual([]);
  expect(await sweptAt()).toBe(firstSweep);

  // A day later a job comes due (completed after the last run's cutoff, before this one's): its run
  // walks the prefix for its objects, and that one walk is the sweep (a week has passed since the last).
  // (A run's cutoff follows the real time of its execution: `olderThanDays` moves it.)
  runs.env.advance(DAY);
  const due = await seedTerminalJob(runs.env, { shopId: 'cadence', completedAt: at(-29.5) });
  const active = await run({ olderThanDays: 29 });
  expect(active.report).toMatchObject({
    jobsArchived: 1,
    objectsDeleted: due.keys.length,
    orphansPlanned: 0,
  });
  expect(active.hotLists).toHaveLength(1);
  const walkSweep = await sweptAt();
  expect(Date.parse(walkSweep ?? '')).toBeGreaterThanOrEqual(Date.parse(firstSweep ?? '') + 9 * DAY);

  // Twenty days later (under the old weekly rule, three sweeps): idle runs list nothing.
  runs.env.advance(20 * DAY);
  const quiet = await run({ olderThanDays: 29 });
  expect(quiet.report).toMatchObject({ jobsPlanned: 0 });
  expect(quiet.hotLists).toEqual([]);
  expect(await sweptAt()).toBe(walkSweep);

  // A month after the last sweep with no month coming due: the run sweeps on its own.
  runs.env.advance(11 * DAY);
  const alone = await run({ olderThanDays: 29 });
  expect(alone.report).toMatchObject({ jobsPlanned: 0, orphansPlanned: 0 });
  expect(alone.hotLists).toHaveLength(1);
  expect(Date.parse((await sweptAt()) ?? '')).toBeGreaterThanOrEqual(Date.parse(walkSweep ?? '') + 31 * DAY);
  expect(await listKeys(runs.env.s3, runs.env.bucket, 'job-details/')).toEqual([]);
  runs.env.advance(-40 * DAY);
});

test('a run whose first page plans nothing sweeps in the walk of its first page with jobs', async () => {
  // One row a page: page 0 reads a row not due yet, page 1 the due job. The state Plan hands to its
  // next page goes through the machine (parsed again), and the week-old sweep must still ride page 1.
  const env = await archiverEnv({ planPageJobs: 1 });
  const machine = (olderThanDays: number) =>
    runMachine(env, { input: { graceHours: 0, wholeMonths: false, olderThanDays }, keepWatermark: true });
  const watermarkSweep = async () =>
    (JSON.parse((await getBytes(env.s3, env.bucket, WATERMARK_KEY)).toString('utf8')) as { sweptAt?: string })
      .sweptAt;
  // Completed inside the key slack past run 3's cutoff (29 days): read on its page 0, not due.
  await seedTerminalJob(env, { shopId: 'paged', completedAt: at(-28.5), status: 'COMPLETED' });
  // An orphan: its row gone (as by TTL; DynamoDB Local never expires), its objects still hot.
  const orphan = await seedTerminalJob(env, { shopId: 'paged', completedAt: at(-3) });
  await env.ddb.send(
    new DeleteCommand({ TableName: env.table, Key: { pk: 'SHOP#paged', sk: `JOB#${orphan.jobId}` } }),
  );
  try {
    expect((await machine(30)).report).toMatchObject({ jobsPlanned: 0, orphansPlanned: 0 });
    // 85 days on: a sweep of its own (the last is over a month old); the orphan is younger than jobTtlDays.
    env.advance(85 * DAY);
    expect((await machine(30)).report).toMatchObject({ jobsPlanned: 0, orphansPlanned: 0 });
    const before = await watermarkSweep();
    // 8 more days: the orphan is old enough, the sweep a week old — due with the walk of a page with jobs.
    env.advance(8 * DAY);
    const due = await seedTerminalJob(env, { shopId: 'paged', completedAt: at(-29.5) });
    const third = await machine(29);
    expect(third.pages[0]?.batches).toBe(0);
    expect(third.report).toMatchObject({ jobsArchived: 2, orphansPlanned: 1, groupsFailedCount: 0 });
    expect(Date.parse((await watermarkSweep()) ?? '')).toBeGreaterThanOrEqual(
      Date.parse(before ?? '') + 8 * DAY,
    );
    expect(await listKeys(env.s3, env.bucket, `job-details/${orphan.jobId}/`)).toEqual([]);
    expect(await listKeys(env.s3, env.bucket, `job-details/${due.jobId}/`)).toEqual([]);
  } finally {
    env.advance(-93 * DAY);
  }
});
