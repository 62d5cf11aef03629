import {
  applyChange,
  docSha256,
  ERASURE_REQUEST_FORMAT,
  type ErasureRequest,
  newRequestId,
  overdueRequests,
  parseRequest,
  requestKey,
} from '../../shared/erasure/ledger';
import { CorruptObjectError, InvalidInputError } from '../../shared/errors';

const at = new Date('2026-03-01T10:00:00.000Z');
const base: ErasureRequest = {
  format: ERASURE_REQUEST_FORMAT,
  id: newRequestId('redact-doc', at, () => 'abcdefgh'),
  kind: 'redact-doc',
  shopId: 'acme.myshopify.com',
  docId: 'customer-42',
  docSha256: docSha256('customer-42'),
  receivedAt: at.toISOString(),
  state: 'received',
  updatedAt: at.toISOString(),
  runs: [],
};

describe('erasure ledger (pure parts)', () => {
  it('ids sort by receipt time, name their kind, and are key-safe', () => {
    expect(base.id).toBe('20260301T100000Z-redact-doc-abcdefgh');
    expect(requestKey(base.id)).toBe(
      'job-details-erasure/requests/20260301T100000Z-redact-doc-abcdefgh.json',
    );
    expect(() => requestKey('../x')).toThrow(InvalidInputError);
  });

  it('pending keeps the document and says why; runs are noted once', () => {
    const later = new Date('2026-03-02T00:00:00.000Z');
    const p = applyChange(base, { state: 'pending', pendingReason: 'restore', runId: 'r1' }, later);
    const p2 = applyChange(p, { runId: 'r1' }, later);
    expect(p2).toMatchObject({
      state: 'pending',
      pendingReason: 'restore',
      docId: 'customer-42',
      runs: ['r1'],
    });
    expect(p2.updatedAt).toBe(later.toISOString());
  });

  it('complete drops the document id (its SHA-256 stays) and the reason, and records when', () => {
    const p = applyChange(base, { state: 'pending', pendingReason: 'restore', runId: 'r1' }, at);
    const done = applyChange(
      p,
      { state: 'complete', runId: 'r2', receipt: { partsRewritten: 1 } },
      new Date('2026-03-05T00:00:00Z'),
    );
    expect(done).not.toHaveProperty('docId');
    expect(done).not.toHaveProperty('pendingReason');
    expect(done).toMatchObject({
      state: 'complete',
      docSha256: docSha256('customer-42'),
      completedAt: '2026-03-05T00:00:00.000Z',
      runs: ['r1', 'r2'],
      receipt: { partsRewritten: 1 },
    });
    expect(JSON.stringify(done)).not.toContain('customer-42');
  });

  it('overdue: not complete and older than the deadline, oldest first, without document ids', () => {
    const old = { ...base, id: 'a', receivedAt: '2026-01-01T00:00:00.000Z' };
    const pending = {
      ...base,
      id: 'b',
      receivedAt: '2026-01-15T00:00:00.000Z',
      state: 'pending' as const,
      pendingReason: 'restore',
    };
    const fresh = { ...base, id: 'c', receivedAt: '2026-02-20T00:00:00.000Z' };
    const done = { ...base, id: 'd', receivedAt: '2025-12-01T00:00:00.000Z', state: 'complete' as const };
    const out = overdueRequests([pending, fresh, done, old], at, 30);
    expect(out.map((r) => r.id)).toEqual(['a', 'b']);
    expect(out[0]).toEqual({
      id: 'a',
      kind: 'redact-doc',
      shopId: 'acme.myshopify.com',
      receivedAt: '2026-01-01T00:00:00.000Z',
      state: 'received',
      ageDays: 59,
    });
    expect(out[1]?.pendingReason).toBe('restore');
    expect(JSON.stringify(out)).not.toContain('customer-42');
    expect(overdueRequests([fresh], at, 5).map((r) => r.id)).toEqual(['c']);
  });

  it('a stored record is checked field by field', () => {
    const key = requestKey(base.id);
    expect(parseRequest(key, Buffer.from(JSON.stringify(base)))).toEqual(base);
    expect(() => parseRequest(key, Buffer.from('{'))).toThrow(CorruptObjectError);
    expect(() => parseRequest(key, Buffer.from(JSON.stringify({ ...base, state: 'done' })))).toThrow(
      /field state/,
    );
  });
});
