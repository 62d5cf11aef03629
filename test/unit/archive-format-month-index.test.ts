import { gunzipSync, gzipSync } from 'node:zlib';
import {
  applyCommit,
  blockOf,
  checkIndex,
  commitPart,
  emptyMonthIndex,
  entriesOf,
  gzipMemberLength,
  INDEX_FORMAT,
  type IndexedJob,
  type IndexedPart,
  jobEntries,
  latestEntry,
  type MonthIndex,
  markDeleted,
  markRearchive,
  mergeBlocks,
  monthIndexKey,
  parseIndexHeader,
  parseMonthIndex,
  partByName,
  type SettledCandidate,
  type SettledPart,
  serializeMonthIndex,
  settledCandidates,
  settledEntry,
  settlePart,
} from '../../shared/archive/format';
import { CorruptObjectError, InvalidIdError, UnsupportedFormatError } from '../../shared/errors';

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
  completed_at: '2026-01-10T00:00:00Z',
  committed_at: 't',
  platform_data: null,
  sources: [],
  deleted_at: null,
  ...over,
});

const P1 = 'part-20260201T000000Z-aaaaaaaa.jsonl.gz';
const P2 = 'part-20260301T000000Z-bbbbbbbb.jsonl.gz';

/** One part, one entry of j1 whose `completed` is the raw JSON `text` (undefined: absent). */
const withCompleted = (text: string | undefined, month = '2026-01'): Buffer =>
  Buffer.from(
    JSON.stringify({
      ...emptyMonthIndex('s', month, 't'),
      parts: [{ ...part(P1), block_bytes: [10] }],
      jobs: { j1: [{ part: 0, block: 0, ...(text === undefined ? {} : { completed: '@C@' }) }] },
    }).replace('"@C@"', text ?? ''),
  );

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

  it('serialize → parse round-trips, as index@5: the part ETag, no digests, line ranges or platform refs stored', () => {
    const idx = commitPart(empty, part(P1), { j1: entry(P1) }, 't1');
    const back = parseMonthIndex(serializeMonthIndex(idx), 'k');
    const { sha256: _digest, ...slim } = entry(P1);
    // No digest, no bytes_in (in memory only: the records name their sources' sizes).
    const { sha256: _partDigest, bytes_in: _in, ...storedPart } = part(P1);
    expect(storedPart.etag).toEqual(expect.any(String));
    expect(back).toEqual({
      ...idx,
      format: INDEX_FORMAT,
      parts: [storedPart], // its key derived again from shop, month and name
      jobs: { j1: [slim] },
    });
    const stored = JSON.parse(Buffer.from(gunzipSync(serializeMonthIndex(idx))).toString());
    // Part by position, block by number in the part's block_bytes; no status or counts (the record's);
    // a completion not in the canonical `…T…Z` form (no milliseconds here) is kept as text.
    expect(stored.parts[0].block_bytes).toEqual([10, 20]);
    expect(stored.parts[0]).not.toHaveProperty('bytes_in');
    expect(stored.parts[0].etag).toBe(part(P1).etag);
    expect(stored.jobs.j1[0]).toEqual({
      block: 1, // part 0 goes without saying
      pd_block: null, // no platform data
      completed: '2026-01-10T00:00:00Z',
    });
  });

  it('month 13 never rolls over: its completion is kept as text, its keys refuse it naming it', () => {
    // Before, monthStart('2026-13') was 2027-01-01 and a completion then was stored as 0; the Python
    // reader (test/python/test_reader.py Months) refuses such a month, so both now require 01–12.
    const idx = commitPart(
      emptyMonthIndex('s', '2026-13', 't'),
      part(P1),
      { j1: entry(P1, { offset: 0, length: 10, completed_at: '2027-01-01T00:00:00.000Z' }) },
      't',
    );
    const stored = JSON.parse(Buffer.from(gunzipSync(serializeMonthIndex(idx))).toString());
    expect(stored.jobs.j1[0].completed).toBe('2027-01-01T00:00:00.000Z');
    // The writer's key refuses it before any write; a stored index of that month is damage naming it.
    expect(() => monthIndexKey('s', '2026-13')).toThrow(InvalidIdError);
    expect(() => monthIndexKey('s', '2026-13')).toThrow('"2026-13"');
    expect(() => parseMonthIndex(withCompleted('0', '2026-13'), 'k')).toThrow(CorruptObjectError);
    expect(() => parseMonthIndex(withCompleted('0', '2026-13'), 'k')).toThrow('"2026-13"');
  });

  it('stores a canonical completion as milliseconds from the start of the month, and reads it back', () => {
    const at = '2026-01-31T23:59:59.999Z';
    const idx = commitPart(
      empty,
      { ...part(P1), size: 30 },
      {
        j1: entry(P1, { offset: 0, length: 30, completed_at: at }),
        j2: entry(P1, { offset: 0, length: 30, completed_at: '2026-01-01T00:00:00.000Z' }),
        // Another month's completion (never written by the archiver) still round-trips: a negative offset.
        j3: entry(P1, { offset: 0, length: 30, completed_at: '2025-12-31T23:00:00.000Z' }),
        j4: entry(P1, { offset: 0, length: 30, completed_at: 'not a time' }),
        // Before 1970 (outside what both readers decode from a number): text.
        j5: entry(P1, { offset: 0, length: 30, completed_at: '1969-12-31T23:59:59.000Z' }),
      },
      't1',
    );
    const bytes = serializeMonthIndex(idx);
    const stored = JSON.parse(Buffer.from(gunzipSync(bytes)).toString());
    expect(stored.jobs.j1[0]).toEqual({ pd_block: null, completed: 31 * 86_400_000 - 1 });
    expect(stored.jobs.j2[0]).toEqual({ pd_block: null, completed: 0 });
    expect(stored.jobs.j3[0]).toEqual({ pd_block: null, completed: -3_600_000 });
    expect(stored.jobs.j4[0]).toEqual({ pd_block: null, completed: 'not a time' });
    expect(stored.jobs.j5[0]).toEqual({ pd_block: null, completed: '1969-12-31T23:59:59.000Z' });
    const back = parseMonthIndex(bytes, 'k');
    expect(['j1', 'j2', 'j3', 'j4', 'j5'].map((j) => back.jobs[j]?.[0]?.completed_at)).toEqual([
      at,
      '2026-01-01T00:00:00.000Z',
      '2025-12-31T23:00:00.000Z',
      'not a time',
      '1969-12-31T23:59:59.000Z',
    ]);
  });

  it('index@3 keeps a part’s blocks (gaps included), platform-data blocks and per-entry exceptions', () => {
    const pd = { offset: 0, length: 10, line: { offset: 0, length: 5 }, ref: 'sha256:ab' };
    let idx = commitPart(
      empty,
      part(P1),
      {
        j1: entry(P1, { offset: 0, length: 10, line: { offset: 5, length: 5 }, platform_data: pd }),
        // Its platform data in another block (a payload longer than a block): named.
        j2: entry(P1, { offset: 50, length: 30, line: { offset: 0, length: 9 }, platform_data: pd }),
        j3: entry(P1, { offset: 50, length: 30, committed_at: 'earlier' }),
      },
      't1',
    );
    idx = markDeleted(
      idx,
      [
        { jobId: 'j1', part: P1 },
        { jobId: 'j2', part: P1 },
      ],
      't2',
    );
    const bytes = serializeMonthIndex(idx);
    const stored = JSON.parse(Buffer.from(gunzipSync(bytes)).toString());
    expect(stored.parts[0]).toMatchObject({ block_bytes: [10, 40, 30], deleted_at: 't2' });
    expect(stored.jobs.j1[0]).not.toHaveProperty('pd_block'); // in its own block
    expect(stored.jobs.j2[0]).toMatchObject({ block: 2, pd_block: 0 });
    expect(stored.jobs.j3[0]).toMatchObject({ pd_block: null }); // none
    expect(stored.jobs.j1[0]).not.toHaveProperty('block'); // block 0
    expect(stored.jobs.j1[0]).not.toHaveProperty('deleted_at');
    expect(stored.jobs.j3[0]).toMatchObject({ block: 2, deleted_at: null, committed_at: 'earlier' });
    const back = parseMonthIndex(bytes, 'k');
    expect(back.jobs.j1?.[0]).toMatchObject({
      offset: 0,
      length: 10,
      platform_data: { offset: 0, length: 10 },
      deleted_at: 't2',
    });
    expect(back.jobs.j1?.[0]).not.toHaveProperty('line');
    expect(back.jobs.j2?.[0]).toMatchObject({
      offset: 50,
      length: 30,
      platform_data: { offset: 0, length: 10 },
      deleted_at: 't2',
      committed_at: 't',
    });
    expect(back.jobs.j3?.[0]).toMatchObject({
      offset: 50,
      platform_data: null,
      deleted_at: null,
      committed_at: 'earlier',
    });
  });

  it('index@3 leaves out what goes without saying: one block, the committing run as the deleter', () => {
    const one = { ...part(P1), size: 30 };
    let idx = commitPart(empty, one, { j1: entry(P1, { offset: 0, length: 30 }) }, 't1');
    idx = markDeleted(idx, [{ jobId: 'j1', part: P1, objects: 2 }], 't2', 'r');
    const bytes = serializeMonthIndex(idx);
    const stored = JSON.parse(Buffer.from(gunzipSync(bytes)).toString());
    expect(stored.parts[0]).not.toHaveProperty('block_bytes');
    expect(stored.parts[0]).not.toHaveProperty('deleted_by'); // run 'r' committed and deleted it
    // One block followed by the filters member: block_bytes goes without saying too ([size − filters_bytes]).
    const filtered = { ...part(P1), size: 40, filters: { offset: 30, length: 10 } };
    const withFilters = serializeMonthIndex(
      commitPart(empty, filtered, { j1: entry(P1, { offset: 0, length: 30 }) }, 't1'),
    );
    const storedF = JSON.parse(Buffer.from(gunzipSync(withFilters)).toString());
    expect(storedF.parts[0]).toMatchObject({ filters_bytes: 10 });
    expect(storedF.parts[0]).not.toHaveProperty('block_bytes');
    expect(parseMonthIndex(withFilters, 'k').jobs.j1?.[0]).toMatchObject({ offset: 0, length: 30 });
    expect(stored.jobs.j1[0]).toEqual({ pd_block: null, completed: '2026-01-10T00:00:00Z', deleted: 2 });
    expect(parseMonthIndex(bytes, 'k').jobs.j1?.[0]).toMatchObject({
      offset: 0,
      length: 30,
      deleted_at: 't2',
      deleted_by: 'r',
      objects_deleted: 2,
    });
    // Deleted by another run: named.
    const other = markDeleted(
      commitPart(empty, one, { j1: entry(P1, { offset: 0, length: 30 }) }, 't1'),
      [{ jobId: 'j1', part: P1, objects: 1 }],
      't3',
      'r2',
    );
    const back = parseMonthIndex(serializeMonthIndex(other), 'k');
    expect(back.jobs.j1?.[0]).toMatchObject({ deleted_by: 'r2', objects_deleted: 1 });
  });

  it.each(['job-details-archive/index@5', 'job-details-archive/index@1'])(
    'a pre-1.0 index (%s) is refused with the fix in one line, never read',
    (format) => {
      const old = gzipSync(`${JSON.stringify({ ...emptyMonthIndex('s', '2026-01', 't'), format })}\n`);
      expect(() => parseMonthIndex(old, 'job-details-index/s/2026-01/index.json')).toThrow(
        UnsupportedFormatError,
      );
      expect(() => parseMonthIndex(old, 'k')).toThrow(/pre-1\.0 build.*rebuild the local data/);
    },
  );

  // The same cases as test/python/test_reader.py (Completion, Errors): both readers agree.
  it.each([
    ['1.0', '2026-01-01T00:00:00.001Z'],
    ['1e3', '2026-01-01T00:00:01.000Z'],
    ['-0.0', '2026-01-01T00:00:00.000Z'],
    ['86400000.000', '2026-01-02T00:00:00.000Z'],
  ])('completed %s is a whole number of milliseconds: read as that number', (text, want) => {
    expect(parseMonthIndex(withCompleted(text), 'k').jobs.j1?.[0]?.completed_at).toBe(want);
  });

  it.each([
    ['1.5', 'not 1.5'],
    ['1e-3', 'not 0.001'],
    ['1e400', 'not null'],
    [undefined, 'not absent'],
    ['null', 'not null'],
    ['[0]', 'not [0]'],
  ])('completed %s is refused with a CorruptObjectError naming the value', (text, named) => {
    expect(() => parseMonthIndex(withCompleted(text), 'k')).toThrow(CorruptObjectError);
    expect(() => parseMonthIndex(withCompleted(text), 'k')).toThrow(named);
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
      'entry naming no block of its part',
      JSON.stringify({
        ...emptyMonthIndex('s', 'm', 't'),
        parts: [{ ...part(P1), block_bytes: [10] }],
        jobs: { j1: [{ part: 0, block: 3, completed: 0 }] },
      }),
    ],
    [
      'blocks past the part’s size',
      JSON.stringify({ ...emptyMonthIndex('s', 'm', 't'), parts: [{ ...part(P1), block_bytes: [90, 20] }] }),
    ],
    ...[undefined, null, 1.5, [0], -1e15, 1e15].map((completed) => [
      `completed ${JSON.stringify(completed)}: neither whole milliseconds nor text`,
      JSON.stringify({
        ...emptyMonthIndex('s', '2026-01', 't'),
        parts: [{ ...part(P1), block_bytes: [10] }],
        jobs: { j1: [{ part: 0, block: 0, completed }] },
      }),
    ]),
  ])('parseMonthIndex: %s → CorruptObjectError naming the key', (_name, text) => {
    expect(() => parseMonthIndex(Buffer.from(text), 'job-details-index/s/m/index.json')).toThrow(
      CorruptObjectError,
    );
    expect(() => parseMonthIndex(Buffer.from(text), 'job-details-index/s/m/index.json')).toThrow(
      'job-details-index/s/m/index.json',
    );
  });
});

