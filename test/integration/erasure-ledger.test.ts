import type { S3Client } from '@aws-sdk/client-s3';
import {
  findOverdue,
  getRequest,
  listRequests,
  markComplete,
  markPending,
  recordRequest,
  updateRequest,
} from '../../shared/erasure/ledger';
import { InvalidIdError, InvalidInputError } from '../../shared/errors';
import { freshBucket, testS3 } from '../support/local';

/** The ledger on s3rver, whose If-None-Match / If-Match the project patches in (infra/local/s3rver-entry.cjs). */
describe('erasure-request ledger on the local S3', () => {
  let s3: S3Client;
  let bucket: string;
  let clock = new Date('2026-03-01T00:00:00.000Z');
  const ctx = () => ({ s3, bucket, clock: () => clock });

  beforeAll(async () => {
    s3 = testS3();
    bucket = await freshBucket();
  });

  it('records, redelivers idempotently, updates by compare-and-swap, lists and finds overdue ones', async () => {
    const forget = await recordRequest(ctx(), {
      kind: 'forget-shop',
      shopId: 'shop-a',
      requestId: 'webhook-1',
    });
    expect(forget).toMatchObject({
      id: 'webhook-1',
      state: 'received',
      receivedAt: '2026-03-01T00:00:00.000Z',
      runs: [],
    });
    // A redelivered webhook records nothing new; a different request under the same id is refused.
    expect(
      await recordRequest(ctx(), { kind: 'forget-shop', shopId: 'shop-a', requestId: 'webhook-1' }),
    ).toEqual(forget);
    await expect(
      recordRequest(ctx(), { kind: 'forget-shop', shopId: 'shop-b', requestId: 'webhook-1' }),
    ).rejects.toThrow(InvalidInputError);
    const redact = await recordRequest(ctx(), { kind: 'redact-doc', shopId: 'shop-b', docId: 'cust-9' });
    expect(redact.id).toMatch(/^20260301T000000Z-redact-doc-[a-z2-7]{8}$/);

    clock = new Date('2026-03-02T00:00:00.000Z');
    await markPending(ctx(), redact.id, 'run-1', 'restore');
    // Two writers at once: both changes land (If-Match, re-read, re-apply).
    await Promise.all([
      updateRequest(ctx(), redact.id, { runId: 'run-2' }),
      updateRequest(ctx(), redact.id, { runId: 'run-3' }),
    ]);
    const stored = await getRequest(ctx(), redact.id);
    expect(stored?.request.runs.slice().sort()).toEqual(['run-1', 'run-2', 'run-3']);
    expect(stored?.request).toMatchObject({ state: 'pending', pendingReason: 'restore', docId: 'cust-9' });

    clock = new Date('2026-04-15T00:00:00.000Z');
    expect((await findOverdue(ctx(), 30)).map((r) => [r.id, r.ageDays])).toEqual([
      [redact.id, 45],
      ['webhook-1', 45],
    ]);
    await markComplete(ctx(), 'webhook-1', 'run-4', { jobs: 3 });
    // A complete request stays complete; a late run is only noted.
    const late = await updateRequest(ctx(), 'webhook-1', {
      state: 'pending',
      pendingReason: 'x',
      runId: 'run-5',
    });
    expect(late).toMatchObject({ state: 'complete', runs: ['run-4', 'run-5'], receipt: { jobs: 3 } });
    expect((await findOverdue(ctx(), 30)).map((r) => r.id)).toEqual([redact.id]);
    expect((await listRequests(ctx(), { kind: 'redact-doc' })).map((r) => r.id)).toEqual([redact.id]);
    expect((await listRequests(ctx(), { openOnly: true })).map((r) => r.id)).toEqual([redact.id]);
  });

  it('refuses bad input before any write', async () => {
    await expect(recordRequest(ctx(), { kind: 'forget-shop', shopId: '../x' })).rejects.toThrow(
      InvalidIdError,
    );
    await expect(recordRequest(ctx(), { kind: 'redact-doc', shopId: 'shop-a' })).rejects.toThrow('docId');
    await expect(recordRequest(ctx(), { kind: 'forget-shop', shopId: 'shop-a', docId: 'd' })).rejects.toThrow(
      'docId',
    );
    await expect(updateRequest(ctx(), 'nope', { runId: 'r' })).rejects.toThrow('not recorded');
  });
});
