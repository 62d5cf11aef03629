import { InvalidIdError } from '../../shared/errors';
import {
  chunkIds,
  generateJobId,
  validateChunkId,
  validateFlushId,
  validateJobId,
  validateMonth,
  validateShopId,
} from '../../shared/ids';

describe('id validation (before any id becomes a key)', () => {
  const bad: Array<[string, unknown, RegExp]> = [
    ['empty', '', /must not be empty/],
    ['parent directory', '../other-job', /contains '\/'|contains '\.\.'/],
    ['dot-dot inside', 'a..b', /contains '\.\.'/],
    ['slash', 'a/b', /contains '\/'/],
    ['control character', 'job\u0000x', /control character/],
    ['newline', 'job\nx', /control character/],
    ['leading dot', '.hidden', /starting alphanumeric/],
    ['space', 'a b', /only letters/],
    ['not a string', 42, /must be a string/],
  ];

  it.each(bad)('job id: %s → InvalidIdError naming the id and the reason', (_case, value, reason) => {
    const err = (() => {
      try {
        validateJobId(value);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(InvalidIdError);
    expect((err as InvalidIdError).name).toBe('InvalidIdError');
    expect((err as InvalidIdError).kind).toBe('job id');
    expect((err as InvalidIdError).value).toBe(value);
    expect((err as InvalidIdError).message).toMatch(reason);
  });

  it('limits lengths: job and flush ids 64, shop ids 128', () => {
    expect(validateJobId('a'.repeat(64))).toHaveLength(64);
    expect(() => validateJobId('a'.repeat(65))).toThrow(/longer than 64/);
    expect(() => validateFlushId('f'.repeat(65))).toThrow(/longer than 64/);
    expect(validateShopId('s'.repeat(128))).toHaveLength(128);
    expect(() => validateShopId('s'.repeat(129))).toThrow(/longer than 128/);
  });

  it('accepts new short ids, legacy UUIDs and shop domains', () => {
    expect(validateJobId('k3jqxr2m7zaba')).toBe('k3jqxr2m7zaba');
    expect(validateJobId('0f8fad5b-d9cb-469f-a165-70867728950e')).toBe(
      '0f8fad5b-d9cb-469f-a165-70867728950e',
    );
    expect(validateShopId('acme-store.myshopify.com')).toBe('acme-store.myshopify.com');
    expect(validateFlushId('06d4c920db7dca55')).toBe('06d4c920db7dca55');
  });

  it('chunk ids are not key segments but are bounded and printable', () => {
    expect(validateChunkId('imports/shop/2026-01-01/x.jsonl#part#3')).toContain('#part#');
    expect(() => validateChunkId('')).toThrow(InvalidIdError);
    expect(() => validateChunkId('x'.repeat(257))).toThrow(/longer than 256/);
    expect(() => validateChunkId('p\u00071')).toThrow(/control character/);
  });
});

describe('short ids (seed Phase 2 and 3)', () => {
  it('chunk ids are p{idx}, preparse and timeout', () => {
    expect(chunkIds.part(0)).toBe('p0');
    expect(chunkIds.part(199)).toBe('p199');
    expect(chunkIds.preparse).toBe('preparse');
    expect(chunkIds.timeout).toBe('timeout');
    expect(() => chunkIds.part(-1)).toThrow(InvalidIdError);
    expect(() => chunkIds.part(1.5)).toThrow(InvalidIdError);
  });

  it('generateJobId gives 13 lower-case base32 characters, valid as a job id, and does not repeat', () => {
    const ids = Array.from({ length: 5000 }, generateJobId);
    for (const id of ids.slice(0, 50)) {
      expect(id).toMatch(/^[a-z2-7]{13}$/);
      expect(validateJobId(id)).toBe(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('generateJobId spreads its bits over every position (≥ 60 random bits, not a counter)', () => {
    const ids = Array.from({ length: 2000 }, generateJobId);
    // 13 × 5 = 65 bits carry 64 random bits: the last character holds 4 of them plus a zero bit.
    for (let pos = 0; pos < 12; pos++) {
      expect(new Set(ids.map((id) => id[pos])).size).toBeGreaterThan(28);
    }
    expect(new Set(ids.map((id) => id[12])).size).toBeGreaterThan(12);
  });
});

describe('months', () => {
  it('validateMonth accepts yyyy-mm only', () => {
    expect(validateMonth('2026-12')).toBe('2026-12');
    for (const bad of ['2026-13', '2026-1', '26-01', '2026-01-01', '../x', 7]) {
      expect(() => validateMonth(bad)).toThrow(InvalidIdError);
    }
  });
});
