import {
  commitPart,
  emptyMonthIndex,
  INDEX_FORMAT,
  INDEX_FORMAT_V1,
  type IndexedJob,
  type IndexedPart,
  blockOf,
  jobEntries,
  type MonthIndex,
  parseIndexHeader,
  latestEntry,
  markDeleted,
  parseMonthIndex,
  partByName,
  serializeMonthIndex,
} from '../../shared/archive/month-index';
import { gunzipSync } from 'node:zlib';
import { gzipMemberLength } from '../../shared/archive/member-scan';
import { CorruptObjectError } from '../../shared/errors';

const part = (name: string): IndexedPart => ({
  name,
  key: `job-details-cold/s/2026-01/${name}`,
  size: 100,
  etag: 'e',
  sha256: 'h',
  run_id: 'r',
  committed_at: 't',
  job_count: 1,
  bytes_in: 500,
});
const entry = (p: string, over: Partial<IndexedJob> = {}): IndexedJob => ({
  part: p,
  offset: 10,
  length: 20,
  sha256: 'x',
  status: 'FAILED',
  completed_at: '2026-01-10T00:00:00Z',
  committed_at: 't',
  counts: { chunk_ids: 1, failed: 1, skipped: 0, conflict: 0 },
  platform_data: null,
  sources: [],
  deleted_at: null,
  ...over,
});

const P1 = 'part-20260201T000000Z-aaaaaaaa.jsonl.gz';
const P2 = 'part-20260301T000000Z-bbbbbbbb.jsonl.gz';

describe('month index', () => {
  const empty = emptyMonthIndex('s', '2026-01', 't0');

  it('commitPart appends the part and one entry per job; a retried job gets a second entry', () => {
    const once = commitPart(empty, part(P1), { j1: entry(P1), j2: entry(P1) }, 't1');
    const twice = commitPart(
      once,
      part(P2),
      { j1: entry(P2, { completed_at: '2026-01-20T00:00:00Z' }) },
      't2',
    );
    expect(twice.parts.map((p) => p.name)).toEqual([P1, P2]);
    expect(twice.jobs.j1?.map((e) => e.part)).toEqual([P1, P2]);
    expect(twice.jobs.j2).toHaveLength(1);
    expect(twice.updated_at).toBe('t2');
    expect(latestEntry(twice, 'j1')?.part).toBe(P2);
    expect(partByName(twice, P2)?.key).toContain(P2);
    expect(empty.jobs).toEqual({}); // inputs are not mutated
  });

  it('commitPart is idempotent per part name', () => {
    const once = commitPart(empty, part(P1), { j1: entry(P1) }, 't1');
    expect(commitPart(once, part(P1), { j1: entry(P1) }, 't9')).toBe(once);
  });

  it('job ids named like Object.prototype members work (fixed: they used to throw or leak)', () => {
    const idx = commitPart(empty, part(P1), { constructor: entry(P1), toString: entry(P1) }, 't1');
    expect(jobEntries(idx.jobs, 'constructor')).toHaveLength(1);
    expect(Object.hasOwn(idx.jobs, 'constructor')).toBe(true);
    expect(latestEntry(empty, 'constructor')).toBeUndefined();
    expect(jobEntries(empty.jobs, 'hasOwnProperty')).toEqual([]);
    const del = markDeleted(idx, [{ jobId: 'toString', part: P1 }], 't2');
    expect(jobEntries(del.jobs, 'toString')[0]?.deleted_at).toBe('t2');
  });

  it('markDeleted marks only the named part’s entry, once', () => {
    let idx = commitPart(empty, part(P1), { j1: entry(P1) }, 't1');
    idx = commitPart(idx, part(P2), { j1: entry(P2) }, 't2');
    const del = markDeleted(idx, [{ jobId: 'j1', part: P1 }], 't3');
    expect(del.jobs.j1?.map((e) => e.deleted_at)).toEqual(['t3', null]);
    expect(markDeleted(del, [{ jobId: 'j1', part: P1 }], 't4').jobs.j1?.[0]?.deleted_at).toBe('t3');
    expect(markDeleted(del, [], 't5')).toBe(del);
  });

  it('serialize → parse round-trips, as index@2: no record digests or platform refs stored', () => {
    const idx = commitPart(empty, part(P1), { j1: entry(P1) }, 't1');
    const back = parseMonthIndex(serializeMonthIndex(idx), 'k');
    const { sha256: _digest, ...slim } = entry(P1);
    const pd = slim.platform_data;
    const { sha256: _partDigest, ...storedPart } = part(P1);
    expect(back).toEqual({
      ...idx,
      format: INDEX_FORMAT,
      parts: [storedPart], // its key derived again from shop, month and name
      jobs: {
        j1: [
          {
            ...slim,
            platform_data: pd
              ? { offset: pd.offset, length: pd.length, ...(pd.line ? { line: pd.line } : {}) }
              : null,
          },
        ],
      },
    });
    expect(
      JSON.parse(Buffer.from(gunzipSync(serializeMonthIndex(idx))).toString()).jobs.j1[0],
    ).not.toHaveProperty('committed_at');
  });

  it('reads index@1 (digests, refs and commit times in every entry)', () => {
    const idx = commitPart(empty, part(P1), { j1: entry(P1) }, 't1');
    const v1 = Buffer.from(JSON.stringify({ ...idx, format: INDEX_FORMAT_V1 }));
    expect(parseMonthIndex(v1, 'k')).toEqual({ ...idx, format: INDEX_FORMAT_V1 });
  });

  it.each([
    ['not JSON', '{'],
    ['another format', JSON.stringify({ ...emptyMonthIndex('s', 'm', 't'), format: 'x' })],
    ['no parts', JSON.stringify({ format: INDEX_FORMAT, shop_id: 's', month: 'm', jobs: {} })],
    ['jobs is a list', JSON.stringify({ ...emptyMonthIndex('s', 'm', 't'), jobs: [] })],
    ['entries not a list', JSON.stringify({ ...emptyMonthIndex('s', 'm', 't'), jobs: { j1: entry(P1) } })],
    [
      'entry of an uncommitted part',
      JSON.stringify({ ...emptyMonthIndex('s', 'm', 't'), jobs: { j1: [entry(P1)] } }),
    ],
    [
      'entry without offset',
      JSON.stringify({
        ...emptyMonthIndex('s', 'm', 't'),
        parts: [part(P1)],
        jobs: { j1: [{ ...entry(P1), offset: '1' }] },
      }),
    ],
  ])('parseMonthIndex: %s → CorruptObjectError naming the key', (_name, text) => {
    expect(() => parseMonthIndex(Buffer.from(text), 'job-details-index/s/m/index.json')).toThrow(
      CorruptObjectError,
    );
    expect(() => parseMonthIndex(Buffer.from(text), 'job-details-index/s/m/index.json')).toThrow(
      'job-details-index/s/m/index.json',
    );
  });
});