describe('blocked index@3 (a month too large for one block)', () => {
  const many = (n: number): MonthIndex => {
    const jobs: Record<string, IndexedJob> = {};
    for (let i = 0; i < n; i++)
      jobs[`job-${String(i).padStart(5, '0')}`] = entry(P1, { offset: i * 10, length: 10 });
    return commitPart(emptyMonthIndex('s', '2026-01', 't0'), { ...part(P1), size: n * 10 }, jobs, 't1');
  };

  it('stores a header member with the block directory, then one member per block of ≤ INDEX_BLOCK_BYTES of JSON', () => {
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
    expect(back.parts[0]).toMatchObject({ name: P1, size: 20000 });
  });
});

describe('index@4 additions', () => {
  const SHOP = 'shop-a';
  const key = 'job-details-index/shop-a/2026-01/index.json';
  const pIdx = (etag: string) => ({
    name: 'part-20260201T000000Z-aaaaaaaa.jsonl.gz',
    key: 'job-details-cold/shop-a/2026-01/part-20260201T000000Z-aaaaaaaa.jsonl.gz',
    size: 30,
    etag,
    run_id: 'r1',
    committed_at: 't1',
    job_count: 1,
    bytes_in: 5,
  });
  const e1 = {
    part: 'part-20260201T000000Z-aaaaaaaa.jsonl.gz',
    offset: 0,
    length: 30,
    completed_at: '2026-01-10T00:00:00Z',
    committed_at: 't1',
    platform_data: null,
    sources: [{ key: 'job-details/j1/a.json.gz', size: 3, etag: 'e' }],
    deleted_at: null,
  };
  const base = () => commitPart(emptyMonthIndex(SHOP, '2026-01', 't0'), pIdx('abc'), { j1: e1 }, 't1');

  it('a part without its ETag is corruption (delete proves a part by its ETag, nothing else)', () => {
    const stored = JSON.parse(Buffer.from(gunzipSync(serializeMonthIndex(base()))).toString());
    const { etag: _e, ...noEtag } = stored.parts[0];
    const bad = gzipSync(`${JSON.stringify({ ...stored, parts: [noEtag] })}\n`);
    expect(() => parseMonthIndex(bad, key)).toThrow(/needs its ETag/);
  });

  it('markRearchive marks the latest undeleted entry once, and round-trips; markDeleted of the re-archive closes it', () => {
    const marked = markRearchive(base(), [{ jobId: 'j1', part: e1.part }], 't2');
    expect(marked?.jobs.j1?.[0]?.rearchive).toBe('t2');
    expect(marked && markRearchive(marked, [{ jobId: 'j1', part: e1.part }], 't3')).toBeNull();
    const back = parseMonthIndex(serializeMonthIndex(marked as MonthIndex), key);
    expect(back.jobs.j1?.[0]?.rearchive).toBe('t2');
    const p2 = {
      ...pIdx('def'),
      name: 'part-20260202T000000Z-bbbbbbbb.jsonl.gz',
      key: 'job-details-cold/shop-a/2026-01/part-20260202T000000Z-bbbbbbbb.jsonl.gz',
    };
    const again = commitPart(back, p2, { j1: { ...e1, part: p2.name } }, 't4');
    const done = markDeleted(again, [{ jobId: 'j1', part: p2.name }], 't5', 'r2');
    expect(done.jobs.j1?.map((e) => [e.deleted_at, e.sources.length])).toEqual([
      ['t5', 0],
      ['t5', 0],
    ]);
  });
});

