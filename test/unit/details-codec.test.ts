import { gunzipSync, gzipSync } from 'node:zlib';
import {
  decodeFlushBody,
  decodePlatformData,
  encodeFlushBody,
  encodePlatformData,
  isGzip,
  type JobDetailsPayload,
  normalizeJobDetails,
} from '../../shared/details';
import { CorruptObjectError, InvalidInputError } from '../../shared/errors';

const KEY = 'job-details/j1/0123456789abcdef.json.gz';

const payload: JobDetailsPayload = {
  chunk_ids: ['p1', 'p0', 'p1'],
  failed: { 'bad-sku': ['d1', 'd2', 'd1'] },
  skipped: {},
  conflict: { version: [{ doc_id: 'd4', existing_version: 3, note: { é: 'ü', n: null } }] },
};

const corruptReason = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CorruptObjectError);
    const e = err as CorruptObjectError;
    expect(e.key).toBe(KEY);
    expect(e.message).toContain(KEY);
    return e.reason;
  }
  throw new Error('expected a CorruptObjectError');
};

describe('flush body', () => {
  it('round-trips through gzip JSON as the normalised payload', () => {
    const bytes = encodeFlushBody(payload);
    expect(isGzip(bytes)).toBe(true);
    expect(decodeFlushBody(bytes, KEY)).toEqual(normalizeJobDetails(payload));
  });

  it('is plain seed-format JSON inside the gzip (what a Python reader sees)', () => {
    const json = JSON.parse(gunzipSync(encodeFlushBody(payload)).toString('utf8'));
    expect(Object.keys(json).sort()).toEqual(['chunk_ids', 'conflict', 'failed', 'skipped']);
    expect(json.chunk_ids).toEqual(['p0', 'p1']);
    expect(json.failed).toEqual({ 'bad-sku': ['d1', 'd2'] });
  });

  it('is byte-identical for equal payloads, whatever their key or list-duplicate order', () => {
    const same: JobDetailsPayload = {
      conflict: { version: [{ note: { n: null, é: 'ü' }, existing_version: 3, doc_id: 'd4' }] },
      skipped: {},
      failed: { 'bad-sku': ['d1', 'd2'] },
      chunk_ids: ['p0', 'p1'],
    };
    const bytes = encodeFlushBody(payload);
    expect(Buffer.compare(encodeFlushBody(same), bytes)).toBe(0);
    // Fixed header: mtime 0, level-9 flag, OS byte pinned to "unknown".
    expect([...bytes.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 0xff]);
  });

  it('refuses to encode an invalid payload', () => {
    expect(() => encodeFlushBody({ ...payload, chunk_ids: [''] })).toThrow(/chunk_ids\[0\]/);
    expect(() => encodeFlushBody({ ...payload, extra: 1 } as JobDetailsPayload)).toThrow(InvalidInputError);
  });

  it.each<[string, Uint8Array, RegExp]>([
    ['zero bytes', new Uint8Array(0), /empty object/],
    ['not gzip (plain JSON)', Buffer.from(JSON.stringify(payload)), /not gzip/],
    ['one byte', Buffer.from([0x1f]), /not gzip/],
    ['truncated gzip', encodeFlushBody(payload).subarray(0, 20), /bad gzip/],
    [
      'gzip with a bad checksum',
      (() => {
        const b = Buffer.from(encodeFlushBody(payload));
        b[b.length - 5] = (b[b.length - 5] ?? 0) ^ 0xff; // CRC32 trailer
        return b;
      })(),
      /bad gzip/,
    ],
    ['gzip of nothing', gzipSync(Buffer.alloc(0)), /gzip holds no data/],
    ['gzip of bad JSON', gzipSync(Buffer.from('{"chunk_ids": [')), /bad JSON/],
    ['gzip of invalid UTF-8', gzipSync(Buffer.from([0x7b, 0xff, 0x7d])), /not valid UTF-8/],
    [
      'gzip of the wrong shape',
      gzipSync(Buffer.from('{"chunk_ids": [], "failed": {}}')),
      /skipped: is missing/,
    ],
    ['gzip of a JSON array', gzipSync(Buffer.from('[]')), /payload: must be a JSON object/],
  ])('%s → CorruptObjectError naming the key', (_case, bytes, reason) => {
    expect(corruptReason(() => decodeFlushBody(bytes, KEY))).toMatch(reason);
  });
});

describe('platform data body', () => {
  it('round-trips a JSON object as plain (not gzipped) JSON', () => {
    const data = { indexer: { mode: 'full', batch: 50, flags: [true, null] } };
    const bytes = encodePlatformData(data);
    expect(isGzip(bytes)).toBe(false);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(data);
    expect(decodePlatformData(bytes, KEY)).toEqual(data);
  });

  it.each<[string, unknown, string]>([
    ['an array', [1], 'platform data'],
    ['a string', 'x', 'platform data'],
    ['undefined inside', { a: { b: undefined } }, 'platform data["a"]["b"]'],
    ['a function inside', { f: () => 1 }, 'platform data["f"]'],
    ['Infinity inside', { n: Number.POSITIVE_INFINITY }, 'platform data["n"]'],
  ])('refuses to encode %s, naming where', (_case, data, field) => {
    expect(() => encodePlatformData(data)).toThrow(InvalidInputError);
    try {
      encodePlatformData(data);
    } catch (err) {
      expect((err as InvalidInputError).field).toBe(field);
    }
  });

  it.each<[string, Uint8Array, RegExp]>([
    ['zero bytes', new Uint8Array(0), /empty object/],
    ['bad JSON', Buffer.from('{"a":'), /bad JSON/],
    ['a JSON array', Buffer.from('[1]'), /must be a JSON object/],
    ['JSON null', Buffer.from('null'), /must be a JSON object/],
    ['gzip bytes', gzipSync(Buffer.from('{}')), /not valid UTF-8|bad JSON/],
  ])('decoding %s → CorruptObjectError naming the key', (_case, bytes, reason) => {
    expect(corruptReason(() => decodePlatformData(bytes, KEY))).toMatch(reason);
  });
});
