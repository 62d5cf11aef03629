/**
 * The jobs-table hot path against DynamoDB Local and s3rver (real JobDetailsStore). The one thing no
 * emulator produces — a transient DynamoDB error — comes from a plain injected wrapper around the
 * real client (not aws-sdk-client-mock) that throws once for UpdateItem.
 */
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { chunkIds, JobDetailsStore } from '../../shared/details';
import {
  createJob,
  type DdbSender,
  type FlushDetailsWriter,
  type FlushInput,
  findJobKeyById,
  getJob,
  JOBS_TABLE,
  MAX_CHUNKS_PER_FLUSH,
  recordFlush,
  writeTerminal,
} from '../../shared/jobs';
import { freshBucket, freshTable, testDdb, testS3 } from '../support/local';

const SHOP = 'acme-store.myshopify.com';
const T0 = new Date('2026-03-14T10:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const counts = (processed: number, failed = 0, skipped = 0, conflict = 0) => ({
  processed,
  failed,
  skipped,
  conflict,
});

const ddb = testDdb();
let table: string;
let store: JobDetailsStore;

beforeAll(async () => {
  table = await freshTable();
  store = new JobDetailsStore(testS3(), await freshBucket());
});

const newJob = async (totalItems: number, extra: { idGenerator?: () => string } = {}) =>
  (
    await createJob(
      ddb,
      table,
      { shopId: SHOP, jobType: 'full_sync', platform: 'shopify', totalItems, initiatorUserId: 'u-1' },
      { now: T0, ...extra },
    )
  ).jobId;

const deps = (detailsWriter: FlushDetailsWriter | null = store, sender: DdbSender = ddb) => ({
  ddb: sender,
  table,
  detailsWriter,
});

const withDetails: FlushInput = {
  chunkIds: ['p0', 'p1', 'preparse'],
  counts: counts(6, 2, 1, 1),
  details: {
    failed: { 'mapping-error': ['gid://shopify/Product/11', 'gid://shopify/Product/12'] },
    skipped: { 'bad-json': ['line-7'] },
    conflict: { 'version-mismatch': [{ doc_id: 'gid://shopify/Product/13', existing_version: 4 }] },
  },
};

describe('createJob / getJob / findJobKeyById', () => {
  it('writes a PENDING row found by key and by id through GSI_JobLookup_v2', async () => {
    const jobId = await newJob(10);
    const row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({
      job_id: jobId,
      job_status: 'PENDING',
      created_at: T0.toISOString(),
      status_created_at: T0.toISOString(),
      total_items: 10,
      processed_items: 0,
      initiator_user_id: 'u-1',
    });
    expect(row).not.toHaveProperty('shop_id');
    expect(await findJobKeyById(ddb, table, jobId)).toEqual({ shopId: SHOP, jobId });
    expect(await findJobKeyById(ddb, table, 'nosuchjob')).toBeNull();
    expect(await getJob(ddb, table, SHOP, 'nosuchjob')).toBeNull();
  });

  it('retries an id that already exists with a fresh one, leaving the existing job alone', async () => {
    const existing = await newJob(10);
    const ids = [existing, 'freshid0000001'];
    const r = await createJob(
      ddb,
      table,
      { shopId: SHOP, jobType: 'incremental', platform: 'shopify', totalItems: 3 },
      { now: at(1), idGenerator: () => ids.shift() as string },
    );
    expect(r).toMatchObject({ jobId: 'freshid0000001', attempts: 2 });
    expect(await getJob(ddb, table, SHOP, existing)).toMatchObject({
      job_type: 'full_sync',
      total_items: 10,
    });
    expect(await getJob(ddb, table, SHOP, 'freshid0000001')).toMatchObject({ job_type: 'incremental' });
  });
});

