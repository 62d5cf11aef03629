import { resolveArchiveProps } from '../../infra/construct/props-validation';
import { jobPrefix } from '../../shared/details';
import {
  archiverEnv,
  DAY,
  listKeys,
  readIndex,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * The deployed default, `wholeMonths: true` (the construct's default, which reaches the handlers as
 * JDA_WHOLE_MONTHS): a run archives whole months only — its cutoff is rounded down to the start of the
 * month `olderThanDays` falls in, so a month is archived once, in one part per shop, never in slices.
 * Other tests run with it off (test/setup/env.ts) to archive jobs a few days past an exact cutoff.
 */
jest.setTimeout(120_000);

test('with the deployed default a run archives whole months; the run input can turn it off', async () => {
  const { wholeMonths } = resolveArchiveProps({});
  expect(wholeMonths).toBe(true);
  const env = await archiverEnv({ wholeMonths, olderThanDays: 30 });

  const due = new Date(Date.now() - 30 * DAY);
  const monthStart = new Date(Date.UTC(due.getUTCFullYear(), due.getUTCMonth(), 1));
  // Past the exact cutoff but in the cutoff's own month: left for the run after that month ends.
  const partial = await seedTerminalJob(env, {
    shopId: 'shop-w',
    completedAt: new Date(monthStart.getTime() + (due.getTime() - monthStart.getTime()) / 2),
  });
  // In the month before: archived.
  const whole = await seedTerminalJob(env, {
    shopId: 'shop-w',
    completedAt: new Date(Date.UTC(due.getUTCFullYear(), due.getUTCMonth() - 1, 10, 12)),
  });

  const first = await runMachine(env);
  expect(first.run.status).toBe('SUCCEEDED');
  expect(first.report).toMatchObject({ cutoff: monthStart.toISOString(), jobsArchived: 1 });
  expect((await readIndex(env, 'shop-w', whole.completedAt.slice(0, 7)))?.jobs[whole.jobId]).toHaveLength(1);
  expect(await readIndex(env, 'shop-w', partial.completedAt.slice(0, 7))).toBeNull();
  expect(await listKeys(env.s3, env.bucket, jobPrefix(partial.jobId))).toEqual(partial.keys);

  // `wholeMonths: false` in the run input archives up to the exact cutoff.
  const exact = await runMachine(env, { input: { wholeMonths: false } });
  expect(exact.report).toMatchObject({ jobsArchived: 1 });
  expect(exact.report?.cutoff).not.toBe(monthStart.toISOString());
  expect((await readIndex(env, 'shop-w', partial.completedAt.slice(0, 7)))?.jobs[partial.jobId]).toHaveLength(
    1,
  );
});
