import { DeleteObjectsCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { monthIndexKey } from '../../shared/archive/format';
import type { RunReport } from '../../shared/archive/steps/types';
import { JobDetailsReader } from '../../shared/reader';
import { MAX_CLOCK_SKEW_MS } from '../../shared/reader/query';
import {
  daysAgo,
  hotState,
  inMonth,
  listKeys,
  monthOfDate,
  runLocal,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * Issue 25, cases 7 and 8: readers degrade, never hide. Two writers' clocks may put `created_at` a
 * little after `completed_at`; a damaged archive (part block, month index) must not hide hot objects
 * that are still intact — the hot copy answers, the damage is in `provenance.warnings`; with nothing
 * readable left the read still throws the typed error. Jobs archived by the synthesized state machine.
 */
jest.setTimeout(180_000);

const machine = setUpMachineRuns();

const run = async (graceHours: number): Promise<RunReport> => {
  const r = await runLocal(machine.env, {
    definition: machine.definition,
    input: { olderThanDays: 30, graceHours },
  });
  expect(r.status).toBe('SUCCEEDED');
  return r.output as RunReport;
};

const later = (iso: string, ms: number): string => new Date(Date.parse(iso) + ms).toISOString();

test('created_at one second after completed_at (clock skew) reads, hot and archived; far beyond the bound is refused', async () => {
  const { env } = machine;
  const shopId = 'skew-shop';
  const archivedJob = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 3) });
  const hotJob = await seedTerminalJob(env, { shopId, completedAt: daysAgo(1) });
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const skewed = (j: { jobId: string; completedAt: string }, ms: number) => ({
    shopId,
    jobId: j.jobId,
    completedAt: j.completedAt,
    createdAt: later(j.completedAt, ms),
  });
  const hotWant = await hotState(env, hotJob.jobId);
  const archivedWant = await hotState(env, archivedJob.jobId);
  await run(0);
  expect(await listKeys(env.s3, env.bucket, `job-details/${archivedJob.jobId}/`)).toEqual([]);

  const hot = await reader.lookup(skewed(hotJob, 1000));
  expect(hot).toMatchObject({ details: hotWant.details, detailsSource: 'hot' });
  expect((await reader.readAllDetails(skewed(hotJob, 1000))).details).toEqual(hotWant.details);
  const archived = await reader.lookup(skewed(archivedJob, 1000));
  expect(archived).toMatchObject({
    details: archivedWant.details,
    platformData: archivedWant.platformData,
    detailsSource: 'archive',
  });
  // The bound (1 h) holds; past it the caller passed the wrong times: typed error, before any request.
  expect(MAX_CLOCK_SKEW_MS).toBe(3_600_000);
  expect((await reader.readAllDetails(skewed(archivedJob, MAX_CLOCK_SKEW_MS))).details).toEqual(
    archivedWant.details,
  );
  await expect(reader.readAllDetails(skewed(archivedJob, MAX_CLOCK_SKEW_MS + 1))).rejects.toMatchObject({
    name: 'InvalidInputError',
    field: 'createdAt',
  });
});

test('a damaged part or month index lets the intact hot copy through, with the damage in provenance; nothing readable left is a typed error', async () => {
  const { env } = machine;
  const shopId = 'damaged-archive-shop';
  const completed = inMonth(2, 20);
  const job = await seedTerminalJob(env, { shopId, completedAt: completed });
  const want = await hotState(env, job.jobId);
  // Committed, not deleted (grace period): the hot objects are still there.
  const report = await run(1000);
  expect(report.jobsDeleted).toBe(0);
  const [partKey, ...more] = await listKeys(env.s3, env.bucket, `job-details-cold/${shopId}/`);
  expect(more).toEqual([]);
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const q = { shopId, jobId: job.jobId, completedAt: job.completedAt };
  expect(await reader.lookup(q)).toMatchObject({ detailsSource: 'both', provenance: { warnings: [] } });

  const get = async (key: string) =>
    Buffer.from(
      await ((
        await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: key }))
      ).Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array(0))),
    );
  const put = (key: string, body: Uint8Array) =>
    env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: body }));

  // A same-size byte flip inside the part's compressed data.
  const part = await get(partKey as string);
  const flipped = Buffer.from(part);
  const at = Math.floor(flipped.length / 2);
  flipped[at] = (flipped[at] as number) ^ 0xff;
  await put(partKey as string, flipped);
  const damaged = await reader.lookup(q);
  expect(damaged).toMatchObject({
    details: want.details,
    platformData: want.platformData,
    detailsSource: 'hot',
    platformDataSource: 'hot',
  });
  expect(damaged.provenance.warnings).toEqual([expect.stringMatching(/archive damaged.*job-details-cold/)]);
  const details = await reader.readAllDetails(q);
  expect(details.details).toEqual(want.details);
  expect(details.provenance.warnings).toHaveLength(1);

  // A month index that does not parse: same.
  const indexKey = monthIndexKey(shopId, monthOfDate(completed));
  const index = await get(indexKey);
  await put(indexKey, Buffer.from('not an index'));
  const noIndex = await reader.lookup(q);
  expect(noIndex).toMatchObject({ details: want.details, detailsSource: 'hot' });
  expect(noIndex.provenance.warnings).toEqual([expect.stringMatching(/archive damaged.*index\.json/)]);
  await put(indexKey, index);

  // Nothing hot left and the part damaged: the read throws the typed error naming the part.
  await env.s3.send(
    new DeleteObjectsCommand({
      Bucket: env.bucket,
      Delete: { Objects: job.keys.map((Key) => ({ Key })) },
    }),
  );
  await expect(reader.lookup(q)).rejects.toMatchObject({ name: 'CorruptObjectError' });
  await expect(reader.readAllDetails(q)).rejects.toMatchObject({ name: 'CorruptObjectError' });
});