describe('recordFlush', () => {
  it('round trip: details to S3, counters and chunks on the row, flushes skip the GSIs', async () => {
    const jobId = await newJob(100);
    const r = await recordFlush(deps(), { shopId: SHOP, jobId, totalItems: 100 }, withDetails, {
      now: at(1),
      returnConsumedCapacity: true,
    });
    expect(r).toMatchObject({
      applied: true,
      statusFolded: true,
      jobStatus: 'IN_PROGRESS',
      counters: counts(6, 2, 1, 1),
      detailsKey: `job-details/${jobId}/${r.flushId}.json.gz`,
    });
    expect(r.terminal).toBeUndefined();
    const details = await store.readAllDetails(jobId);
    expect(details.chunk_ids).toEqual(['p0', 'p1', 'preparse']);
    expect(details.failed).toEqual(withDetails.details?.failed);
    expect(details.conflict).toEqual(withDetails.details?.conflict);

    const row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({ processed_items: 6, failed_items: 2, skipped_items: 1, conflict_items: 1 });
    expect(row?.completed_chunks).toEqual(new Set(['p0', 'p1', 'preparse']));
    expect(row).not.toHaveProperty('failed_items_details');

    // The folding flush writes the status GSI only; a plain flush writes no GSI at all.
    const folded = r.consumedCapacity?.[0]?.capacity;
    expect(Object.keys(folded?.GlobalSecondaryIndexes ?? {})).toEqual([JOBS_TABLE.gsiJobsByStatus.name]);
    const r2 = await recordFlush(
      deps(),
      { shopId: SHOP, jobId, totalItems: 100, knownStatus: 'IN_PROGRESS' },
      { chunkIds: ['p2'], counts: counts(10) },
      { now: at(2), returnConsumedCapacity: true },
    );
    expect(r2.counters).toEqual(counts(16, 2, 1, 1));
    expect(r2.consumedCapacity?.[0]?.capacity.GlobalSecondaryIndexes).toBeUndefined();
    expect(r2.consumedCapacity?.[0]?.capacity.CapacityUnits).toBe(1);
  });

  it('a chunk collision is already-applied and leaves the counters alone', async () => {
    const jobId = await newJob(100);
    const job = { shopId: SHOP, jobId, totalItems: 100 };
    await recordFlush(deps(), job, withDetails, { now: at(1) });
    const again = await recordFlush(deps(), job, withDetails, { now: at(2) });
    expect(again).toMatchObject({
      applied: false,
      reason: 'already-applied',
      collidingChunkIds: ['p0', 'p1', 'preparse'],
      counters: counts(6, 2, 1, 1),
    });
    const partial = await recordFlush(
      deps(),
      job,
      { chunkIds: ['p1', 'p9'], counts: counts(50) },
      { now: at(3) },
    );
    expect(partial).toMatchObject({ applied: false, collidingChunkIds: ['p1'] });
    const row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({ processed_items: 6, failed_items: 2, last_updated: at(1).toISOString() });
    expect(row?.completed_chunks).toEqual(new Set(['p0', 'p1', 'preparse']));
    expect((await store.listJobObjects(jobId)).filter((o) => o.kind === 'flush')).toHaveLength(1);
  });

  it('folds IN_PROGRESS into the first flush only', async () => {
    const jobId = await newJob(100);
    const job = { shopId: SHOP, jobId, totalItems: 100 };
    const first = await recordFlush(deps(null), job, { chunkIds: ['p0'], counts: counts(5) }, { now: at(1) });
    expect(first.statusFolded).toBe(true);
    // Unknown status again: the fold is rejected by the status condition and the flush is retried plain.
    const second = await recordFlush(
      deps(null),
      job,
      { chunkIds: ['p1'], counts: counts(5) },
      { now: at(2) },
    );
    expect(second).toMatchObject({
      applied: true,
      statusFolded: false,
      counters: counts(10),
      jobStatus: 'IN_PROGRESS', // learnt from the rejected fold's ALL_OLD item
    });
    const third = await recordFlush(
      deps(null),
      { ...job, knownStatus: 'IN_PROGRESS' },
      { chunkIds: ['p2'], counts: counts(5) },
      { now: at(3) },
    );
    expect(third).toMatchObject({ applied: true, statusFolded: false, jobStatus: 'IN_PROGRESS' });
    expect(await getJob(ddb, table, SHOP, jobId)).toMatchObject({
      job_status: 'IN_PROGRESS',
      started_at: at(1).toISOString(),
      status_created_at: at(1).toISOString(),
      last_updated: at(3).toISOString(),
      processed_items: 15,
    });
  });

  it('a retry after FAILED refolds IN_PROGRESS, keeps started_at and clears completed_at / ttl', async () => {
    const jobId = await newJob(10);
    const job = { shopId: SHOP, jobId, totalItems: 10 };
    const r1 = await recordFlush(deps(null), job, { chunkIds: ['p0'], counts: counts(4, 1) }, { now: at(1) });
    // An error path fails the job before it is done.
    const failed = await writeTerminal(
      ddb,
      table,
      { shopId: SHOP, jobId, counters: r1.counters },
      { now: at(2) },
    );
    expect(failed).toMatchObject({ status: 'FAILED', written: true });
    expect(await getJob(ddb, table, SHOP, jobId)).toHaveProperty('ttl');

    const redrive = await recordFlush(
      deps(null),
      { ...job, knownStatus: 'FAILED' },
      { chunkIds: ['p1'], counts: counts(2) },
      { now: at(3) },
    );
    expect(redrive).toMatchObject({ applied: true, statusFolded: true, jobStatus: 'IN_PROGRESS' });
    const row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({
      job_status: 'IN_PROGRESS',
      started_at: at(1).toISOString(),
      status_created_at: at(3).toISOString(),
    });
    expect(row).not.toHaveProperty('completed_at');
    expect(row).not.toHaveProperty('ttl');
  });

  it('redrive protocol: the fold un-counts the retried items, sets retry_attribution once, and the job ends again', async () => {
    const jobId = await newJob(10);
    const job = { shopId: SHOP, jobId, totalItems: 10 };
    // The first run finishes FAILED: 6 processed, 4 failed.
    const first = await recordFlush(
      deps(null),
      job,
      { chunkIds: ['p0'], counts: counts(6, 4) },
      { now: at(1) },
    );
    expect(first.terminal).toMatchObject({
      status: 'FAILED',
      written: true,
      completedAt: at(1).toISOString(),
    });

    // Redrive 1 retries the 4 failed items. Its first flush is ONE UpdateItem (fold + un-count + attribution).
    const updates: string[] = [];
    const counting: DdbSender = {
      send: ((cmd: { constructor: { name: string } }) => {
        updates.push(cmd.constructor.name);
        return ddb.send(cmd as never);
      }) as DdbSender['send'],
    };
    const redrive1 = { attempt: 1, failed: 4, conflict: 0, attribution: { reason: 'manual', by: 'u-7' } };
    const a = await recordFlush(
      deps(null, counting),
      { ...job, knownStatus: 'FAILED', redrive: redrive1 },
      { chunkIds: [chunkIds.redrive(1, 'p0')], counts: counts(2) },
      { now: at(2) },
    );
    expect(updates).toEqual(['UpdateCommand']);
    expect(a).toMatchObject({
      applied: true,
      statusFolded: true,
      jobStatus: 'IN_PROGRESS',
      counters: counts(8),
    });
    expect(a.terminal).toBeUndefined();
    let row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({
      job_status: 'IN_PROGRESS',
      retry_count: 1,
      status_created_at: at(2).toISOString(),
    });
    expect(row).not.toHaveProperty('completed_at');
    const attribution = {
      reason: 'manual',
      by: 'u-7',
      first_retry_at: at(2).toISOString(),
      first_retry_attempt: 1,
    };
    expect((row as unknown as Record<string, unknown>).retry_attribution).toEqual(attribution);

    // A redelivery of that flush changes nothing; the last retried items end the job again.
    const again = await recordFlush(
      deps(null),
      { ...job, knownStatus: 'FAILED', redrive: redrive1 },
      { chunkIds: ['r1-p0'], counts: counts(2) },
      { now: at(2) },
    );
    expect(again).toMatchObject({ applied: false, reason: 'already-applied' });
    const b = await recordFlush(
      deps(null),
      { ...job, knownStatus: 'IN_PROGRESS', redrive: redrive1 },
      { chunkIds: ['r1-p1'], counts: counts(1, 1) },
      { now: at(3) },
    );
    expect(b.counters).toEqual(counts(9, 1));
    expect(b.terminal).toMatchObject({ status: 'FAILED', written: true, completedAt: at(3).toISOString() });

    // Redrive 2 retries the last failed item: COMPLETED, attribution untouched, retry_count 2.
    const c = await recordFlush(
      deps(null),
      {
        ...job,
        knownStatus: 'FAILED',
        redrive: { attempt: 2, failed: 1, conflict: 0, attribution: { reason: 'other' } },
      },
      { chunkIds: ['r2-p0'], counts: counts(1) },
      { now: at(4) },
    );
    expect(c).toMatchObject({
      statusFolded: true,
      counters: counts(10),
      terminal: { status: 'COMPLETED', written: true },
    });
    row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({
      job_status: 'COMPLETED',
      completed_at: at(4).toISOString(),
      status_created_at: at(4).toISOString(),
      retry_count: 2,
      processed_items: 10,
      failed_items: 0,
    });
    expect(row).toHaveProperty('ttl');
    expect((row as unknown as Record<string, unknown>).retry_attribution).toEqual(attribution);
  });

  it('a redrive is refused before any write when its ids or the row do not fit the protocol', async () => {
    const jobId = await newJob(10);
    const job = { shopId: SHOP, jobId, totalItems: 10 };
    await recordFlush(deps(null), job, { chunkIds: ['p0'], counts: counts(10) }, { now: at(1) }); // COMPLETED
    const r = { attempt: 1, failed: 0, conflict: 0 };
    await expect(
      recordFlush(deps(null), { ...job, redrive: r }, { chunkIds: ['p1'], counts: counts(1) }),
    ).rejects.toThrow(/a redrive \(attempt 1\) uses r1-\{chunk\} ids, got "p1"/);
    await expect(
      recordFlush(
        deps(null),
        { ...job, knownStatus: 'FAILED', redrive: r },
        { chunkIds: ['r1-p1'], counts: counts(1) },
      ),
    ).rejects.toThrow('only a FAILED or CONFLICT job is redriven; the job is COMPLETED');
    const failedJob = await newJob(10);
    await recordFlush(deps(null), { ...job, jobId: failedJob }, { chunkIds: ['p0'], counts: counts(8, 2) });
    await expect(
      recordFlush(
        deps(null),
        { ...job, jobId: failedJob, knownStatus: 'FAILED', redrive: { attempt: 1, failed: 5, conflict: 0 } },
        { chunkIds: ['r1-p0'], counts: counts(5) },
      ),
    ).rejects.toThrow('retries 5 failed and 0 conflict items, but the row counts 2 and 0');
    expect(await getJob(ddb, table, SHOP, failedJob)).toMatchObject({
      job_status: 'FAILED',
      processed_items: 8,
    });
  });

  it('skips the S3 leg when the details writer is null', async () => {
    const jobId = await newJob(100);
    const r = await recordFlush(deps(null), { shopId: SHOP, jobId, totalItems: 100 }, withDetails, {
      now: at(1),
    });
    expect(r.applied).toBe(true);
    expect(r.detailsKey).toBeUndefined();
    expect(await store.listJobObjects(jobId)).toEqual([]);
    expect(await getJob(ddb, table, SHOP, jobId)).toMatchObject({ processed_items: 6, failed_items: 2 });
  });

  it('accepts the largest flush allowed (expression size limits)', async () => {
    const jobId = await newJob(1000);
    const ids = Array.from({ length: MAX_CHUNKS_PER_FLUSH }, (_, i) => `p${i}`);
    const r = await recordFlush(
      deps(null),
      { shopId: SHOP, jobId, totalItems: 1000 },
      { chunkIds: ids, counts: counts(500) },
    );
    expect(r).toMatchObject({ applied: true, statusFolded: true, counters: counts(500) });
    expect((await getJob(ddb, table, SHOP, jobId))?.completed_chunks?.size).toBe(MAX_CHUNKS_PER_FLUSH);
  });

  it('a flush for a missing row is JobNotFoundError', async () => {
    await expect(
      recordFlush(deps(null), { shopId: SHOP, jobId: 'neverexisted', totalItems: 1 }, withDetails),
    ).rejects.toMatchObject({ name: 'JobNotFoundError', jobId: 'neverexisted' });
  });
});

