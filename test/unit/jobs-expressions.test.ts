import { newJobRow, validateCreateJobInput } from '../../shared/jobs/create-job';
import { oldItemOf } from '../../shared/jobs/job-repo';
import {
  buildFlushUpdate,
  classifyRejection,
  countersFrom,
  foldsInProgress,
  hasDetails,
  MAX_CHUNKS_PER_FLUSH,
  validChunkIds,
} from '../../shared/jobs/record-flush';
import { buildTerminalUpdate, ttlFor } from '../../shared/jobs/terminal';
import { isDone, terminalStatusFor } from '../../shared/jobs/types';

const NOW = new Date('2026-03-14T10:00:00.000Z');
const zero = { processed: 0, failed: 0, skipped: 0, conflict: 0 };

describe('terminalStatusFor', () => {
  it('is FAILED when any item failed, whatever else happened', () => {
    expect(terminalStatusFor({ processed: 5, failed: 1, skipped: 0, conflict: 3 })).toBe('FAILED');
  });
  it('is CONFLICT when nothing failed but something conflicted', () => {
    expect(terminalStatusFor({ processed: 5, failed: 0, skipped: 2, conflict: 1 })).toBe('CONFLICT');
  });
  it('is COMPLETED otherwise; skipped items alone do not fail a job', () => {
    expect(terminalStatusFor({ processed: 5, failed: 0, skipped: 9, conflict: 0 })).toBe('COMPLETED');
    expect(terminalStatusFor(zero)).toBe('COMPLETED');
  });
});

describe('isDone', () => {
  it('counts every outcome towards total_items', () => {
    expect(isDone({ processed: 1, failed: 1, skipped: 1, conflict: 1 }, 4)).toBe(true);
    expect(isDone({ processed: 1, failed: 1, skipped: 1, conflict: 0 }, 4)).toBe(false);
    expect(isDone({ processed: 5, failed: 0, skipped: 0, conflict: 0 }, 4)).toBe(true);
    expect(isDone(zero, 0)).toBe(true);
  });
});

