import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { partWrittenAt } from '../../shared/archive/format';
import { ArchiveExpiredError, CorruptObjectError } from '../../shared/errors';
import { getJob } from '../../shared/jobs';
import { JobDetailsReader } from '../../shared/reader';
import { retentionDays } from '../../shared/settings';
import { archiverEnv, daysAgo, listKeys, runMachine, seedTerminalJob } from '../support/archiver-fixtures';

/**
 * Retention expires parts first and their month index a month later (infra/construct/details-bucket.ts),
 * so for a while an index names parts that are gone. s3rver has no lifecycle: the part is deleted here
 * as the rule would, and the reader is asked at a time past the horizon (its injected clock).
 */
describe('reader past the retention horizon', () => {
  it('a part older than retentionMonths is expired (present or not), not damage; a missing younger one is still damage', async () => {
    const env = await archiverEnv();
    const shopId = 'retention-shop.myshopify.com';
    const job = await seedTerminalJob(env, { shopId, completedAt: daysAgo(40), flushes: 2 });
    const row = await getJob(env.ddb, env.table, shopId, job.jobId, { consistentRead: true });
    if (!row?.completed_at) throw new Error('seeded job has no completion');
    const q = { shopId, jobId: job.jobId, completedAt: row.completed_at };
    expect((await runMachine(env)).report?.jobsArchived).toBe(1);

    const [part] = await listKeys(env.s3, env.bucket, 'job-details-cold/');
    if (!part) throw new Error('no part written');
    const written = partWrittenAt(part);
    if (!written) throw new Error(`part key ${part} carries no time`);
    const past = new Date(written.getTime() + (retentionDays(12) + 1) * 86_400_000);
    const later = new JobDetailsReader(env.s3, env.bucket, { retentionMonths: 12, clock: () => past });
    // Present past the horizon (the rule has not run yet): not served either — expired, no request
    // for the part (issue 31: a reader must not serve what retention has ended).
    await expect(later.readAllDetails(q)).rejects.toBeInstanceOf(ArchiveExpiredError);

    await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: part }));
    expect(await listKeys(env.s3, env.bucket, 'job-details-index/')).not.toEqual([]);
    const expired = later.readAllDetails(q);
    await expect(expired).rejects.toBeInstanceOf(ArchiveExpiredError);
    await expect(expired).rejects.toMatchObject({
      name: 'ArchiveExpiredError',
      key: part,
      retentionMonths: 12,
      writtenAt: written.toISOString(),
    });
    // Within the horizon, or with no retention, a missing committed part is damage.
    const within = new JobDetailsReader(env.s3, env.bucket, {
      retentionMonths: 12,
      clock: () => new Date(written.getTime() + 30 * 86_400_000),
    });
    await expect(within.readAllDetails(q)).rejects.toBeInstanceOf(CorruptObjectError);
    const forever = new JobDetailsReader(env.s3, env.bucket, { clock: () => past });
    await expect(forever.readAllDetails(q)).rejects.toBeInstanceOf(CorruptObjectError);
  });
});

test('partWrittenAt reads the creation time from a part name', () => {
  expect(
    partWrittenAt('job-details-cold/s.myshopify.com/2026-01/part-20260215T030000Z-abcdefgh.jsonl.gz'),
  ).toEqual(new Date('2026-02-15T03:00:00Z'));
  expect(partWrittenAt('job-details-index/s/2026-01/index.json')).toBeNull();
});