describe('terminal write', () => {
  const finish = async (c: ReturnType<typeof counts>, minute: number) => {
    const total = c.processed + c.failed + c.skipped + c.conflict;
    const jobId = await newJob(total);
    const job = { shopId: SHOP, jobId, totalItems: total };
    const half = Math.floor(c.processed / 2);
    await recordFlush(deps(null), job, { chunkIds: ['p0'], counts: counts(half) }, { now: at(minute - 1) });
    const last = await recordFlush(
      deps(null),
      { ...job, knownStatus: 'IN_PROGRESS' },
      { chunkIds: ['p1'], counts: { ...c, processed: c.processed - half } },
      { now: at(minute), ttlDays: 30 },
    );
    return { jobId, last };
  };

  it('the flush that completes the job writes COMPLETED / FAILED / CONFLICT without a re-read', async () => {
    const cases = [
      [counts(10, 0, 2, 0), 'COMPLETED'],
      [counts(10, 1, 0, 3), 'FAILED'],
      [counts(10, 0, 0, 3), 'CONFLICT'],
    ] as const;
    for (const [c, status] of cases) {
      const { jobId, last } = await finish(c, 11);
      expect(last).toMatchObject({
        applied: true,
        jobStatus: status,
        terminal: { status, completedAt: at(11).toISOString(), written: true },
      });
      expect(await getJob(ddb, table, SHOP, jobId)).toMatchObject({
        job_status: status,
        completed_at: at(11).toISOString(),
        status_created_at: at(11).toISOString(),
        ttl: at(11).getTime() / 1000 + 30 * 86400,
      });
    }
  });

  it('GSI_JobsByStatus_v2 finds terminal jobs completed before T, with the projected attributes only', async () => {
    const { jobId } = await finish(counts(5), 31);
    const query = (before: Date) =>
      ddb.send(
        new QueryCommand({
          TableName: table,
          IndexName: JOBS_TABLE.gsiJobsByStatus.name,
          KeyConditionExpression: 'job_status = :s AND status_created_at < :t',
          ExpressionAttributeValues: { ':s': 'COMPLETED', ':t': before.toISOString() },
        }),
      );
    const hit = (await query(at(32))).Items?.find((i) => i.job_id === jobId);
    expect(hit).toMatchObject({
      completed_at: at(31).toISOString(),
      platform: 'shopify',
      initiator_user_id: 'u-1',
    });
    expect(hit).not.toHaveProperty('processed_items');
    expect(hit).not.toHaveProperty('completed_chunks');
    expect((await query(at(31))).Items?.some((i) => i.job_id === jobId)).toBe(false);
  });

  it('a second or concurrent terminal attempt is a reported no-op', async () => {
    const { jobId } = await finish(counts(5), 41);
    const late = await writeTerminal(
      ddb,
      table,
      { shopId: SHOP, jobId, counters: counts(5, 1) },
      { now: at(50) },
    );
    expect(late).toMatchObject({ status: 'FAILED', written: false, currentStatus: 'COMPLETED' });
    expect(await getJob(ddb, table, SHOP, jobId)).toMatchObject({
      job_status: 'COMPLETED',
      completed_at: at(41).toISOString(),
    });

    const racer = await newJob(5);
    await recordFlush(
      deps(null),
      { shopId: SHOP, jobId: racer, totalItems: 5 },
      { chunkIds: ['p0'], counts: counts(1) },
    );
    const both = await Promise.all([
      writeTerminal(ddb, table, { shopId: SHOP, jobId: racer, counters: counts(5) }, { now: at(60) }),
      writeTerminal(ddb, table, { shopId: SHOP, jobId: racer, counters: counts(5) }, { now: at(61) }),
    ]);
    expect(both.filter((t) => t.written)).toHaveLength(1);
    expect(both.find((t) => !t.written)?.currentStatus).toBe('COMPLETED');
  });
});

