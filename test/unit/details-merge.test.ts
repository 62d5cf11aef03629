import {
  emptyJobDetails,
  type JobDetailsPayload,
  mergeAllJobDetails,
  mergeJobDetails,
  normalizeJobDetails,
} from '../../shared/details';

const a: JobDetailsPayload = {
  chunk_ids: ['p2', 'p0'],
  failed: { 'bad-sku': ['d1', 'd2'], timeout: ['d9'] },
  skipped: { draft: ['d3'] },
  conflict: { version: [{ doc_id: 'd4', existing_version: 3 }] },
};
const b: JobDetailsPayload = {
  chunk_ids: ['p1', 'p0'],
  failed: { 'bad-sku': ['d2', 'd5', 'd1'] },
  skipped: { archived: ['d6'] },
  conflict: {
    version: [
      { existing_version: 3, doc_id: 'd4' },
      { doc_id: 'd7', existing_version: 1 },
    ],
  },
};

describe('mergeJobDetails', () => {
  it('unions by reason, dedupes (a first), sorts chunk ids and reasons', () => {
    const m = mergeJobDetails(a, b);
    expect(m).toEqual({
      chunk_ids: ['p0', 'p1', 'p2'],
      failed: { 'bad-sku': ['d1', 'd2', 'd5'], timeout: ['d9'] },
      skipped: { archived: ['d6'], draft: ['d3'] },
      conflict: {
        version: [
          { doc_id: 'd4', existing_version: 3 },
          { doc_id: 'd7', existing_version: 1 },
        ],
      },
    });
    expect(Object.keys(m.skipped)).toEqual(['archived', 'draft']);
  });

  it('is idempotent: merging a payload with itself changes nothing but normalisation', () => {
    expect(mergeJobDetails(a, a)).toEqual(normalizeJobDetails(a));
    expect(mergeJobDetails(mergeJobDetails(a, b), b)).toEqual(mergeJobDetails(a, b));
  });

  it('has the empty details as identity and does not alias or mutate its inputs', () => {
    const before = JSON.stringify(a);
    const m = mergeJobDetails(emptyJobDetails(), a);
    expect(m).toEqual(normalizeJobDetails(a));
    (m.failed['bad-sku'] as string[]).push('dX');
    expect(JSON.stringify(a)).toBe(before);
  });

  it('keeps a reason whose list is empty', () => {
    expect(
      normalizeJobDetails({ chunk_ids: [], failed: { x: [] }, skipped: {}, conflict: {} }).failed,
    ).toEqual({ x: [] });
  });
});

describe('mergeAllJobDetails', () => {
  it('equals pairwise merging, in one pass over many payloads', () => {
    const parts: JobDetailsPayload[] = Array.from({ length: 200 }, (_, i) => ({
      chunk_ids: [`p${i}`],
      failed: { r: [`d${i % 50}`] },
      skipped: {},
      conflict: {},
    }));
    const pairwise = parts.reduce<JobDetailsPayload>((acc, p) => mergeJobDetails(acc, p), emptyJobDetails());
    const all = mergeAllJobDetails(parts);
    expect(all).toEqual(pairwise);
    expect(all.failed.r).toHaveLength(50);
    expect(all.chunk_ids).toHaveLength(200);
  });

  it('of nothing is the empty details', () => {
    expect(mergeAllJobDetails([])).toEqual(emptyJobDetails());
  });
});
