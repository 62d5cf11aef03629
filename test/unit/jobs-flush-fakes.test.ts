/**
 * recordFlush / createJob / writeTerminal against injected fakes: a DynamoDB sender that records the
 * commands and answers from a script, and a details writer that records or throws. These are plain
 * injected test doubles (not aws-sdk-client-mock); the same paths run against DynamoDB Local in
 * test/integration/jobs-*.test.ts, except a transient DynamoDB error, which no emulator produces.
 */
import {
  ConditionalCheckFailedException,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import type { JobDetailsPayload } from '../../shared/details/payload';
import { createJob } from '../../shared/jobs/create-job';
import { recordFlush } from '../../shared/jobs/record-flush';
import { writeTerminal } from '../../shared/jobs/terminal';
import type { DdbSender, FlushDetailsWriter } from '../../shared/jobs/types';

type Sent = { kind: string; input: Record<string, unknown> };
type Answer = (input: Record<string, unknown>) => unknown;

const fakeDdb = (answers: Answer[]) => {
  const sent: Sent[] = [];
  const sender = {
    send: async (cmd: { constructor: { name: string }; input: Record<string, unknown> }) => {
      sent.push({ kind: cmd.constructor.name, input: cmd.input });
      const answer = answers.shift();
      if (answer === undefined) throw new Error(`unexpected ${cmd.constructor.name}`);
      return answer(cmd.input);
    },
  } as unknown as DdbSender;
  return { sender, sent };
};

const recordingWriter = () => {
  const writes: { shopId: string; jobId: string; flushId: string; payload: JobDetailsPayload }[] = [];
  const writer: FlushDetailsWriter = {
    writeFlush: async (shopId, jobId, flushId, payload) => {
      writes.push({ shopId, jobId, flushId, payload });
    },
  };
  return { writer, writes };
};

const ccf = (item?: Record<string, unknown>) =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(item ? { Item: item as never } : {}),
  });

const throttled = () =>
  new ProvisionedThroughputExceededException({
    message: 'Rate of requests exceeds the allowed throughput',
    $metadata: {},
  });

const updated =
  (processed: number, failed = 0) =>
  () => ({
    Attributes: { processed_items: processed, failed_items: failed, skipped_items: 0, conflict_items: 0 },
  });

const job = { shopId: 'acme', jobId: 'k3jqxr2m7zaba', totalItems: 100 };
const flush = {
  chunkIds: ['p1', 'p0'],
  counts: { processed: 8, failed: 2, skipped: 0, conflict: 0 },
  details: { failed: { 'mapping-error': ['gid://shopify/Product/1', 'gid://shopify/Product/2'] } },
};
const NOW = new Date('2026-03-14T10:00:00.000Z');

