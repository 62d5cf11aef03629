import { gunzipSync, gzipSync } from 'node:zlib';
import {
  decodeBlock,
  encodeRecordBlock,
  type PartRecord,
  parsePartRecord,
  platformDataRef,
  sha256Hex,
} from '../../shared/archive/format';
import { CorruptObjectError } from '../../shared/errors';
import { details, jobMeta } from '../support/archive-fixture';

const JOB: PartRecord = {
  type: 'job',
  shop_id: 'acme.myshopify.com',
  job_id: 'j1',
  job: jobMeta(),
  details: details({ chunk_ids: ['p0'], conflict: { v: [{ doc_id: 'd', b: 2, a: 1 }] } }),
  platform_data_ref: null,
  sources: [{ key: 'job-details/j1/abc.json.gz', size: 10 }],
};

describe('encodeRecordBlock / decodeBlock', () => {
  it('one record → one gzip member holding one canonical JSONL line; decodes back', () => {
    const enc = encodeRecordBlock(JOB);
    const line = gunzipSync(enc.member).toString('utf8');
    expect(line.endsWith('\n')).toBe(true);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(enc.lineBytes).toBe(Buffer.byteLength(line));
    expect(enc.sha256).toBe(sha256Hex(line));
    // Keys sorted: the same record gives the same bytes whatever its key order.
    expect(line.startsWith('{"details":')).toBe(true);
    expect(decodeBlock(enc.member, 'here')).toEqual({ record: JOB, sha256: enc.sha256 });
  });

  it('is deterministic: equal records → identical bytes', () => {
    const reordered = { ...JOB, job: { ...jobMeta() } } as PartRecord;
    expect(Buffer.compare(encodeRecordBlock(JOB).member, encodeRecordBlock(reordered).member)).toBe(0);
  });

  it('members concatenate into a valid multi-member gzip (gzip -dc reads the whole part)', () => {
    const a = encodeRecordBlock({ type: 'platform_data', ref: 'r', data: { x: 1 } });
    const b = encodeRecordBlock(JOB);
    const all = gunzipSync(Buffer.concat([a.member, b.member]))
      .toString('utf8')
      .trimEnd()
      .split('\n');
    expect(all.map((l) => JSON.parse(l).type)).toEqual(['platform_data', 'job']);
  });

  it.each([
    ['not gzip', Buffer.from('{"type":"job"}\n'), /not a gzip member/],
    ['truncated gzip', encodeRecordBlock(JOB).member.subarray(0, 30), /does not decompress/],
    ['two lines in one member', gzipSync('{"type":"part"}\n{"type":"part"}\n'), /exactly one JSONL line/],
    ['no trailing newline', gzipSync('{"type":"part"}'), /exactly one JSONL line/],
    ['not JSON', gzipSync('{nope\n'), /not JSON/],
    ['unknown record type', gzipSync('{"type":"mystery"}\n'), /unknown record type/],
  ])('%s → CorruptObjectError naming where', (_name, bytes, reason) => {
    expect(() => decodeBlock(bytes, 'part-x bytes 0-9')).toThrow(CorruptObjectError);
    expect(() => decodeBlock(bytes, 'part-x bytes 0-9')).toThrow(reason);
    expect(() => decodeBlock(bytes, 'part-x bytes 0-9')).toThrow('part-x bytes 0-9');
  });
});

describe('platformDataRef', () => {
  it('is a content hash of the canonical JSON: key order does not matter, content does', () => {
    expect(platformDataRef({ a: 1, b: [1, 2] })).toBe(platformDataRef({ b: [1, 2], a: 1 }));
    expect(platformDataRef({ a: 1 })).not.toBe(platformDataRef({ a: 2 }));
    expect(platformDataRef({ a: 1 })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('job records from before whole rows were archived', () => {
  const v1Record = {
    type: 'job',
    shop_id: 's',
    job_id: 'j',
    job: { status: 'FAILED', completed_at: '2026-03-01T00:00:00.000Z' },
    details: { chunk_ids: [], failed: {}, skipped: {}, conflict: {} },
    platform_data_ref: null,
    sources: [],
  };

  it('parse as before: no row, no row_reduced, no inline', () => {
    const v1 = v1Record;
    const r = parsePartRecord(v1, 'part');
    expect(r).toMatchObject({ type: 'job', job_id: 'j' });
    expect(r).not.toHaveProperty('row');
    expect(r).not.toHaveProperty('inline');
  });

  it('a whole-row record keeps the row, and malformed row fields are corruption', () => {
    const base = v1Record;
    const r = parsePartRecord(
      { ...base, row: { x: [1] }, row_reduced: { completed_chunks: 3 }, inline: ['platform_data'] },
      'p',
    );
    expect(r).toMatchObject({
      row: { x: [1] },
      row_reduced: { completed_chunks: 3 },
      inline: ['platform_data'],
    });
    expect(() => parsePartRecord({ ...base, row: 'x' }, 'p')).toThrow(/field row must be an object or null/);
    expect(() => parsePartRecord({ ...base, inline: [1] }, 'p')).toThrow(/field inline/);
  });
});