describe('index@5: a part names its filters member (the filters lie in the part, not the index)', () => {
  const withFilters = (jobs: number, filtersBytes: number): MonthIndex => {
    const entries: Record<string, IndexedJob> = {};
    for (let i = 0; i < jobs; i++)
      entries[`job-${String(i).padStart(5, '0')}`] = entry(P1, { offset: i * 10, length: 10 });
    const size = jobs * 10 + filtersBytes;
    const one = commitPart(
      emptyMonthIndex('s', '2026-01', 't0'),
      { ...part(P1), size, filters: { offset: jobs * 10, length: filtersBytes } },
      entries,
      't1',
    );
    // A second part whose blocks list no document: no filters member.
    return commitPart(one, { ...part(P2), size: 10 }, { other: entry(P2, { offset: 0, length: 10 }) }, 't2');
  };

  it.each([
    ['one member', 10],
    ['blocked', 4000],
  ])('%s: filters_bytes round-trips; the index holds no filter byte', (_, n) => {
    const idx = withFilters(n, 1234);
    const bytes = serializeMonthIndex(idx);
    const back = parseMonthIndex(bytes, 'k');
    expect(back.format).toBe(INDEX_FORMAT);
    expect(back.parts[0]?.filters).toEqual({ offset: n * 10, length: 1234 });
    expect(back.parts[1]?.filters).toBeUndefined();
    expect(Object.keys(back.jobs)).toHaveLength(n + 1);
    const text = gunzipSync(bytes).toString();
    expect(text).toContain('"filters_bytes":1234');
    expect(text).not.toContain('"docs');
    // The header alone names it (what a search reads before its ranged GET of the member).
    const head = gzipMemberLength(bytes);
    if (!('length' in head)) throw new Error('no header member');
    const { header } = parseIndexHeader(bytes.subarray(0, head.length), 'k');
    expect(checkIndex(mergeBlocks(header, []), 'k').parts[0]?.filters).toEqual({
      offset: n * 10,
      length: 1234,
    });
    // Rewritten (a later commit): it stays.
    const again = parseMonthIndex(
      serializeMonthIndex(markDeleted(back, [{ jobId: 'other', part: P2 }], 't3')),
      'k',
    );
    expect(again.parts[0]?.filters).toEqual({ offset: n * 10, length: 1234 });
  });

  it('filters_bytes outside the part, or blocks running into the member, are corruption', () => {
    const stored = JSON.parse(gunzipSync(serializeMonthIndex(withFilters(10, 50))).toString());
    const bad = (patch: Record<string, unknown>) => ({
      ...stored,
      parts: [{ ...stored.parts[0], ...patch }, stored.parts[1]],
    });
    for (const patch of [{ filters_bytes: 0 }, { filters_bytes: 150 }, { block_bytes: [120] }])
      expect(() => parseMonthIndex(Buffer.from(JSON.stringify(bad(patch))), 'k')).toThrow(CorruptObjectError);
  });
});

