import { compactDetails, expandDetails, NUMBERED, splitNumbered } from '../../shared/archive/format';
import { CorruptObjectError } from '../../shared/errors';
import { details } from '../support/archive-fixture';
import { NUMBERED_EDGE_IDS } from '../support/numbered-ids';

const P = 'gid://shopify/Product/';

describe('document lists at rest', () => {
  it("stores a list's ids as offsets from its first id, one element per id, and restores them exactly", () => {
    const ids = [
      `${P}7090574800520`,
      `${P}7090574800569`,
      `${P}7090574800020`,
      `${P}7090574800520x`,
      'other-7',
    ];
    const d = details({
      chunk_ids: ['p0'],
      failed: { r: ids },
      skipped: { s: [`${P}1`, `${P}999999999999999`] },
    });
    const stored = compactDetails(d);
    expect(stored.failed.r).toEqual([`${P}7090574800520`, '~49', '~-500', `${P}7090574800520x`, 'other-7']);
    expect(stored.skipped.s).toEqual([`${P}1`, '~999999999999998']);
    expect(JSON.stringify(expandDetails(JSON.parse(JSON.stringify(stored)), 'w'))).toBe(JSON.stringify(d));
  });

  it('splits an id as NUMBERED does (the hand-written split every id goes through)', () => {
    const ids = NUMBERED_EDGE_IDS;
    for (const id of ids) {
      const m = NUMBERED.exec(id);
      expect({ id, split: splitNumbered(id) }).toEqual({
        id,
        split: m ? { prefix: m[1], n: Number(m[2]) } : null,
      });
    }
  });

  it('stores ids beginning with ~ with one more ~, and lists whose first id has no number as they are', () => {
    const cases = [['~7', 'x8', '~~'], ['a', 'a1', 'a2'], ['a1', 'a01', 'a1234567890123456', 'b2', 'a0'], []];
    for (const ids of cases) {
      const d = details({ chunk_ids: [], failed: {}, skipped: { r: ids } });
      const stored = compactDetails(d);
      expect(stored.skipped.r?.filter((s) => /^~-?\d+$/.test(s))).toEqual([]);
      expect(expandDetails(stored, 'w')).toEqual(d);
    }
    expect(compactDetails(details({ chunk_ids: [], failed: { r: ['~7', 'x'] } })).failed.r).toEqual([
      '~~7',
      'x',
    ]);
  });

  it('refuses an offset with no numbered first id, a malformed one, or one out of range, naming the record', () => {
    for (const l of [['~5'], ['a', '~5'], ['a1', '~05'], ['a1', '~-1'], ['a1', '~1000000000000000']]) {
      expect(() =>
        expandDetails({ chunk_ids: [], failed: { r: l }, skipped: {}, conflict: {} }, 'part-x line 3'),
      ).toThrow(CorruptObjectError);
    }
    expect(() => expandDetails({ failed: { r: ['a1', '~x'] } }, 'part-x line 3')).toThrow('part-x line 3');
  });
});
