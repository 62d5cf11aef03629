import { getJob } from '../../shared/jobs';
import { JobDetailsReader } from '../../shared/reader';
import {
  archiverEnv,
  daysAgo,
  listKeys,
  retryJob,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * The reader on what the real archiver steps wrote (plan → archive → verify → commit → delete, driven
 * like the state machine by test/support/archiver-fixtures.ts), not on a hand-built fixture.
 */
describe('JobDetailsReader on archives written by the archiver', () => {
  it('same details before and after archival; a retry after archival reads as both, then archive', async () => {
    const env = await archiverEnv();
    const shopId = 'reader-shop.myshopify.com';
    const job = await seedTerminalJob(env, {
      shopId,
      completedAt: daysAgo(40),
      flushes: 3,
      platformData: { indexer: { v: 7 } },
    });
    const row = await getJob(env.ddb, env.table, shopId, job.jobId, { consistentRead: true });
    if (!row?.completed_at) throw new Error('seeded job has no completion');
    const reader = new JobDetailsReader(env.s3, env.bucket);
    const q = { shopId, jobId: job.jobId, completedAt: row.completed_at, createdAt: row.created_at };

    const before = await reader.readAllDetails(q);
    expect(before.provenance.source).toBe('hot');
    expect(before.details?.chunk_ids).toEqual(['p0', 'p1', 'p2']);

    const first = await runMachine(env);
    expect(first.report?.jobsArchived).toBe(1);
    expect(await listKeys(env.s3, env.bucket, `job-details/${job.jobId}/`)).toEqual([]);

    // Archived and deleted: hot List (empty) + index + one ranged GET (created and completed in the
    // same month here, unless the seed's hour straddles a month boundary: then the earlier month's index
    // and shared index (404) and its part prefix (empty) are 3 more).
    const after = await reader.readAllDetails(q);
    expect(after.details).toEqual(before.details);
    expect(after.provenance.source).toBe('archive');
    expect(after.provenance.parts).toHaveLength(1);
    expect(after.provenance.requests).toBe(q.createdAt.slice(0, 7) === q.completedAt.slice(0, 7) ? 3 : 6);

    const pd = await reader.readPlatformData(q);
    expect(pd).toMatchObject({ data: { indexer: { v: 7 } }, provenance: { source: 'archive' } });

    // The row has expired: no completion known, the shop's indexes are searched.
    const expired = await reader.lookup({ shopId, jobId: job.jobId });
    expect(expired).toMatchObject({
      details: before.details,
      platformData: { indexer: { v: 7 } },
      detailsSource: 'archive',
      archivedJob: { status: job.status, completed_at: row.completed_at },
    });
    expect(expired.archivals).toHaveLength(1);

    // Retried after archival: the new flush is hot, the first run's data archived.
    await retryJob(env, job, daysAgo(35));
    const retried = await getJob(env.ddb, env.table, shopId, job.jobId, { consistentRead: true });
    if (!retried?.completed_at) throw new Error('retried job has no completion');
    const q2 = { shopId, jobId: job.jobId, completedAt: retried.completed_at, createdAt: retried.created_at };
    const both = await reader.readAllDetails(q2);
    expect(both.provenance.source).toBe('both');
    expect(both.details?.chunk_ids).toEqual(['p0', 'p1', 'p2', 'timeout']);
    expect(both.details?.failed.retry).toEqual([`${job.jobId}-r`]);

    // Archived again: two archivals, merged from the archive alone.
    const second = await runMachine(env);
    expect(second.report?.jobsArchived).toBe(1);
    const twice = await reader.lookup(q2);
    expect(twice.archivals).toHaveLength(2);
    expect(twice.details).toEqual(both.details);
    expect(twice.detailsSource).toBe('archive');
    expect(twice.hotKeys).toEqual([]);
  });

  it('a job with no details reads the same (null) hot and archived', async () => {
    const env = await archiverEnv();
    const shopId = 'reader-empty.myshopify.com';
    const job = await seedTerminalJob(env, {
      shopId,
      completedAt: daysAgo(40),
      status: 'COMPLETED',
      flushes: 2,
      withDetails: false,
      platformData: null,
    });
    expect(job.keys).toEqual([]); // flushes without details write no object
    const reader = new JobDetailsReader(env.s3, env.bucket);
    const q = { shopId, jobId: job.jobId, completedAt: job.completedAt };
    const hot = await reader.readAllDetails(q);
    expect(hot.details).toBeNull();

    const run = await runMachine(env);
    expect(run.report?.jobsArchived).toBe(1);
    const archived = await reader.readAllDetails(q);
    expect(archived.details).toEqual(hot.details);
    expect(archived.provenance.source).toBe('archive');
  });
});