/** The index with its settled parts' job filters left out (as the writer does for a header too large). */
const withoutJobFilters = (index: MonthIndex): MonthIndex => ({
  ...index,
  parts: index.parts.map((p) => {
    if (!p.settled) return p;
    const { job_filter: _f, ...settled } = p.settled;
    return { ...p, settled };
  }),
});

describe('block directory of a settled part (a lookup finds the one record block from the header)', () => {
  const month = '2026-01';
  const header = (index: MonthIndex) => {
    const bytes = serializeMonthIndex(index);
    const head = gzipMemberLength(bytes);
    if (!('length' in head)) throw new Error('no header');
    return parseIndexHeader(bytes.subarray(0, head.length), 'k').header as {
      parts: Array<Record<string, unknown>>;
    };
  };
  /** A settled part of three blocks (100 bytes each) holding the given ids, block by block. */
  const settled = (blocks: string[][], over: Partial<IndexedJob> = {}) => {
    const jobs: Record<string, IndexedJob> = {};
    blocks.forEach((ids, b) => {
      for (const id of ids) jobs[id] = entry(P1, { offset: b * 100, length: 100, ...over });
    });
    const p = { ...part(P1), size: 300, job_count: Object.keys(jobs).length };
    return markDeleted(
      commitPart(emptyMonthIndex('s', month, 't0'), p, jobs, 't'),
      Object.keys(jobs).map((jobId) => ({ jobId, part: P1 })),
      'd',
    );
  };
  const BLOCKS = [
    ['abc1', 'abd2'],
    ['abe1', 'abzz'],
    ['ac00', 'ac01'],
  ];

  it('stores the shortest separator of each block and the last id; settledCandidates names the one block', () => {
    const h = header(settled(BLOCKS));
    expect(h.parts[0]).toMatchObject({ dir: ['abc1', 'abe', 'ac'], last: 'ac01' });
    // The directory alone (no job filter): every id in range has its one block.
    const index = withoutJobFilters(settlePart(settled(BLOCKS), P1));
    const probe = (id: string) => settledCandidates(index, id).map((p) => [p.block, p.range]);
    expect(probe('abd2')).toEqual([[0, { offset: 0, length: 100 }]]);
    expect(probe('abe')).toEqual([[1, { offset: 100, length: 100 }]]);
    expect(probe('abzzz')).toEqual([[1, { offset: 100, length: 100 }]]);
    expect(probe('ac00')).toEqual([[2, { offset: 200, length: 100 }]]);
    // Outside the part's id range: no block to read, not archived in this part.
    expect(probe('abc0')).toEqual([]);
    expect(probe('ac02')).toEqual([]);
  });

  it('no directory unless settled: sources kept, undeleted, a record without entry, unsorted blocks, a shared part', () => {
    const index = settled(BLOCKS);
    const noDir = (i: MonthIndex) => expect(header(i).parts[0]?.dir).toBeUndefined();
    noDir(
      commitPart(
        emptyMonthIndex('s', month, 't0'),
        { ...part(P1), size: 300, job_count: 1 },
        { a: entry(P1) },
        't',
      ),
    );
    noDir({
      ...index,
      jobs: {
        ...index.jobs,
        abc1: [
          entry(P1, { offset: 0, length: 100, deleted_at: 'd', sources: [{ key: 'k', size: 1, etag: 'e' }] }),
        ],
      },
    });
    noDir({ ...index, parts: [{ ...(index.parts[0] as IndexedPart), job_count: 7 }] });
    noDir(settled([['b1'], ['a1'], ['c1']]));
    noDir({ ...index, parts: [{ ...(index.parts[0] as IndexedPart), shared: true }] });
    // A part that cannot settle keeps its entries: no candidate block, its entries answer.
    const unsorted = settled([['b1'], ['a1'], ['c1']]);
    expect(settlePart(unsorted, P1)).toBe(unsorted);
    expect(settledCandidates(unsorted, 'a1')).toEqual([]);
  });

  it('settledEntry: the record in its block is the entry; a block without the job is none; an id outside the block is damage', () => {
    const index = settlePart(settled(BLOCKS), P1);
    const [p] = settledCandidates(index, 'abe1');
    if (!p) throw new Error('no candidate');
    const rec = (id: string, pd: string | null = null) => ({
      type: 'job',
      job_id: id,
      job: { completed_at: '2026-01-10T00:00:00.000Z' },
      platform_data_ref: pd,
    });
    const common = {
      part: P1,
      offset: 100,
      length: 100,
      completed_at: '2026-01-10T00:00:00.000Z',
      committed_at: 't',
      sources: [],
      deleted_at: 'd',
    };
    expect(settledEntry(p, [rec('abe1', '1'), rec('abzz')], 'abe1', 'k')).toEqual({
      ...common,
      platform_data: { offset: 100, length: 100 },
    });
    expect(settledEntry(p, [rec('abe1'), rec('abzz')], 'abzz', 'k')).toEqual({
      ...common,
      platform_data: null,
    });
    expect(settledEntry(p, [rec('abzz')], 'abe1', 'k')).toBeNull();
    expect(() => settledEntry(p, [rec('abe1'), rec('ac00')], 'abe1', 'k')).toThrow(
      /block directory of part .*block 1 holds job ac00, outside its range/,
    );
  });

  it('a directory that does not ascend, has one id too few, or ends above its last id is damage', () => {
    const h = header(settled(BLOCKS));
    const broken = (edit: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ ...h, jobs: {}, parts: [{ ...h.parts[0], ...edit }] }));
    for (const edit of [
      { dir: ['abc1', 'ac', 'abe'] },
      { dir: ['abc1', 'abe'] },
      { last: 'ab' },
      { dir: 'abc1' },
    ])
      expect(() => parseMonthIndex(broken(edit), 'k')).toThrow(CorruptObjectError);
    // An unsettled part meeting the condition keeps its entries, which stay the authority.
    expect(parseMonthIndex(serializeMonthIndex(settled(BLOCKS)), 'k').parts[0]?.settled).toBeUndefined();
  });
});