describe('recordFlush failure modes (seed table)', () => {
  it('S3 fails → throws before any DynamoDB write', async () => {
    const { sender, sent } = fakeDdb([]);
    const boom = new Error('S3 PutObject failed');
    const writer: FlushDetailsWriter = { writeFlush: async () => Promise.reject(boom) };
    await expect(recordFlush({ ddb: sender, table: 't', detailsWriter: writer }, job, flush)).rejects.toBe(
      boom,
    );
    expect(sent).toEqual([]);
  });

  it('S3 ok + DynamoDB transient → throws; the redelivery re-PUTs the same key and then counts', async () => {
    const { writer, writes } = recordingWriter();
    const first = fakeDdb([
      () => {
        throw throttled();
      },
    ]);
    await expect(
      recordFlush({ ddb: first.sender, table: 't', detailsWriter: writer }, job, flush),
    ).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    expect(writes).toHaveLength(1);

    const second = fakeDdb([updated(8, 2)]);
    const r = await recordFlush({ ddb: second.sender, table: 't', detailsWriter: writer }, job, flush);
    expect(r.applied).toBe(true);
    expect(writes).toHaveLength(2);
    expect(writes[1]?.flushId).toBe(writes[0]?.flushId);
    expect(writes[1]?.payload).toEqual(writes[0]?.payload);
    expect(r.detailsKey).toBe(`job-details/${job.jobId}/${r.flushId}.json.gz`);
  });

  it('S3 ok + conditional reject on a recorded chunk → applied:false, not an error', async () => {
    const { writer, writes } = recordingWriter();
    const { sender, sent } = fakeDdb([
      () => {
        throw ccf({
          pk: { S: 'SHOP#acme' },
          job_status: { S: 'IN_PROGRESS' },
          processed_items: { N: '8' },
          failed_items: { N: '2' },
          skipped_items: { N: '0' },
          conflict_items: { N: '0' },
          completed_chunks: { SS: ['p0', 'p1'] },
        });
      },
    ]);
    const r = await recordFlush({ ddb: sender, table: 't', detailsWriter: writer }, job, flush);
    expect(r).toMatchObject({
      applied: false,
      reason: 'already-applied',
      collidingChunkIds: ['p0', 'p1'],
      counters: { processed: 8, failed: 2, skipped: 0, conflict: 0 },
      jobStatus: 'IN_PROGRESS',
    });
    expect(r.terminal).toBeUndefined();
    expect(writes).toHaveLength(1); // the harmless extra S3 object
    expect(sent).toHaveLength(1);
  });

  it('a redelivery whose first delivery counted everything but died before the terminal write completes the job', async () => {
    const { sender, sent } = fakeDdb([
      () => {
        throw ccf({
          pk: { S: 'SHOP#acme' },
          job_status: { S: 'IN_PROGRESS' },
          processed_items: { N: '98' },
          failed_items: { N: '2' },
          skipped_items: { N: '0' },
          conflict_items: { N: '0' },
          completed_chunks: { SS: ['p0', 'p1'] },
        });
      },
      () => ({}),
    ]);
    const r = await recordFlush({ ddb: sender, table: 't', detailsWriter: null }, job, flush, { now: NOW });
    expect(r.applied).toBe(false);
    expect(r.terminal).toEqual({ status: 'FAILED', completedAt: NOW.toISOString(), written: true });
    expect(sent[1]?.input.ConditionExpression).toBe('job_status = :inprog');
  });

  it('missing row → JobNotFoundError', async () => {
    const { sender } = fakeDdb([
      () => {
        throw ccf();
      },
    ]);
    await expect(
      recordFlush({ ddb: sender, table: 't', detailsWriter: null }, job, flush),
    ).rejects.toMatchObject({
      name: 'JobNotFoundError',
      shopId: 'acme',
      jobId: job.jobId,
    });
  });

  it('status race → retries once without the fold and counts', async () => {
    const { sender, sent } = fakeDdb([
      () => {
        throw ccf({
          pk: { S: 'SHOP#acme' },
          job_status: { S: 'IN_PROGRESS' },
          completed_chunks: { SS: ['p9'] },
        });
      },
      updated(20),
    ]);
    const r = await recordFlush(
      { ddb: sender, table: 't', detailsWriter: null },
      { ...job, knownStatus: 'PENDING' },
      flush,
    );
    expect(r).toMatchObject({
      applied: true,
      statusFolded: false,
      jobStatus: 'IN_PROGRESS',
      counters: { processed: 20 },
    });
    expect(sent.map((s) => String(s.input.UpdateExpression).includes('job_status'))).toEqual([true, false]);
  });

  it('a flush racing into a row already terminal counts but makes no terminal write', async () => {
    const { sender, sent } = fakeDdb([
      () => {
        throw ccf({ pk: { S: 'SHOP#acme' }, job_status: { S: 'COMPLETED' } });
      },
      updated(100),
    ]);
    const r = await recordFlush({ ddb: sender, table: 't', detailsWriter: null }, job, flush);
    expect(r).toMatchObject({ applied: true, jobStatus: 'COMPLETED', counters: { processed: 100 } });
    expect(r.terminal).toBeUndefined();
    expect(sent).toHaveLength(2);
  });

  it('skips the S3 leg when the writer is null or the flush has no details', async () => {
    const { writer, writes } = recordingWriter();
    const a = fakeDdb([updated(8)]);
    const r1 = await recordFlush({ ddb: a.sender, table: 't', detailsWriter: null }, job, flush);
    expect(r1.detailsKey).toBeUndefined();
    const b = fakeDdb([updated(16)]);
    const r2 = await recordFlush({ ddb: b.sender, table: 't', detailsWriter: writer }, job, {
      ...flush,
      chunkIds: ['p2'],
      details: { failed: {}, skipped: { none: [] } },
    });
    expect(r2.detailsKey).toBeUndefined();
    expect(writes).toEqual([]);
  });

  it('sends the S3 payload with sorted chunk ids and every map present', async () => {
    const { writer, writes } = recordingWriter();
    const { sender } = fakeDdb([updated(8)]);
    await recordFlush({ ddb: sender, table: 't', detailsWriter: writer }, job, flush);
    expect(writes[0]).toMatchObject({
      shopId: 'acme',
      jobId: job.jobId,
      payload: { chunk_ids: ['p0', 'p1'], failed: flush.details.failed, skipped: {}, conflict: {} },
    });
  });

  it('rejects bad input before any I/O', async () => {
    const { writer, writes } = recordingWriter();
    const { sender, sent } = fakeDdb([]);
    const deps = { ddb: sender, table: 't', detailsWriter: writer };
    const bad: [Parameters<typeof recordFlush>[1], Parameters<typeof recordFlush>[2], string][] = [
      [{ ...job, jobId: '../other' }, flush, 'InvalidIdError'],
      [{ ...job, totalItems: -1 }, flush, 'InvalidInputError'],
      [job, { ...flush, chunkIds: [] }, 'InvalidInputError'],
      [job, { ...flush, counts: { ...flush.counts, failed: 0.5 } }, 'InvalidInputError'],
      [job, { ...flush, details: { failed: { r: [7 as unknown as string] } } }, 'InvalidInputError'],
      [{ ...job, knownStatus: 'DONE' as never }, flush, 'InvalidInputError'],
    ];
    for (const [j, f, name] of bad) {
      await expect(recordFlush(deps, j, f)).rejects.toMatchObject({ name });
    }
    expect(writes).toEqual([]);
    expect(sent).toEqual([]);
  });
});