describe('buildFlushUpdate', () => {
  const base = {
    table: 'jobs',
    shopId: 'acme',
    jobId: 'k3jqxr2m7zaba',
    chunkIds: ['p0', 'p1'],
    counts: { processed: 7, failed: 1, skipped: 2, conflict: 3 },
    now: NOW,
  };

  it('adds the four counters and the chunk set, sets last_updated, and guards each chunk id', () => {
    const u = buildFlushUpdate({ ...base, fold: false });
    expect(u.Key).toEqual({ pk: 'SHOP#acme', sk: 'JOB#k3jqxr2m7zaba' });
    expect(u.UpdateExpression).toBe(
      'ADD processed_items :processed, failed_items :failed, skipped_items :skipped, conflict_items :conflict, ' +
        '#cc :chunks SET last_updated = :ts',
    );
    expect(u.ConditionExpression).toBe(
      'attribute_exists(pk) AND NOT contains(#cc, :c0) AND NOT contains(#cc, :c1)',
    );
    expect(u.ExpressionAttributeNames).toEqual({ '#cc': 'completed_chunks' });
    expect(u.ExpressionAttributeValues).toMatchObject({
      ':processed': 7,
      ':failed': 1,
      ':skipped': 2,
      ':conflict': 3,
      ':chunks': new Set(['p0', 'p1']),
      ':ts': '2026-03-14T10:00:00.000Z',
      ':c0': 'p0',
      ':c1': 'p1',
    });
    expect(u.ReturnValues).toBe('UPDATED_NEW');
    expect(u.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(u.ReturnConsumedCapacity).toBeUndefined();
  });

  it('never touches a projected attribute when not folding (so neither GSI is written)', () => {
    const u = buildFlushUpdate({ ...base, fold: false });
    for (const projected of [
      'job_status',
      'status_created_at',
      'started_at',
      'completed_at',
      'ttl',
      'job_id',
    ]) {
      expect(u.UpdateExpression).not.toContain(projected);
      expect(Object.values(u.ExpressionAttributeNames ?? {})).not.toContain(projected);
    }
  });

  it('folds IN_PROGRESS with the eligibility condition and clears a previous run’s completion', () => {
    const u = buildFlushUpdate({ ...base, fold: true, returnConsumedCapacity: true });
    expect(u.UpdateExpression).toContain(
      'SET last_updated = :ts, job_status = :inprog, started_at = if_not_exists(started_at, :ts), status_created_at = :ts',
    );
    expect(u.UpdateExpression).toMatch(/ REMOVE completed_at, #ttl$/);
    expect(u.ExpressionAttributeNames).toEqual({ '#cc': 'completed_chunks', '#ttl': 'ttl' });
    expect(u.ConditionExpression).toBe(
      'attribute_exists(pk) AND NOT contains(#cc, :c0) AND NOT contains(#cc, :c1) AND ' +
        '(attribute_not_exists(job_status) OR job_status IN (:pending, :failedStatus, :conflictStatus))',
    );
    expect(u.ExpressionAttributeValues).toMatchObject({
      ':inprog': 'IN_PROGRESS',
      ':pending': 'PENDING',
      ':failedStatus': 'FAILED',
      ':conflictStatus': 'CONFLICT',
    });
    expect(u.ReturnConsumedCapacity).toBe('INDEXES');
  });

  it('keeps the largest allowed flush inside the 4 KB and 300-operator expression limits', () => {
    const ids = Array.from({ length: MAX_CHUNKS_PER_FLUSH }, (_, i) => `p${i}`);
    const u = buildFlushUpdate({ ...base, chunkIds: ids, fold: true });
    const condition = u.ConditionExpression ?? '';
    expect(Buffer.byteLength(condition)).toBeLessThan(4096);
    expect(Buffer.byteLength(u.UpdateExpression ?? '')).toBeLessThan(4096);
    const operators =
      condition.match(/\b(AND|OR|NOT|IN|contains|attribute_exists|attribute_not_exists)\b/g) ?? [];
    expect(operators.length).toBeLessThanOrEqual(300);
  });
});

describe('foldsInProgress', () => {
  it('folds from unknown, PENDING, FAILED and CONFLICT only', () => {
    expect(foldsInProgress(undefined)).toBe(true);
    expect(foldsInProgress('PENDING')).toBe(true);
    expect(foldsInProgress('FAILED')).toBe(true);
    expect(foldsInProgress('CONFLICT')).toBe(true);
    expect(foldsInProgress('IN_PROGRESS')).toBe(false);
    expect(foldsInProgress('COMPLETED')).toBe(false);
  });
});

describe('buildTerminalUpdate', () => {
  it('sets status, completed_at = status_created_at, ttl; conditional on IN_PROGRESS', () => {
    const u = buildTerminalUpdate({
      table: 'jobs',
      shopId: 'acme',
      jobId: 'j1',
      status: 'CONFLICT',
      now: NOW,
      ttlDays: 90,
    });
    expect(u.UpdateExpression).toBe(
      'SET job_status = :terminal, completed_at = :ts, status_created_at = :ts, last_updated = :ts, #ttl = :ttl',
    );
    expect(u.ConditionExpression).toBe('job_status = :inprog');
    expect(u.ExpressionAttributeNames).toEqual({ '#ttl': 'ttl' });
    expect(u.ExpressionAttributeValues).toEqual({
      ':terminal': 'CONFLICT',
      ':ts': '2026-03-14T10:00:00.000Z',
      ':ttl': Date.parse('2026-06-12T10:00:00.000Z') / 1000,
      ':inprog': 'IN_PROGRESS',
    });
    expect(u.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  });

  it('computes ttl in whole epoch seconds', () => {
    expect(ttlFor(new Date('1970-01-01T00:00:01.900Z'), 1)).toBe(86401);
  });
});

describe('validChunkIds', () => {
  it('sorts by code point and keeps every id', () => {
    expect(validChunkIds(['p10', 'preparse', 'p2'])).toEqual(['p10', 'p2', 'preparse']);
  });
  it('rejects an empty list, a repeated id, a bad id and too many ids', () => {
    expect(() => validChunkIds([])).toThrow(
      expect.objectContaining({ name: 'InvalidInputError', field: 'chunkIds' }),
    );
    expect(() => validChunkIds(['p1', 'p1'])).toThrow(/repeated/);
    expect(() => validChunkIds(['p1', ''])).toThrow(expect.objectContaining({ name: 'InvalidIdError' }));
    expect(() => validChunkIds(Array.from({ length: MAX_CHUNKS_PER_FLUSH + 1 }, (_, i) => `p${i}`))).toThrow(
      /at most 95/,
    );
  });
});

describe('hasDetails', () => {
  it('is true only when some reason lists an item', () => {
    expect(hasDetails(undefined)).toBe(false);
    expect(hasDetails({})).toBe(false);
    expect(hasDetails({ failed: {}, skipped: { empty: [] } })).toBe(false);
    expect(hasDetails({ skipped: { 'bad-json': ['d1'] } })).toBe(true);
    expect(hasDetails({ conflict: { version: [{ doc_id: 'd1' }] } })).toBe(true);
  });
});

describe('ALL_OLD handling', () => {
  const rawOld = {
    pk: { S: 'SHOP#acme' },
    job_status: { S: 'IN_PROGRESS' },
    processed_items: { N: '40' },
    failed_items: { N: '2' },
    skipped_items: { N: '3' },
    conflict_items: { N: '1' },
    completed_chunks: { SS: ['p0', 'p1'] },
  };

  it('reads status, counters and chunks from the raw item on the exception', () => {
    const old = oldItemOf({ name: 'ConditionalCheckFailedException', Item: rawOld });
    expect(old).toEqual({
      status: 'IN_PROGRESS',
      counters: { processed: 40, failed: 2, skipped: 3, conflict: 1 },
      completedChunks: new Set(['p0', 'p1']),
    });
  });

  it('treats no item as a missing row', () => {
    expect(oldItemOf({ name: 'ConditionalCheckFailedException' })).toBeUndefined();
    expect(classifyRejection(undefined, ['p0'])).toEqual({ kind: 'missing' });
  });

  it('tells a chunk collision (naming the chunks) from a status race', () => {
    const old = oldItemOf({ Item: rawOld });
    expect(classifyRejection(old, ['p1', 'p2'])).toMatchObject({ kind: 'collision', colliding: ['p1'] });
    expect(classifyRejection(old, ['p2', 'p3'])).toMatchObject({ kind: 'status' });
  });
});

describe('countersFrom', () => {
  it('reads the four ADDed counters from UPDATED_NEW', () => {
    expect(
      countersFrom({
        processed_items: 9,
        failed_items: 1,
        skipped_items: 0,
        conflict_items: 2,
        last_updated: 'x',
      }),
    ).toEqual({ processed: 9, failed: 1, skipped: 0, conflict: 2 });
  });
});

describe('newJobRow / validateCreateJobInput', () => {
  const input = { shopId: 'acme', jobType: 'full_sync', platform: 'shopify', totalItems: 200 };

  it('builds a small PENDING row with zero counters and status_created_at = created_at', () => {
    expect(newJobRow(input, 'k3jqxr2m7zaba', NOW)).toEqual({
      pk: 'SHOP#acme',
      sk: 'JOB#k3jqxr2m7zaba',
      job_id: 'k3jqxr2m7zaba',
      job_status: 'PENDING',
      status_created_at: '2026-03-14T10:00:00.000Z',
      created_at: '2026-03-14T10:00:00.000Z',
      last_updated: '2026-03-14T10:00:00.000Z',
      total_items: 200,
      processed_items: 0,
      failed_items: 0,
      skipped_items: 0,
      conflict_items: 0,
      job_type: 'full_sync',
      platform: 'shopify',
    });
  });

  it('writes optional attributes only when given', () => {
    const row = newJobRow({ ...input, isInternal: false, retryCount: 0, initiatorUserId: 'u1' }, 'j1', NOW);
    expect(row).toMatchObject({ is_internal: false, retry_count: 0, initiator_user_id: 'u1' });
    expect(row).not.toHaveProperty('error_message');
    expect(row).not.toHaveProperty('estimated_time_minutes');
  });

  it('names the bad field', () => {
    expect(() => validateCreateJobInput({ ...input, shopId: '../x' })).toThrow(
      expect.objectContaining({ name: 'InvalidIdError', kind: 'shop id' }),
    );
    expect(() => validateCreateJobInput({ ...input, totalItems: -1 })).toThrow(
      expect.objectContaining({ name: 'InvalidInputError', field: 'totalItems' }),
    );
    expect(() => validateCreateJobInput({ ...input, totalItems: 1.5 })).toThrow(
      expect.objectContaining({ field: 'totalItems' }),
    );
    expect(() => validateCreateJobInput({ ...input, jobType: '' })).toThrow(
      expect.objectContaining({ field: 'jobType' }),
    );
    expect(() => validateCreateJobInput({ ...input, estimatedTimeMinutes: Number.NaN })).toThrow(
      expect.objectContaining({ field: 'estimatedTimeMinutes' }),
    );
  });
});
