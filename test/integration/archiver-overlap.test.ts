import { parsePartKey } from '../../shared/archive/format';
import type { RunReport } from '../../shared/archive/steps/types';
import { JobDetailsReader } from '../../shared/reader';
import {
  daysAgo,
  forgetWatermark,
  hotState,
  listKeys,
  readIndex,
  runLocal,
  type SeededJob,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * Two executions of the synthesized state machine at once over the same data (a manual run beside
 * the schedule). There is no lease: every write that could conflict is conditional — parts are
 * write-once (If-None-Match), the month index is a compare-and-swap (If-Match / If-None-Match, which
 * the local S3 enforces as S3 does), a commit adds only jobs not already committed with the same
 * completed_at, and deletes are conditional on each object's ETag. So the runs may duplicate work,
 * never data: every part either is in its index or is collected later, and each job is committed once.
 */
jest.setTimeout(240_000);

const machine = setUpMachineRuns();

const seedFleet = async (): Promise<SeededJob[]> => {
  const jobs: SeededJob[] = [];
  for (const shopId of ['ov-a', 'ov-b', 'ov-c']) {
    for (const days of [40, 50, 70])
      jobs.push(await seedTerminalJob(machine.env, { shopId, completedAt: daysAgo(days), flushes: 2 }));
  }
  return jobs;
};

/** Every part stored is in its month index, and each job has exactly one (undeleted or deleted) entry. */
const expectConsistent = async (jobs: readonly SeededJob[]) => {
  for (const key of await listKeys(machine.env.s3, machine.env.bucket, 'job-details-cold/')) {
    const p = parsePartKey(key);
    if (!p) throw new Error(`not a part key: ${key}`);
    const index = await readIndex(machine.env, p.shopId, p.month);
    expect(index?.parts.map((x) => x.name)).toContain(p.partName);
  }
  expect(await listKeys(machine.env.s3, machine.env.bucket, 'job-details-index/')).not.toEqual(
    expect.arrayContaining([expect.stringMatching(/\/pending\//)]),
  );
  for (const j of jobs) {
    const index = await readIndex(machine.env, j.shopId, j.completedAt.slice(0, 7));
    expect(index?.jobs[j.jobId]).toHaveLength(1);
  }
};

test('two runs at once, same and different cutoffs: every part committed, every job once, readers see each job as before', async () => {
  const jobs = await seedFleet();
  const before = new Map<string, Awaited<ReturnType<typeof hotState>>>();
  for (const j of jobs) before.set(j.jobId, await hotState(machine.env, j.jobId));

  // Same cutoff, the default grace period: both may archive and commit the same groups. (Deletes wait
  // for the grace period, which is why it must outlast a run: a delete racing another run's read of
  // the same objects would make that run quarantine or fail the job — loudly, and the next run
  // converges — but there is no reason to provoke it.)
  const same = await Promise.all([
    runLocal(machine.env, { definition: machine.definition, input: { olderThanDays: 30, graceHours: 1 } }),
    runLocal(machine.env, { definition: machine.definition, input: { olderThanDays: 30, graceHours: 1 } }),
  ]);
  for (const r of same) {
    expect(r.unexpectedErrors).toEqual([]);
    expect(r.status).toBe('SUCCEEDED');
  }
  const archived = same.reduce((n, r) => n + (r.output as RunReport).jobsArchived, 0);
  expect(archived).toBeGreaterThanOrEqual(jobs.length); // both may build a part; each job commits once
  await expectConsistent(jobs);

  // Different cutoffs, after more jobs came due (seeded with past completions, which no live writer
  // does: the runs plan from the beginning).
  const more = await seedFleet();
  await forgetWatermark(machine.env);
  for (const j of more) before.set(j.jobId, await hotState(machine.env, j.jobId));
  const runs = await Promise.all([
    runLocal(machine.env, { definition: machine.definition, input: { olderThanDays: 30, graceHours: 1 } }),
    runLocal(machine.env, { definition: machine.definition, input: { olderThanDays: 60, graceHours: 1 } }),
  ]);
  for (const r of runs) {
    expect(r.unexpectedErrors).toEqual([]);
    expect(r.status).toBe('SUCCEEDED');
  }
  await expectConsistent([...jobs, ...more]);

  // A run with no grace period deletes the sources of everything committed: nothing is left hot,
  // and each job reads back from the archive exactly as it was. (Planned from the beginning: the runs
  // above put their jobs on the retry list for after the grace period, an hour from now.)
  await forgetWatermark(machine.env);
  const last = await runLocal(machine.env, {
    definition: machine.definition,
    input: { olderThanDays: 30, graceHours: 0 },
  });
  expect(last.status).toBe('SUCCEEDED');
  const reader = new JobDetailsReader(machine.env.s3, machine.env.bucket);
  for (const j of [...jobs, ...more]) {
    expect(await listKeys(machine.env.s3, machine.env.bucket, `job-details/${j.jobId}/`)).toEqual([]);
    const read = await reader.readAllDetails({
      shopId: j.shopId,
      jobId: j.jobId,
      completedAt: j.completedAt,
    });
    expect(read.provenance.source).toBe('archive');
    expect(read.details).toEqual(before.get(j.jobId)?.details);
  }
});
