import { sharedJobIds } from '../../infra/cli/audit-shared-ids';
import { decodeLine, encodeLine } from '../../shared/archive/format';
import {
  canonicalJson,
  decodeFlushBody,
  encodeFlushBody,
  encodePlatformData,
  isRawJson,
  MAX_JSON_DEPTH,
  parseJsonExact,
  rawJsonNumber,
  validateJobDetailsPayload,
} from '../../shared/details';
import { findJsonProblem, type JsonValue, jsonDeeperThan, scanJson } from '../../shared/details/json';
import { CorruptObjectError, InvalidInputError } from '../../shared/errors';

describe('parseJsonExact: numbers bit for bit', () => {
  const texts = [
    '9223372036854775807',
    '-9223372036854775808',
    '9007199254740993',
    '12345678901234567891',
    '1.0',
    '1e2',
    '-0',
    '0.1000000000000000055511151231257827',
    '1e400',
  ];
  it.each(texts)('%s is kept as its text and written back verbatim', (n) => {
    const v = parseJsonExact(`{"n":${n},"list":[${n}]}`, 'k') as { n: unknown; list: unknown[] };
    expect(isRawJson(v.n)).toBe(true);
    expect(JSON.stringify(v)).toBe(`{"n":${n},"list":[${n}]}`);
    expect(canonicalJson(v as never)).toBe(`{"list":[${n}],"n":${n}}`);
  });

  it('numbers a float64 reproduces stay plain numbers (and text that only looks like them is untouched)', () => {
    const v = parseJsonExact('{"a":5,"b":-12,"c":0.5,"d":"9223372036854775807","e":123456789012345}', 'k');
    expect(v).toEqual({ a: 5, b: -12, c: 0.5, d: '9223372036854775807', e: 123456789012345 });
  });

  it('a flush object and a part record carry them through (the archiver’s and reader’s paths)', () => {
    const payload = {
      chunk_ids: ['p0'],
      failed: {},
      skipped: {},
      conflict: { v: [{ doc_id: 'd', existing_version: rawJsonNumber('9223372036854775807') }] },
    };
    const decoded = decodeFlushBody(encodeFlushBody(payload), 'k');
    expect(canonicalJson(decoded as never)).toContain('"existing_version":9223372036854775807');
    const { line } = encodeLine({
      type: 'platform_data',
      ref: 'r',
      data: { big: decoded.conflict.v?.[0]?.existing_version ?? null },
    } as never);
    expect(line.toString()).toContain('"big":9223372036854775807');
    expect(JSON.stringify(decodeLine(line, 'w', 's').record)).toContain('"big":9223372036854775807');
    expect(encodePlatformData({ n: rawJsonNumber('12345678901234567891') }).toString()).toBe(
      '{"n":12345678901234567891}',
    );
  });
});

describe('scanJson: which texts need the exact (reviver) parse', () => {
  it.each([
    '{"n":9223372036854775807}',
    '[1,-0]',
    '{"a":[1.5]}',
    '{"a":1e2}',
    '{"a":2E-3}',
    '1234567890123456',
    '-0',
  ])('%s has a number a float64 may not reproduce', (text) => {
    expect(scanJson(text, 10).inexact).toBe(true);
  });

  it.each([
    '{"at":"2026-01-31T10:01:00.000Z","n":5,"m":-12,"z":0,"big":123456789012345}',
    '{"id":"9223372036854775807","s":"1.5e3 -0 \\"2.5\\""}',
    '[true,false,null,-7,[0,10]]',
  ])('%s has none (numbers in strings do not count)', (text) => {
    expect(scanJson(text, 10).inexact).toBe(false);
  });

  it('the fast path reads what the exact one reads', () => {
    const text = '{"at":"2026-01-31T10:01:00.000Z","n":5,"m":-12,"z":0,"big":123456789012345,"s":"x:1.5"}';
    expect(scanJson(text, 10).inexact).toBe(false);
    expect(parseJsonExact(text, 'k')).toEqual(JSON.parse(text));
    const mixed = '{"at":"2026-01-31T10:01:00.000Z","n":9007199254740993}';
    expect(JSON.stringify(parseJsonExact(mixed, 'k'))).toBe(mixed);
  });
});

