import type { JobRecord } from '../../shared/archive/format';
import {
  choosePlatformData,
  combineDetails,
  combineSources,
  ReadLedger,
  sourceOf,
} from '../../shared/reader';
import { details, jobMeta } from '../support/archive-fixture';

const record = (d: JobRecord['details']): JobRecord => ({
  type: 'job',
  shop_id: 's',
  job_id: 'j',
  job: jobMeta(),
  details: d,
  platform_data_ref: null,
  sources: [],
});

describe('combineDetails', () => {
  it('nothing on either side → null, none', () => {
    expect(combineDetails([], [])).toEqual({ details: null, source: 'none' });
  });

  it('archive entries (oldest first) then hot flushes, merged and deduplicated', () => {
    const old = record(details({ chunk_ids: ['p1', 'p0'], failed: { r: ['d1', 'd2'] } }));
    const newer = record(details({ chunk_ids: ['p2'], failed: { r: ['d2', 'd3'] } }));
    const hot = details({ chunk_ids: ['p0', 'p3'], failed: { r: ['d3', 'd4'], q: ['d9'] } });
    expect(combineDetails([old, newer], [hot])).toEqual({
      details: {
        chunk_ids: ['p0', 'p1', 'p2', 'p3'],
        failed: { q: ['d9'], r: ['d1', 'd2', 'd3', 'd4'] },
        skipped: {},
        conflict: {},
      },
      source: 'both',
    });
  });

  it('the same data on both sides (archived, not yet deleted) comes out once', () => {
    const d = details({ chunk_ids: ['p0'], conflict: { v: [{ doc_id: 'a', n: 1 }] } });
    expect(combineDetails([record(d)], [d])).toEqual({ details: d, source: 'both' });
    expect(combineDetails([record(d)], []).source).toBe('archive');
    expect(combineDetails([], [d]).source).toBe('hot');
  });

  it('a job with no details reads the same hot and archived: null (its archived record is empty)', () => {
    const empty = details({ chunk_ids: [] });
    expect(combineDetails([], [])).toMatchObject({ details: null });
    expect(combineDetails([record(empty)], [])).toEqual({ details: null, source: 'archive' });
    const later = details({ chunk_ids: ['p0'], failed: { r: ['d1'] } });
    expect(combineDetails([record(empty), record(later)], []).details).toEqual(later);
  });
});

describe('choosePlatformData', () => {
  it('hot wins (it is overwritten in place, so newest); else the archive; else none', () => {
    expect(choosePlatformData({ h: 1 }, { a: 1 })).toEqual({ data: { h: 1 }, source: 'hot' });
    expect(choosePlatformData(null, { a: 1 })).toEqual({ data: { a: 1 }, source: 'archive' });
    expect(choosePlatformData(null, null)).toEqual({ data: null, source: 'none' });
  });
});

describe('provenance accounting', () => {
  it('sourceOf / combineSources', () => {
    expect([
      sourceOf(true, true),
      sourceOf(true, false),
      sourceOf(false, true),
      sourceOf(false, false),
    ]).toEqual(['both', 'hot', 'archive', 'none']);
    expect(combineSources('archive', 'hot')).toBe('both');
    expect(combineSources('none', 'archive')).toBe('archive');
    expect(combineSources('both', 'none')).toBe('both');
    expect(combineSources('none', 'none')).toBe('none');
  });

  it('ReadLedger counts requests and bytes and lists each part once, sorted', () => {
    const t = new ReadLedger();
    t.request();
    t.request();
    t.received(10);
    t.received(5);
    t.partRead('b');
    t.partRead('a');
    t.partRead('b');
    expect(t.provenance('archive')).toEqual({
      source: 'archive',
      parts: ['a', 'b'],
      requests: 2,
      bytes: 15,
      inline: [],
      warnings: [],
    });
    t.warn('archive damaged, left out: x');
    expect(t.provenance('hot').warnings).toEqual(['archive damaged, left out: x']);
  });
});