describe('block directory: a job line longer than a block', () => {
  it('a block holding only platform data is null in dir; the job block after it names it in dir_pd; probesOf skips the null', () => {
    const jobs: Record<string, IndexedJob> = {
      a1: entry(P1, { offset: 0, length: 100 }),
      // b1's line is a block of its own (200), its platform data alone in the block before (100).
      b1: entry(P1, { offset: 200, length: 100, platform_data: { offset: 100, length: 100 } }),
      c1: entry(P1, { offset: 300, length: 100 }),
    };
    const p = { ...part(P1), size: 400, job_count: 3 };
    const index = markDeleted(
      commitPart(emptyMonthIndex('s', '2026-01', 't0'), p, jobs, 't'),
      Object.keys(jobs).map((jobId) => ({ jobId, part: P1 })),
      'd',
    );
    const bytes = serializeMonthIndex(index);
    const head = gzipMemberLength(bytes);
    if (!('length' in head)) throw new Error('no header');
    const { header } = parseIndexHeader(bytes.subarray(0, head.length), 'k');
    expect((header.parts as unknown[])[0]).toMatchObject({
      dir: ['a1', null, 'b', 'c'],
      last: 'c1',
      dir_pd: [[2, 1]],
    });
    const [probe, ...more] = settledCandidates(settlePart(index, P1), 'b1');
    expect(more).toEqual([]);
    expect(probe).toEqual(
      expect.objectContaining({
        block: 2,
        range: { offset: 200, length: 100 },
        pdBlock: 1,
        pdRange: { offset: 100, length: 100 },
        below: 'c',
      }),
    );
    if (!probe) throw new Error('no probe');
    expect(
      settledEntry(
        probe,
        [
          {
            type: 'job',
            job_id: 'b1',
            job: { completed_at: '2026-01-10T00:00:00.000Z' },
            platform_data_ref: '1',
          },
        ],
        'b1',
        'k',
      ),
    ).toMatchObject({ offset: 200, length: 100, platform_data: { offset: 100, length: 100 } });
    // Two jobs of one block with their platform data in different blocks: no directory.
    const split = {
      ...index,
      jobs: {
        ...index.jobs,
        c1: [
          {
            ...entry(P1, { offset: 200, length: 100, deleted_at: 'd' }),
            platform_data: { offset: 0, length: 100 },
          },
        ],
      },
    };
    expect(
      (
        parseIndexHeader(
          serializeMonthIndex(split).subarray(
            0,
            (gzipMemberLength(serializeMonthIndex(split)) as { length: number }).length,
          ),
          'k',
        ).header.parts as Array<Record<string, unknown>>
      )[0]?.dir,
    ).toBeUndefined();
  });
});

