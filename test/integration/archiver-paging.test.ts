import { decodeCursor } from '../../shared/archive/steps/plan/cursor';
import { jobPrefix } from '../../shared/details';
import {
  archiverEnv,
  inMonth,
  listKeys,
  readIndex,
  runMachine,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Plan pages: limited by jobs read and by groups, resumed from an item-level cursor, across the three
 * terminal statuses. Every eligible job is planned exactly once and archived exactly once.
 */
jest.setTimeout(120_000);

test('small page limits: many pages, each within its limits, every job archived exactly once', async () => {
  const env = await archiverEnv({ planPageGroups: 2, planPageJobs: 3 });
  const jobs: SeededJob[] = [];
  const statuses = ['FAILED', 'COMPLETED', 'CONFLICT'] as const;
  let day = 1;
  for (const shopId of ['shop-1', 'shop-2', 'shop-3']) {
    for (const monthsBack of [2, 3]) {
      for (const status of statuses.slice(0, shopId === 'shop-2' ? 3 : 1)) {
        jobs.push(
          await seedTerminalJob(env, { shopId, completedAt: inMonth(monthsBack, day++), status, flushes: 1 }),
        );
      }
    }
  }

  const { report, pages, results } = await runMachine(env);
  expect(pages.length).toBeGreaterThan(3);
  for (const p of pages) {
    expect(p.planned.length).toBeLessThanOrEqual(2);
    expect(p.planned.reduce((n, g) => n + g.jobCount, 0)).toBeLessThanOrEqual(3);
    if (p.cursor !== null) expect(decodeCursor(p.cursor).statusIndex).toBeGreaterThanOrEqual(0);
  }
  expect(pages.at(-1)?.cursor).toBeNull();
  expect(pages.reduce((n, p) => n + p.planned.reduce((m, g) => m + g.jobCount, 0), 0)).toBe(jobs.length);
  expect(report).toMatchObject({
    pages: pages.length,
    jobsPlanned: jobs.length,
    jobsArchived: jobs.length,
    groupsFailedCount: 0,
    partsWritten: results.length,
  });
  for (const j of jobs) {
    const index = await readIndex(env, j.shopId, j.completedAt.slice(0, 7));
    expect(index?.jobs[j.jobId]).toHaveLength(1);
    expect(index?.jobs[j.jobId]?.[0]?.deleted_at).not.toBeNull();
    expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
  }

  // Nothing left to do: a second run plans the same jobs and skips them all.
  const again = await runMachine(env);
  expect(again.report).toMatchObject({
    jobsPlanned: jobs.length,
    jobsSkipped: jobs.length,
    jobsArchived: 0,
    partsWritten: 0,
  });
});