describe('blocked index@2 (a month too large for one block)', () => {
  const many = (n: number): MonthIndex => {
    const jobs: Record<string, IndexedJob> = {};
    for (let i = 0; i < n; i++) jobs[`job-${String(i).padStart(5, '0')}`] = entry(P1, { offset: i * 10 });
    return commitPart(emptyMonthIndex('s', '2026-01', 't0'), part(P1), jobs, 't1');
  };

  it('stores a header member with the block directory, then one member per block of ≤ 64 KB of JSON', () => {
    const idx = many(6000);
    const bytes = serializeMonthIndex(idx);
    const head = gzipMemberLength(bytes);
    if (!('length' in head)) throw new Error('no header member');
    const { header, blocks } = parseIndexHeader(bytes.subarray(0, head.length), 'k');
    expect(header.jobs).toBeUndefined();
    expect(blocks.length).toBeGreaterThan(4);
    // Blocks tile the rest of the object, in job id order.
    expect(blocks.reduce((n, b) => n + b.length, 0)).toBe(bytes.length - head.length);
    for (const [i, b] of blocks.entries()) {
      if (i > 0) expect(b.first > (blocks[i - 1]?.last ?? '')).toBe(true);
      const json = gunzipSync(bytes.subarray(head.length + b.offset, head.length + b.offset + b.length));
      expect(json.length).toBeLessThanOrEqual(64 * 1024 + 64); // the block's entries + its {"jobs":…} line
      const ids = Object.keys(JSON.parse(json.toString()).jobs);
      expect([ids[0], ids.at(-1)]).toEqual([b.first, b.last]);
    }
    // The block a job id falls in holds it; an id outside every range has none.
    expect((blockOf(blocks, 'job-01234')?.first ?? 'z') <= 'job-01234').toBe(true);
    expect(blockOf(blocks, 'zzz')).toBeUndefined();
  });

  it('reads back whole (gzip -dc gives every member) to the same index', () => {
    const idx = many(2000);
    const back = parseMonthIndex(serializeMonthIndex(idx), 'k');
    expect(Object.keys(back.jobs)).toHaveLength(2000);
    expect(back.jobs['job-01999']?.[0]).toMatchObject({ offset: 19990, part: P1, committed_at: 't' });
    expect(back.parts).toEqual(parseMonthIndex(serializeMonthIndex(many(1)), 'k').parts);
  });
});