describe('failure modes (seed table)', () => {
  /** Throws a throttling error for the first UpdateItem, then passes everything to the real client. */
  const throttleFirstUpdate = (): DdbSender => {
    let thrown = false;
    return {
      send: (async (cmd: unknown) => {
        if (!thrown && cmd instanceof UpdateCommand) {
          thrown = true;
          throw new ProvisionedThroughputExceededException({ message: 'throttled', $metadata: {} });
        }
        return ddb.send(cmd as never);
      }) as DdbSender['send'],
    };
  };

  it('S3 fails → nothing is counted', async () => {
    const jobId = await newJob(100);
    const failing: FlushDetailsWriter = { writeFlush: () => Promise.reject(new Error('S3 is down')) };
    await expect(
      recordFlush(deps(failing), { shopId: SHOP, jobId, totalItems: 100 }, withDetails),
    ).rejects.toThrow('S3 is down');
    const row = await getJob(ddb, table, SHOP, jobId);
    expect(row).toMatchObject({ job_status: 'PENDING', processed_items: 0 });
    expect(row).not.toHaveProperty('completed_chunks');
  });

  it('S3 ok + DynamoDB transient → throws; the redelivery re-PUTs the same key and counts once', async () => {
    const jobId = await newJob(100);
    const job = { shopId: SHOP, jobId, totalItems: 100 };
    await expect(recordFlush(deps(store, throttleFirstUpdate()), job, withDetails)).rejects.toMatchObject({
      name: 'ProvisionedThroughputExceededException',
    });
    const afterFailure = await store.listJobObjects(jobId);
    expect(afterFailure).toHaveLength(1);
    expect(await getJob(ddb, table, SHOP, jobId)).toMatchObject({ processed_items: 0 });

    const redelivered = await recordFlush(deps(), job, withDetails);
    expect(redelivered).toMatchObject({ applied: true, counters: counts(6, 2, 1, 1) });
    const afterRetry = await store.listJobObjects(jobId);
    expect(afterRetry.map((o) => o.key)).toEqual(afterFailure.map((o) => o.key));
    expect(afterRetry[0]?.etag).toBe(afterFailure[0]?.etag);
  });

  it('S3 ok + conditional reject → counters already applied, the S3 object a harmless re-PUT', async () => {
    const jobId = await newJob(100);
    const job = { shopId: SHOP, jobId, totalItems: 100 };
    const first = await recordFlush(deps(), job, withDetails);
    const again = await recordFlush(deps(), { ...job, knownStatus: 'IN_PROGRESS' }, withDetails);
    expect(again).toMatchObject({ applied: false, reason: 'already-applied', detailsKey: first.detailsKey });
    expect(await store.listJobObjects(jobId)).toHaveLength(1);
    expect(await getJob(ddb, table, SHOP, jobId)).toMatchObject({ processed_items: 6 });
  });
});
