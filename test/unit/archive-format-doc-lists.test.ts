import { compactDetails, expandDetails, NUMBERED, splitNumbered } from '../../shared/archive/format';
import { CorruptObjectError } from '../../shared/errors';
import { details } from '../support/archive-fixture';
import { NUMBERED_EDGE_IDS } from '../support/numbered-ids';

const P = 'gid://shopify/Product/';

describe('document lists at rest', () => {
  it("stores a list's ids as offsets (numbers) from its first id, one element per id, and restores them exactly", () => {
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
    expect(stored.failed.r).toEqual([`${P}7090574800520`, 49, -500, `${P}7090574800520x`, 'other-7']);
    expect(stored.skipped.s).toEqual([`${P}1`, 999999999999998]);
    // As written: a number between two commas, no quotes, no `~`.
    expect(JSON.stringify(stored.failed.r)).toBe(
      `["${P}7090574800520",49,-500,"${P}7090574800520x","other-7"]`,
    );
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

  it('stores ids beginning with ~ or that read as integers with a ~ in front, and lists whose first id has no number as they are', () => {
    const cases = [
      ['~7', 'x8', '~~'],
      ['a', 'a1', 'a2'],
      ['a1', 'a01', 'a1234567890123456', 'b2', 'a0'],
      ['7', '8', '-3', '07', 'x'],
      ['x7', '12', '-1', 'x9'],
      [],
    ];
    for (const ids of cases) {
      const d = details({ chunk_ids: [], failed: {}, skipped: { r: ids } });
      const stored = compactDetails(d);
      // No stored string reads as an integer: SQL takes those for offsets.
      expect(stored.skipped.r?.filter((s) => typeof s === 'string' && /^-?\d+$/.test(s))).toEqual([]);
      expect(expandDetails(JSON.parse(JSON.stringify(stored)), 'w')).toEqual(d);
    }
    expect(
      compactDetails(details({ chunk_ids: [], failed: { r: ['~7', 'x', '5', 'x9'] } })).failed.r,
    ).toEqual(['~~7', 'x', '~5', 'x9']);
    // A first id stored with a `~` (it reads as an integer) is no base: the next ids stay whole.
    expect(compactDetails(details({ chunk_ids: [], failed: { r: ['5', '6'] } })).failed.r).toEqual([
      '~5',
      '~6',
    ]);
  });

  it('refuses an offset with no numbered first id, a malformed one, or one out of range, naming the record', () => {
    for (const l of [[5], ['a', 5], ['~5', 1], ['a1', 1.5], ['a1', -1], ['a1', 1e15], ['a1', 2 ** 60]]) {
      expect(() =>
        expandDetails({ chunk_ids: [], failed: { r: l }, skipped: {}, conflict: {} }, 'part-x line 3'),
      ).toThrow(CorruptObjectError);
    }
    expect(() => expandDetails({ failed: { r: ['a', 1] } }, 'part-x line 3')).toThrow('part-x line 3');
  });
});