describe('writeTerminal', () => {
  it('reports a lost race with the status found, without throwing', async () => {
    const { sender } = fakeDdb([
      () => {
        throw ccf({ pk: { S: 'SHOP#acme' }, job_status: { S: 'COMPLETED' } });
      },
    ]);
    const r = await writeTerminal(sender, 't', {
      ...job,
      counters: { processed: 100, failed: 0, skipped: 0, conflict: 0 },
    });
    expect(r).toMatchObject({ status: 'COMPLETED', written: false, currentStatus: 'COMPLETED' });
  });

  it('passes a transient error on', async () => {
    const { sender } = fakeDdb([
      () => {
        throw throttled();
      },
    ]);
    await expect(
      writeTerminal(sender, 't', {
        ...job,
        counters: { processed: 100, failed: 0, skipped: 0, conflict: 0 },
      }),
    ).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
  });
});

describe('createJob', () => {
  const input = { shopId: 'acme', jobType: 'full_sync', platform: 'shopify', totalItems: 3 };

  it('retries a colliding id with a fresh one', async () => {
    const ids = ['taken', 'fresh'];
    const { sender, sent } = fakeDdb([
      () => {
        throw ccf();
      },
      () => ({}),
    ]);
    const r = await createJob(sender, 't', input, { idGenerator: () => ids.shift() as string });
    expect(r).toMatchObject({ jobId: 'fresh', attempts: 2 });
    expect(sent.map((s) => (s.input.Item as { job_id: string }).job_id)).toEqual(['taken', 'fresh']);
    expect(sent[0]?.input.ConditionExpression).toBe('attribute_not_exists(pk)');
  });

  it('gives up after maxAttempts collisions', async () => {
    const collide = () => {
      throw ccf();
    };
    const { sender } = fakeDdb([collide, collide]);
    await expect(
      createJob(sender, 't', input, { idGenerator: () => 'same', maxAttempts: 2 }),
    ).rejects.toMatchObject({
      name: 'JobArchiveError',
      message: expect.stringContaining('2 generated job ids'),
    });
  });

  it('validates a generated id before writing', async () => {
    const { sender, sent } = fakeDdb([]);
    await expect(createJob(sender, 't', input, { idGenerator: () => 'a/b' })).rejects.toMatchObject({
      name: 'InvalidIdError',
    });
    expect(sent).toEqual([]);
  });
});