describe('findJsonProblem: where a value stops being JSON', () => {
  it('names the first problem by its full path', () => {
    expect(findJsonProblem({ a: [1, { 'b"c': [null, Number.NaN] }] }, 'item')).toEqual({
      path: 'item["a"][1]["b\\"c"][1]',
      reason: 'NaN is not a JSON number',
    });
    expect(findJsonProblem({ a: { d: new Date(0) } }, 'p')).toEqual({
      path: 'p["a"]["d"]',
      reason: 'only plain objects and arrays are JSON',
    });
    const loop: Record<string, unknown> = {};
    loop.self = [loop];
    expect(findJsonProblem(loop, 'x')).toEqual({ path: 'x["self"][0]', reason: 'circular reference' });
    expect(findJsonProblem(undefined, 'u')).toEqual({ path: 'u', reason: 'undefined is not a JSON value' });
  });

  it('plain JSON (a shared object twice is not a loop) and array holes pass', () => {
    const shared = { n: 1 };
    // biome-ignore lint/suspicious/noSparseArray: a hole, as Array#map skips it
    expect(findJsonProblem({ a: shared, b: [shared, , 'x'], c: rawJsonNumber('1.0') }, 'ok')).toBeUndefined();
  });
});

describe('canonicalJson', () => {
  // The definition: keys sorted at every level, no whitespace, elements as map + join write them.
  const reference = (value: JsonValue): string => {
    if (value === null || typeof value !== 'object' || 'rawJSON' in value) return JSON.stringify(value);
    if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(value[k] as JsonValue)}`).join(',')}}`;
  };

  it('writes what the definition writes: nested objects, flat lists, raw numbers, odd keys', () => {
    const holes = [1, 2, 3];
    delete (holes as unknown[])[1];
    const values: JsonValue[] = [
      { b: 1, a: [3, 'x', null, true, -0, 1.5e300], c: { z: [], y: {}, é: 'ü', '\u2028': '"' } },
      ['gid://shopify/Product/1', 'gid://shopify/Product/2'],
      [1, [2, [3, { b: 2, a: 1 }]], { k: [rawJsonNumber('9223372036854775807')] }],
      [rawJsonNumber('1.0'), 'a'],
      holes as JsonValue,
      [],
      {},
      'plain',
      7,
      // Flat objects (what JSON.stringify writes alone when their keys are in order): in order,
      // out of order, integer-like keys (Object.keys lists them first, numerically: "9" before
      // "10", which sort() puts after), a flat list, a raw number or a nested list among the values.
      { a: 1, b: 'x', c: null, d: false, e: ['p', 1, null], f: -0, g: Number.NaN },
      { b: 1, a: 2 },
      { '9': 'x', '10': 'y', a: 1 },
      { '1': 'x', '2': 'y' },
      { a: rawJsonNumber('1.0'), b: 1 },
      { a: [[1]], b: 1 },
      { a: [{ d: 1, c: 2 }], b: 1 },
      { a: { d: 1, c: 2 }, b: { c: 1, d: 2 } },
      { '': 1, A: 2, a: 3, é: 4, '\u{1F600}': 5, '\uFFFF': 6 },
    ];
    for (const v of values) expect(canonicalJson(v)).toBe(reference(v));
  });
});

describe('bounded depth', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('counts nesting outside strings only', () => {
    expect(jsonDeeperThan(nested(3), 3)).toBe(false);
    expect(jsonDeeperThan(nested(4), 3)).toBe(true);
    expect(jsonDeeperThan(`["${'['.repeat(100)}\\"["]`, 2)).toBe(false);
  });

  it('a 50,000-deep document is a CorruptObjectError naming the object, not a stack overflow', () => {
    expect(() => parseJsonExact(nested(50_000), 'job-details/j/x.json.gz')).toThrow(CorruptObjectError);
    expect(() => parseJsonExact(nested(MAX_JSON_DEPTH), 'k')).not.toThrow();
    expect(() => parseJsonExact(nested(MAX_JSON_DEPTH + 1), 'k')).toThrow(
      /JSON nests deeper than 256 levels/,
    );
  });

  it('a writer handed a too-deep conflict item gets an InvalidInputError before any write', () => {
    let v: unknown = 1;
    for (let i = 0; i < 50_000; i++) v = [v];
    const payload = { chunk_ids: ['p0'], failed: {}, skipped: {}, conflict: { r: [{ doc_id: 'd', v }] } };
    expect(() => validateJobDetailsPayload(payload)).toThrow(InvalidInputError);
    expect(() => encodePlatformData({ v })).toThrow(/nested deeper than 256 levels/);
  });
});

describe('audit: job ids shared by shops', () => {
  it('names ids with rows in several shops and a hot prefix', () => {
    const hot = new Map([
      [
        'dup',
        {
          objects: new Map([
            ['k1', 'e'],
            ['k2', 'e'],
          ]),
        },
      ],
      ['solo', { objects: new Map([['k3', 'e']]) }],
    ]);
    const rows = [
      { shopId: 'b', jobId: 'dup' },
      { shopId: 'a', jobId: 'dup' },
      { shopId: 'a', jobId: 'solo' },
      { shopId: 'a', jobId: 'cold' },
      { shopId: 'b', jobId: 'cold' },
    ];
    expect(sharedJobIds(rows, hot)).toEqual([{ jobId: 'dup', shops: ['a', 'b'], hotObjects: 2 }]);
  });
});
