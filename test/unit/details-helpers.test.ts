import {
  type ConflictItem,
  chunkIds,
  compareCodePoints,
  dedupeConflictItems,
  dedupeDocIds,
  flushIdForChunks,
  generateJobId,
} from '../../shared/details';
import { InvalidIdError, InvalidInputError } from '../../shared/errors';

describe('flushIdForChunks', () => {
  it('matches the documented definition (vector computed independently with Python hashlib/json)', () => {
    // python3: sha256(json.dumps(sorted(set(ids)), separators=(",",":"), ensure_ascii=False).encode())
    expect(flushIdForChunks(['preparse', 'p1', 'p0', 'p1'])).toBe('06d4c920db7dca55');
  });

  it('sorts by code point like Python, not by UTF-16 code unit', () => {
    // JS's default sort would put U+1F600 (surrogate pair D83D…) before U+FFFD; Python does not.
    expect(flushIdForChunks(['\u{1F600}', '\uFFFD', 'a'])).toBe('77aa307fe96afcf5');
  });

  it('ignores order and repeats, and differs for different sets', () => {
    const a = flushIdForChunks(['p0', 'p1', 'p2']);
    expect(flushIdForChunks(['p2', 'p0', 'p1'])).toBe(a);
    expect(flushIdForChunks(new Set(['p1', 'p2', 'p0', 'p2']))).toBe(a);
    expect(flushIdForChunks(['p0', 'p1'])).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
  });

  it('does not confuse ids that a naive join would merge', () => {
    expect(flushIdForChunks(['a,b'])).not.toBe(flushIdForChunks(['a', 'b']));
    expect(flushIdForChunks(['ab'])).not.toBe(flushIdForChunks(['a', 'b']));
  });

  it('validates every chunk id and needs at least one', () => {
    expect(() => flushIdForChunks(['p0', ''])).toThrow(InvalidIdError);
    expect(() => flushIdForChunks(['p0', 'x\ny'])).toThrow(InvalidIdError);
    expect(() => flushIdForChunks(['p0', 'x'.repeat(257)])).toThrow(InvalidIdError);
    expect(() => flushIdForChunks([7 as unknown as string])).toThrow(InvalidIdError);
    expect(() => flushIdForChunks([])).toThrow(InvalidInputError);
  });

  it('accepts the short chunk ids from shared/ids (re-exported by the barrel)', () => {
    expect(flushIdForChunks([chunkIds.part(0), chunkIds.preparse, chunkIds.timeout])).toMatch(
      /^[0-9a-f]{16}$/,
    );
    expect(generateJobId()).toMatch(/^[a-z2-7]{13}$/);
  });
});

describe('compareCodePoints', () => {
  it('orders by Unicode code point', () => {
    expect(['b', '\u{1F600}', '\uFFFD', 'a'].sort(compareCodePoints)).toEqual([
      'a',
      'b',
      '\uFFFD',
      '\u{1F600}',
    ]);
    expect(compareCodePoints('x', 'x')).toBe(0);
  });
});

describe('dedupeDocIds', () => {
  it('keeps the first occurrence of each id, in order', () => {
    expect(dedupeDocIds(['d3', 'd1', 'd3', 'd2', 'd1'])).toEqual(['d3', 'd1', 'd2']);
    expect(dedupeDocIds([])).toEqual([]);
  });
});

describe('dedupeConflictItems', () => {
  it('treats items equal as JSON as one, whatever their key order, keeping first-occurrence order', () => {
    const a: ConflictItem = {
      doc_id: 'd1',
      existing_version: 3,
      incoming_version: 2,
      meta: { x: 1, y: [1, 2] },
    };
    const aReordered: ConflictItem = {
      meta: { y: [1, 2], x: 1 },
      incoming_version: 2,
      doc_id: 'd1',
      existing_version: 3,
    };
    const b: ConflictItem = { doc_id: 'd1', existing_version: 4, incoming_version: 2 };
    const c: ConflictItem = { doc_id: 'd0' };
    expect(dedupeConflictItems([a, b, aReordered, c, b])).toEqual([a, b, c]);
  });

  it('keeps items that differ only in array order or value type', () => {
    const items: ConflictItem[] = [
      { doc_id: 'd', v: [1, 2] },
      { doc_id: 'd', v: [2, 1] },
      { doc_id: 'd', v: '1' },
      { doc_id: 'd', v: 1 },
      { doc_id: 'd', v: null },
    ];
    expect(dedupeConflictItems(items)).toEqual(items);
  });
});