describe('settled parts: the summary on the part, no entries in the index', () => {
  const month = '2026-01';
  const KEY = 'job-details-index/s/2026-01/index.json';
  const BLOCKS = [
    ['abc1', 'abd2'],
    ['abe1', 'abzz'],
    ['ac00', 'ac01'],
  ];
  /** P1: three blocks of 100 bytes holding BLOCKS, every entry deleted by run d1 at 'd'. */
  const deleted = (extra: Record<string, IndexedJob> = {}) => {
    const jobs: Record<string, IndexedJob> = {};
    BLOCKS.forEach((ids, b) => {
      for (const id of ids) jobs[id] = entry(P1, { offset: b * 100, length: 100 });
    });
    const p = { ...part(P1), size: 300, job_count: Object.keys(jobs).length };
    const one = commitPart(emptyMonthIndex('s', month, 't0'), p, jobs, 't');
    const two =
      Object.keys(extra).length > 0
        ? commitPart(one, { ...part(P2), job_count: Object.keys(extra).length }, extra, 't2')
        : one;
    return markDeleted(
      two,
      Object.keys(jobs).map((jobId) => ({ jobId, part: P1 })),
      'd',
      'd1',
    );
  };
  const roundTrip = (i: MonthIndex) => parseMonthIndex(serializeMonthIndex(i), KEY);

  it('settlePart moves the entries into the summary; a month with no entries reads back the same', () => {
    const index = settlePart(deleted(), P1);
    expect(index.jobs).toEqual({});
    const summary: SettledPart | undefined = index.parts[0]?.settled;
    expect(summary).toEqual({
      dir: ['abc1', 'abe', 'ac'],
      last: 'ac01',
      block_bytes: [100, 100, 100],
      deleted_at: 'd',
      deleted_by: 'd1',
      job_filter: { k: 7, bytes: expect.any(Uint8Array) },
    });
    const back = roundTrip(index);
    expect(back.jobs).toEqual({});
    expect(back.parts[0]?.settled).toEqual(index.parts[0]?.settled);
    expect(back.parts[0]?.key).toBe(index.parts[0]?.key);
    // Written again, the same bytes: nothing is lost between the model and the stored form.
    expect(serializeMonthIndex(back)).toEqual(serializeMonthIndex(index));
    // The stored part is the part with its directory, as a lookup's header reads it (no entries).
    const stored = JSON.parse(gunzipSync(serializeMonthIndex(index)).toString());
    expect(stored.jobs).toEqual({});
    expect(stored.parts[0]).toMatchObject({
      dir: ['abc1', 'abe', 'ac'],
      last: 'ac01',
      deleted_at: 'd',
      deleted_by: 'd1',
    });
    expect(settledCandidates(back, 'abzz').map((p) => p.block)).toEqual([1]);
  });

  it('a part that does not meet the condition stays unsettled (the same index back)', () => {
    const undeleted = commitPart(
      emptyMonthIndex('s', month, 't0'),
      { ...part(P1), job_count: 1 },
      { a: entry(P1) },
      't',
    );
    expect(settlePart(undeleted, P1)).toBe(undeleted);
    const missing = deleted();
    const short = { ...missing, parts: [{ ...(missing.parts[0] as IndexedPart), job_count: 7 }] };
    expect(settlePart(short, P1)).toBe(short);
    expect(settlePart(missing, 'part-none.jsonl.gz')).toBe(missing);
    const once = settlePart(missing, P1);
    expect(settlePart(once, P1)).toBe(once);
  });

  it('a mixed month: a settled part and a part with entries, one job in both; candidates and counts', () => {
    const index = settlePart(
      deleted({ abe1: entry(P2, { completed_at: '2026-01-20T00:00:00Z' }), zz: entry(P2) }),
      P1,
    );
    expect(index.parts.map((p) => p.settled !== undefined)).toEqual([true, false]);
    const back = roundTrip(index);
    expect(back.parts.map((p) => p.settled !== undefined)).toEqual([true, false]);
    expect(Object.keys(back.jobs).sort()).toEqual(['abe1', 'zz']);
    expect(back.jobs.abe1?.map((e) => [e.part, e.completed_at])).toEqual([[P2, '2026-01-20T00:00:00Z']]);
    const candidates: SettledCandidate[] = settledCandidates(back, 'abe1');
    expect(candidates).toEqual([
      {
        part: back.parts[0],
        block: 1,
        range: { offset: 100, length: 100 },
        from: 'abe',
        below: 'ac',
      },
    ]);
    // Outside every settled part's id range: no candidate (the entries answer for the other part).
    expect(settledCandidates(back, 'zz')).toEqual([]);
    expect(settledCandidates(back, 'a')).toEqual([]);
    expect(entriesOf(back, P1)).toBe(6);
    expect(entriesOf(back, P2)).toBe(2);
  });

  it('a mixed month whose entries span several index blocks reads back whole', () => {
    const many: Record<string, IndexedJob> = {};
    for (let i = 0; i < 3000; i++)
      many[`z${String(i).padStart(5, '0')}`] = entry(P2, { offset: 0, length: 100 });
    const index = settlePart(deleted(many), P1);
    const bytes = serializeMonthIndex(index);
    const head = gzipMemberLength(bytes);
    if (!('length' in head)) throw new Error('no header');
    expect(head.length).toBeLessThan(bytes.length); // blocked
    const back = parseMonthIndex(bytes, KEY);
    expect(Object.keys(back.jobs)).toHaveLength(3000);
    expect(back.parts[0]?.settled?.dir).toEqual(['abc1', 'abe', 'ac']);
    expect(back.parts[1]?.settled).toBeUndefined();
  });

  it('a settled part with entries pointing at it is a writer bug, refused', () => {
    const index = settlePart(deleted(), P1);
    expect(() =>
      serializeMonthIndex({ ...index, jobs: { x: [entry(P1, { offset: 0, length: 100 })] } }),
    ).toThrow(/settled, yet 1 entries/);
  });

  it('an unsettled part that meets the condition keeps its entries and reads back unsettled', () => {
    const back = roundTrip(deleted());
    expect(back.parts[0]?.settled).toBeUndefined();
    expect(Object.keys(back.jobs)).toHaveLength(6);
  });

  it('applyCommit: a settled part committed again counts its job_count; a job of a settled part gets a new entry', () => {
    const index = settlePart(deleted(), P1);
    const p1 = index.parts[0] as IndexedPart;
    expect(applyCommit(index, { part: p1, jobs: {} }, 't3')).toEqual({ index: null, added: 6 });
    const { index: next, added } = applyCommit(
      index,
      { part: { ...part(P2), job_count: 1 }, jobs: { abe1: entry(P2) } },
      't3',
    );
    expect(added).toBe(1);
    expect(next?.jobs.abe1?.map((e) => e.part)).toEqual([P2]);
  });

  it('applyCommit: a job whose settled record (read by the caller) holds the same completion gets no second entry; another completion does', () => {
    const index = settlePart(deleted(), P1);
    const done = entry(P2).completed_at;
    const commit = (completed: string) =>
      applyCommit(
        index,
        { part: { ...part(P2), job_count: 1 }, jobs: { abe1: entry(P2) } },
        't3',
        undefined,
        new Map([['abe1', { part: P1, completed_at: completed }]]),
      );
    expect(commit(done)).toMatchObject({ added: 0 });
    expect(commit(done).index?.jobs).toEqual({});
    expect(commit('2026-01-02T00:00:00.000Z')).toMatchObject({ added: 1 });
  });

  it('a damaged summary is a CorruptObjectError naming the index and the part', () => {
    const stored = JSON.parse(gunzipSync(serializeMonthIndex(settlePart(deleted(), P1))).toString());
    const broken = (edit: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ ...stored, parts: [{ ...stored.parts[0], ...edit }] }));
    for (const edit of [
      { dir: ['abc1', 'ac', 'abe'] }, // not ascending
      { dir: ['abc1', 'abe'] }, // one id too few
      { dir: ['abc1', 'abe', 'ac', 'ad'] }, // one too many
      { dir: [null, null, null] }, // no id at all
      { dir: ['abc1', 7, 'ac'] },
      { dir: 'abc1' },
      { last: 'ab' }, // below the last block
      { last: 7 },
      { dir_pd: [[1, 3]] }, // a block out of range
      { dir_pd: [[1]] },
      { dir_pd: 'x' },
      { deleted_at: null }, // settled yet undeleted
      { job_count: 0 },
      { shared: true },
      { block_bytes: [100, 100, 0] },
      // Blocks (and directory) that stop before the part's last block: its jobs would go unread.
      { block_bytes: [100, 100], dir: ['abc1', 'abe'] },
      { block_bytes: [100, 100, 90] },
    ]) {
      expect(() => parseMonthIndex(broken(edit), KEY)).toThrow(CorruptObjectError);
      expect(() => parseMonthIndex(broken(edit), KEY)).toThrow(/index\.json/);
      expect(() => parseMonthIndex(broken(edit), KEY)).toThrow(new RegExp(P1.replace(/\./g, '\\.')));
    }
  });
});

