import {
  mergeWatermarks,
  WATERMARK_FORMAT,
  type WatermarkDoc,
} from '../../shared/archive/steps/plan/watermark';
import {
  canonical,
  EMPTY_SUMMARY,
  type ErasureSummary,
  forgottenAtOf,
  isForgottenIn,
  overdueIn,
  parseSummary,
  pendingRedactions,
  sameSummary,
  shopDigest,
  withClosed,
  withForgotten,
  withOpen,
} from '../../shared/erasure/summary';

const bad = (why: string): never => {
  throw new Error(why);
};

describe('erasure summary (the watermark field runs read instead of listing)', () => {
  const forgotAt = '2026-03-01T10:00:00.000Z';
  const s = withForgotten(EMPTY_SUMMARY, 'acme.myshopify.com', forgotAt);

  it('names no shop: a 128-bit digest of its id, stable and distinct', () => {
    expect(shopDigest('acme.myshopify.com')).toMatch(/^[0-9a-f]{32}$/);
    expect(shopDigest('acme.myshopify.com')).toBe(shopDigest('acme.myshopify.com'));
    expect(shopDigest('acme.myshopify.com')).not.toBe(shopDigest('acme2.myshopify.com'));
    expect(JSON.stringify(s)).not.toContain('acme');
  });

  it('refuses a forgotten shop its jobs completed at or before the forget, as instants', () => {
    expect(forgottenAtOf(s, 'acme.myshopify.com')).toBe(forgotAt);
    expect(isForgottenIn(s, 'acme.myshopify.com', '2026-03-01T10:00:00.000000+00:00')).toBe(true);
    expect(isForgottenIn(s, 'acme.myshopify.com', '2026-03-01T10:00:00.001000+00:00')).toBe(false);
    expect(isForgottenIn(s, 'acme.myshopify.com', null)).toBe(true);
    expect(isForgottenIn(s, 'acme.myshopify.com', 'not a time')).toBe(true);
    expect(isForgottenIn(s, 'other.myshopify.com', null)).toBe(false);
    expect(isForgottenIn(undefined, 'acme.myshopify.com', null)).toBe(false);
  });

  it('a later forget of the same shop wins; an earlier one changes nothing', () => {
    expect(withForgotten(s, 'acme.myshopify.com', '2026-01-01T00:00:00.000Z')).toBe(s);
    const later = withForgotten(s, 'acme.myshopify.com', '2026-04-01T00:00:00.000Z');
    expect(forgottenAtOf(later, 'acme.myshopify.com')).toBe('2026-04-01T00:00:00.000Z');
  });

  it('open requests: overdue past the deadline, oldest first; pending redactions counted; closing removes', () => {
    let o: ErasureSummary = withOpen(s, 'r-new', {
      kind: 'forget-shop',
      shopId: 'b.myshopify.com',
      receivedAt: '2026-03-20T00:00:00.000Z',
    });
    o = withOpen(o, 'r-old', {
      kind: 'redact-doc',
      shopId: 'c.myshopify.com',
      receivedAt: '2026-02-01T00:00:00.000Z',
      pending: 'restore',
    });
    const at = new Date('2026-03-25T00:00:00.000Z');
    expect(overdueIn(o, at, 30)).toEqual([
      {
        id: 'r-old',
        kind: 'redact-doc',
        shopId: 'c.myshopify.com',
        receivedAt: '2026-02-01T00:00:00.000Z',
        state: 'pending',
        pendingReason: 'restore',
        ageDays: 52,
      },
    ]);
    expect(overdueIn(o, at, 1).map((r) => r.id)).toEqual(['r-old', 'r-new']);
    expect(pendingRedactions(o)).toBe(1);
    const closed = withClosed(o, 'r-old');
    expect(pendingRedactions(closed)).toBe(0);
    expect(withClosed(closed, 'r-old')).toBe(closed);
  });

  it('parses what it writes, refuses what it did not, and compares in canonical order', () => {
    const o = withOpen(s, 'r1', { kind: 'forget-shop', shopId: 'b', receivedAt: forgotAt });
    const round = parseSummary(JSON.parse(JSON.stringify(canonical(o))), bad);
    expect(sameSummary(round, o)).toBe(true);
    expect(parseSummary(undefined, bad)).toEqual(EMPTY_SUMMARY);
    expect(() => parseSummary({ forgotten: { acme: forgotAt }, open: {} }, bad)).toThrow('erasure.forgotten');
    expect(() => parseSummary({ forgotten: {}, open: { r: { kind: 'x' } } }, bad)).toThrow('erasure.open.r');
    expect(() => parseSummary([], bad)).toThrow('not a summary');
  });
});

describe("a run's watermark write keeps the stored erasure summary", () => {
  const erasure = withForgotten(EMPTY_SUMMARY, 'gone.myshopify.com', '2026-03-01T00:00:00.000Z');
  const stored: WatermarkDoc = {
    format: WATERMARK_FORMAT,
    cutoff: '2026-03-01T00:00:00.000Z',
    keys: { COMPLETED: '2026-02-20T00:00:00.000Z' },
    retry: [],
    runId: 'run-1',
    erasure,
  };
  const next: WatermarkDoc = {
    format: WATERMARK_FORMAT,
    cutoff: '2026-03-02T00:00:00.000Z',
    keys: { COMPLETED: '2026-02-21T00:00:00.000Z' },
    retry: [{ shopId: 'a', jobId: 'j1' }],
    runId: 'run-2',
  };

  it('merging keeps the stored summary (runs never change it)', () => {
    expect(mergeWatermarks(stored, next, 'run-2').erasure).toBe(erasure);
  });

  it('a document only an erasure wrote claims nothing: the run keys and cutoff stand', () => {
    const only: WatermarkDoc = { ...stored, cutoff: new Date(0).toISOString(), keys: {}, runId: '' };
    const m = mergeWatermarks(only, next, 'run-2');
    expect(m).toMatchObject({ cutoff: next.cutoff, keys: next.keys, runId: 'run-2', erasure });
    expect(m.retry).toEqual(next.retry);
  });
});