describe('a settled part’s job filter (jf: a Golomb-coded set of its job ids)', () => {
  const KEY = 'job-details-index/s/2026-01/index.json';
  /** One settled part of `n` jobs `j000000`…, `perBlock` a block of 100 bytes. */
  const settledOf = (n: number, perBlock = 4) => {
    const jobs: Record<string, IndexedJob> = {};
    for (let i = 0; i < n; i++) {
      const b = Math.floor(i / perBlock);
      jobs[`j${String(i).padStart(6, '0')}`] = entry(P1, { offset: b * 100, length: 100, deleted_at: 'd' });
    }
    const blocks = Math.ceil(n / perBlock);
    const p = { ...part(P1), size: blocks * 100, job_count: n };
    return settlePart(commitPart(emptyMonthIndex('s', '2026-01', 't0'), p, jobs, 't'), P1);
  };
  /** Ids inside the part's range that are not its jobs. */
  const absentInRange = (n: number) => Array.from({ length: n }, (_, i) => `j000001-${i}`);

  it('an absent id its filter does not match has no candidate block; a false match (1 in 128) has one; every job matches', () => {
    const index = settledOf(40);
    const back = parseMonthIndex(serializeMonthIndex(index), KEY);
    expect(back.parts[0]?.settled?.job_filter).toEqual(index.parts[0]?.settled?.job_filter);
    for (let i = 0; i < 40; i++)
      expect(settledCandidates(back, `j${String(i).padStart(6, '0')}`)).toHaveLength(1);
    const absent = absentInRange(2000);
    const matched = absent.filter((id) => settledCandidates(back, id).length > 0);
    // Without the filter every one of them has its block; with it, about 1/128 do.
    expect(absent.every((id) => settledCandidates(withoutJobFilters(back), id).length === 1)).toBe(true);
    expect(matched.length).toBeGreaterThan(0);
    expect(matched.length).toBeLessThan((2000 / 128) * 2.5);
    // Stored: base64, no jk at k = 7.
    const stored = JSON.parse(gunzipSync(serializeMonthIndex(index)).toString()).parts[0];
    expect(typeof stored.jf).toBe('string');
    expect(stored).not.toHaveProperty('jk');
  });

  it('a damaged job filter is a CorruptObjectError naming the index and the part', () => {
    const stored = JSON.parse(gunzipSync(serializeMonthIndex(settledOf(40))).toString());
    const jf = stored.parts[0].jf as string;
    const bytes = Buffer.from(jf, 'base64');
    const broken = (edit: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ ...stored, parts: [{ ...stored.parts[0], ...edit }] }));
    for (const edit of [
      { jf: 'not base64!' },
      { jf: '' },
      { jf: 7 },
      { jf: bytes.subarray(0, bytes.length - 2).toString('base64') }, // cut short
      { jf: Buffer.concat([bytes, Buffer.from([0, 0])]).toString('base64') }, // bytes past its values
      { jk: 0 },
      { jk: 17 },
      { jk: '7' },
      { jk: 6 }, // read with another k, the bytes do not hold 40 values
      { job_count: 41 },
    ]) {
      expect(() => parseMonthIndex(broken(edit), KEY)).toThrow(CorruptObjectError);
      expect(() => parseMonthIndex(broken(edit), KEY)).toThrow(/index\.json.*part-20260201T000000Z-aaaaaaaa/);
    }
    // A job filter without a block directory: damage too.
    const { dir: _d, last: _l, ...noDir } = stored.parts[0];
    expect(() => parseMonthIndex(Buffer.from(JSON.stringify({ ...stored, parts: [noDir] })), KEY)).toThrow(
      /job filter and no block directory/,
    );
  });

  it('a damaged range (last lowered, first dir id raised) does not hide the edge blocks: the filter names them, the record read refuses', () => {
    const stored = JSON.parse(gunzipSync(serializeMonthIndex(settledOf(40))).toString());
    const part0 = stored.parts[0];
    const dir = part0.dir as string[];
    expect(part0.last).toBe('j000039');
    const damaged = (edit: Record<string, unknown>) =>
      parseMonthIndex(Buffer.from(JSON.stringify({ ...stored, parts: [{ ...part0, ...edit }] })), KEY);
    const records = (ids: string[]) =>
      ids.map((job_id) => ({ type: 'job', job_id, job: { completed_at: '2026-01-10T00:00:00.000Z' } }));
    // `last` lowered to the last block's first id: j000037…39 lie above the stated range.
    const lowLast = damaged({ last: dir[9] });
    const [high, ...moreHigh] = settledCandidates(lowLast, 'j000038');
    expect(moreHigh).toEqual([]);
    expect(high?.block).toBe(9);
    if (!high) throw new Error('no candidate');
    const lastBlock = records(['j000036', 'j000037', 'j000038', 'j000039']);
    expect(() => settledEntry(high, lastBlock, 'j000038', KEY)).toThrow(CorruptObjectError);
    expect(() => settledEntry(high, lastBlock, 'j000038', KEY)).toThrow(
      /index\.json.*part-20260201T000000Z-aaaaaaaa.*outside its range/,
    );
    // The first separator raised above j000000 (still below the second block's).
    const highFirst = damaged({ dir: ['j000002', ...dir.slice(1)] });
    const [low, ...moreLow] = settledCandidates(highFirst, 'j000000');
    expect(moreLow).toEqual([]);
    expect(low?.block).toBe(0);
    if (!low) throw new Error('no candidate');
    expect(() =>
      settledEntry(low, records(['j000000', 'j000001', 'j000002', 'j000003']), 'j000000', KEY),
    ).toThrow(/part-20260201T000000Z-aaaaaaaa.*outside its range/);
  });

  it('an absent id outside the range: no block when the filter rejects it, the edge block on a false match, none without a filter', () => {
    const back = parseMonthIndex(serializeMonthIndex(settledOf(40)), KEY);
    const above = Array.from({ length: 2000 }, (_, i) => `k${i}`);
    const below = Array.from({ length: 2000 }, (_, i) => `a${i}`);
    const blocks = (id: string) => settledCandidates(back, id).map((c) => c.block);
    const rejected = above.filter((id) => blocks(id).length === 0);
    // Most are rejected by the filter (no read); a false match (~1 in 128) costs one edge-block read.
    expect(rejected.length).toBeGreaterThan(2000 - (2000 / 128) * 2.5);
    expect(above.filter((id) => blocks(id).length > 0).every((id) => blocks(id)[0] === 9)).toBe(true);
    expect(above.some((id) => blocks(id).length > 0)).toBe(true);
    expect(below.filter((id) => blocks(id).length > 0).every((id) => blocks(id)[0] === 0)).toBe(true);
    expect(below.some((id) => blocks(id).length > 0)).toBe(true);
    expect(blocks(rejected[0] as string)).toEqual([]);
    // Without a filter the range is trusted: outside it, no block.
    expect(
      [...above, ...below].every((id) => settledCandidates(withoutJobFilters(back), id).length === 0),
    ).toBe(true);
  });

  it('a header that would pass 32 KB gets its filters thinned (k lowered, then left out), never a false "no"', () => {
    const n = 40_000;
    const index = settledOf(n, 30);
    const bytes = serializeMonthIndex(index);
    const head = gzipMemberLength(bytes);
    if (!('length' in head)) throw new Error('no header');
    expect(head.length).toBeLessThanOrEqual(32 * 1024);
    const back = parseMonthIndex(bytes, KEY);
    const f = back.parts[0]?.settled?.job_filter;
    // 40,000 jobs at 7 bits + ~1.6 take ~43 KB: thinned to a lower k, still a filter.
    expect(f?.k).toBeLessThan(7);
    expect(f?.k).toBeGreaterThanOrEqual(3);
    const stored = JSON.parse(gunzipSync(bytes.subarray(0, head.length)).toString()).parts[0];
    expect(stored.jk).toBe(f?.k);
    for (let i = 0; i < n; i += 97)
      expect(settledCandidates(back, `j${String(i).padStart(6, '0')}`)).toHaveLength(1);
    // Past what even k = 3 fits: no filter, the directory alone.
    const huge = serializeMonthIndex(settledOf(100_000, 30));
    const hugeHead = gzipMemberLength(huge);
    if (!('length' in hugeHead)) throw new Error('no header');
    const noFilter = parseMonthIndex(huge, KEY).parts[0]?.settled;
    expect(noFilter?.job_filter).toBeUndefined();
    expect(noFilter?.dir.length).toBe(3334);
  });
});
