import { gunzipSync } from 'node:zlib';
import {
  blocksOf,
  candidateBlocks,
  commitPart,
  emptyMonthIndex,
  flattenPart,
  type IndexedJob,
  type IndexedPart,
  isFiltersMember,
  type MonthIndex,
  parseMonthIndex,
  parseSharedIndex,
  type SharedIndex,
  type SharedPart,
  serializeMonthIndex,
  serializeSharedIndex,
  settledCandidates,
  settlePart,
  sharedPartKey,
} from '../../shared/archive/format';
import { decodeFlushBody, encodeFlushBody } from '../../shared/details/codec';
import { mergeJobDetails } from '../../shared/details/merge';
import { parseJobDetailsPayload, validateJobDetailsPayload } from '../../shared/details/payload';
import { earlyDeletion } from '../../shared/redact/redact';
import { listsDocument, redactDetails } from '../../shared/redact/redact-details';
import { partBlocks, redactPart } from '../../shared/redact/redact-part';
import { redactSharedSegment, switchRedactedSharedPart } from '../../shared/redact/redact-shared';
import { switchPart } from '../../shared/redact/switch-part';
import { buildPart, details, indexEntries } from '../support/archive-fixture';

const AT = '2026-11-25T10:00:00.000Z';
const DOC = 'gid://shopify/Customer/42';

describe('redactDetails', () => {
  const d = details({
    chunk_ids: ['p0', 'p1'],
    failed: { timeout: ['a', DOC, 'b'], other: [DOC] },
    skipped: { unchanged: ['c'] },
    conflict: { version: [{ doc_id: DOC, existing_version: 2, message: `about ${DOC}` }, { doc_id: 'e' }] },
  });

  test('removes every listing of the document, keeps reasons and the rest, notes when and how many', () => {
    const r = redactDetails(d, DOC, AT);
    expect(r.removed).toBe(3);
    expect(r.details).toEqual({
      chunk_ids: ['p0', 'p1'],
      failed: { timeout: ['a', 'b'], other: [] },
      skipped: { unchanged: ['c'] },
      conflict: { version: [{ doc_id: 'e' }] },
      redacted: [{ at: AT, listings: 3 }],
    });
    expect(JSON.stringify(r.details)).not.toContain(DOC);
    expect(listsDocument(d, DOC)).toBe(true);
    expect(listsDocument(r.details, DOC)).toBe(false);
  });

  test('a document not listed changes nothing (idempotent)', () => {
    const once = redactDetails(d, DOC, AT).details;
    const twice = redactDetails(once, DOC, '2026-11-26T00:00:00.000Z');
    expect(twice.removed).toBe(0);
    expect(twice.details).toBe(once);
  });

  test('the note survives the wire: encode/decode, parse, validate and merge keep it', () => {
    const r = redactDetails(d, DOC, AT).details;
    const back = decodeFlushBody(encodeFlushBody(r), 'k');
    expect(back).toEqual(r);
    expect(validateJobDetailsPayload(r)).toEqual(r);
    const other = {
      ...details({ chunk_ids: ['p2'] }),
      redacted: [{ at: '2026-11-20T00:00:00.000Z', listings: 1 }],
    };
    expect(mergeJobDetails(r, other).redacted).toEqual([
      { at: '2026-11-20T00:00:00.000Z', listings: 1 },
      { at: AT, listings: 3 },
    ]);
    // The same note from two objects of one job is one note (merging is idempotent).
    expect(mergeJobDetails(r, r).redacted).toEqual([{ at: AT, listings: 3 }]);
    // Unredacted details carry no field at all: their bytes are what they always were.
    expect('redacted' in mergeJobDetails(d, d)).toBe(false);
    expect(() => parseJobDetailsPayload({ ...r, redacted: [{ at: 1 }] }, 'k')).toThrow(/redacted\[0\]/);
  });
});

describe('redactPart and switchPart', () => {
  const bigList = (tag: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${tag}-${i}-${'x'.repeat(40)}`);
  const build = () =>
    buildPart({
      shopId: 'acme',
      month: '2026-01',
      jobs: [
        // Big enough for several blocks: the document sits in the second job's block only.
        {
          jobId: 'j1',
          details: details({ chunk_ids: ['p0'], failed: { r: bigList('a', 3000) } }),
          platformData: { x: 1 },
        },
        {
          jobId: 'j2',
          details: details({ chunk_ids: ['p0'], failed: { r: [DOC, 'keep'] } }),
          platformData: { x: 1 },
        },
        { jobId: 'j3', details: details({ chunk_ids: ['p0'], failed: { r: bigList('c', 3000) } }) },
      ],
    });

  test('only the blocks holding the document change; filters lose it; records and index read back', async () => {
    const part = await build();
    // The blocks: the part's last member is its filters (redaction rebuilds it, redact.ts).
    const all = partBlocks(part.bytes, part.partKey);
    expect(isFiltersMember(all[all.length - 1] as Buffer)).toBe(true);
    const members = all.slice(0, -1);
    expect(members.length).toBeGreaterThan(2);
    const name = 'part-20261125T100000Z-aaaaaaaa.jsonl.gz';
    const r = redactPart(members, {
      shopId: 'acme',
      docId: DOC,
      at: AT,
      where: part.partKey,
    });
    expect(r.removed).toBe(1);
    expect([...r.jobs]).toEqual([['j2', { chunk_ids: 1, failed: 1, skipped: 0, conflict: 0 }]]);
    const changed = members.map((m, i) => !m.equals(r.members[i] as Buffer));
    expect(changed.filter(Boolean)).toHaveLength(1);
    const body = Buffer.concat(r.members);
    expect(gunzipSync(body).toString('utf8')).not.toContain(DOC);
    // Filters (one per block that lists a document) lose it; the changed block's still has the rest.
    expect(candidateBlocks(r.filters, DOC, 'k')).toEqual([]);
    const keep = r.filters.blocks[candidateBlocks(r.filters, 'keep', 'k')[0] ?? -1];
    const changedAt = r.members.slice(0, changed.indexOf(true)).reduce((n, m) => n + m.length, 0);
    expect(keep?.offset).toBe(changedAt);
    // Every other line is byte for byte what it was.
    const lines = (b: Buffer) => gunzipSync(b).toString('utf8').split('\n');
    const before = lines(Buffer.concat(members));
    const after = lines(body);
    expect(after.filter((l, i) => l !== before[i])).toHaveLength(1);
    const flat = flattenPart(
      after.filter((l) => l).map((l) => JSON.parse(l) as unknown),
      { shopId: 'acme', month: '2026-01', part: name },
      name,
    );
    expect(flat.jobs.map((j) => [j.job_id, j.failed])).toEqual([
      ['j1', 3000],
      ['j2', 1],
      ['j3', 3000],
    ]);
    // The index switch: same blocks by number, new ranges; the serialized index parses.
    const { part: p, jobs } = indexEntries(part, AT);
    const index = commitPart(emptyMonthIndex('acme', '2026-01', AT), p, jobs, AT);
    const next = switchPart(
      index,
      {
        oldName: part.partName,
        oldMembers: members.map((m) => m.length),
        part: { name, key: `job-details-cold/acme/2026-01/${name}`, size: body.length + 99, etag: 'new' },
        newMembers: r.members.map((m) => m.length),
        filters: { offset: body.length, length: 99 },
      },
      AT,
    );
    expect(next).not.toBeNull();
    const back = parseMonthIndex(serializeMonthIndex(next as NonNullable<typeof next>), 'k');
    expect(back.parts.map((x) => [x.name, x.size, x.etag])).toEqual([[name, body.length + 99, 'new']]);
    // The new part's filters member (what redact.ts appends after the blocks) is what the index names.
    expect(back.parts[0]?.filters).toEqual({ offset: body.length, length: 99 });
    const j2 = back.jobs.j2?.[0];
    expect(r.jobs.get('j2')?.failed).toBe(1);
    const at = j2 ? body.subarray(j2.offset, j2.offset + j2.length) : Buffer.alloc(0);
    expect(gunzipSync(at).toString('utf8')).toContain('"job_id":"j2"');
    const pd = j2?.platform_data;
    expect(pd && gunzipSync(body.subarray(pd.offset, pd.offset + pd.length)).toString('utf8')).toContain(
      '"type":"platform_data"',
    );
    // Switched already: nothing more to switch.
    expect(
      switchPart(
        back,
        {
          oldName: part.partName,
          oldMembers: [],
          part: p,
          newMembers: [],
        },
        AT,
      ),
    ).toBeNull();
  });

  test('a settled part (no entries): the switch keeps its directory and gives each block its new length', async () => {
    const part = await build();
    const members = partBlocks(part.bytes, part.partKey).slice(0, -1);
    const r = redactPart(members, { shopId: 'acme', docId: DOC, at: AT, where: part.partKey });
    const body = Buffer.concat(r.members);
    const name = 'part-20261125T100000Z-bbbbbbbb.jsonl.gz';
    const { part: p, jobs } = indexEntries(part, AT);
    const deleted: typeof jobs = Object.fromEntries(
      Object.entries(jobs).map(([id, e]) => [id, { ...e, sources: [], deleted_at: AT, deleted_by: 'run' }]),
    );
    const settled = settlePart(commitPart(emptyMonthIndex('acme', '2026-01', AT), p, deleted, AT), p.name);
    expect(settled.jobs).toEqual({});
    expect(settled.parts[0]?.settled).toBeDefined();
    const next = switchPart(
      settled,
      {
        oldName: part.partName,
        oldMembers: members.map((m) => m.length),
        part: { name, key: `job-details-cold/acme/2026-01/${name}`, size: body.length + 99, etag: 'new' },
        newMembers: r.members.map((m) => m.length),
        filters: { offset: body.length, length: 99 },
      },
      AT,
    );
    const back = parseMonthIndex(serializeMonthIndex(next as NonNullable<typeof next>), 'k');
    expect(back.jobs).toEqual({});
    expect(back.parts[0]?.settled?.dir).toEqual(settled.parts[0]?.settled?.dir);
    // Every job's block, found by the directory alone, holds its record in the redacted part.
    for (const id of ['j1', 'j2', 'j3']) {
      const [c] = settledCandidates(back, id);
      expect(c?.part.name).toBe(name);
      const at = c ? body.subarray(c.range.offset, c.range.offset + c.range.length) : Buffer.alloc(0);
      expect(gunzipSync(at).toString('utf8')).toContain(`"job_id":"${id}"`);
    }
    expect(gunzipSync(body).toString('utf8')).not.toContain(DOC);
  });

  test('a part packing several shops (a segment per shop, each with its header): only the asked shop changes', async () => {
    const mine = await buildPart({
      shopId: 'acme',
      month: '2026-01',
      jobs: [{ jobId: 'j1', details: details({ chunk_ids: ['p0'], failed: { r: [DOC, 'k'] } }) }],
    });
    const theirs = await buildPart({
      shopId: 'other',
      month: '2026-01',
      jobs: [{ jobId: 'j1', details: details({ chunk_ids: ['p0'], failed: { r: [DOC] } }) }],
    });
    const shared = Buffer.concat([theirs.bytes, mine.bytes]);
    const r = redactPart(partBlocks(shared, 'k'), {
      shopId: 'acme',
      docId: DOC,
      at: AT,
      where: 'k',
    });
    expect(r.removed).toBe(1);
    const text = gunzipSync(Buffer.concat(r.members)).toString('utf8');
    expect(text.split(DOC)).toHaveLength(2); // the other shop's listing only
    expect(Buffer.concat(r.members).subarray(0, theirs.bytes.length).equals(theirs.bytes)).toBe(true);
  });

  test("another shop's records in the same part are left as they are", async () => {
    const part = await build();
    const r = redactPart(partBlocks(part.bytes, 'k'), {
      shopId: 'other',
      docId: DOC,
      at: AT,
      where: 'k',
    });
    expect(r.removed).toBe(0);
    expect(Buffer.concat(r.members).equals(part.bytes)).toBe(true);
  });
});

test('early deletion: Glacier classes bill their minimum days, Standard and old objects nothing', () => {
  const now = new Date('2026-11-25T00:00:00Z');
  const ago = (d: number) => new Date(now.getTime() - d * 86_400_000);
  expect(
    earlyDeletion('k', { StorageClass: 'GLACIER', LastModified: ago(30), ContentLength: 5 }, now),
  ).toEqual({
    key: 'k',
    storageClass: 'GLACIER',
    bytes: 5,
    ageDays: 30,
    minDays: 90,
    chargedDays: 60,
  });
  expect(earlyDeletion('k', { StorageClass: 'DEEP_ARCHIVE', LastModified: ago(100) }, now)?.chargedDays).toBe(
    80,
  );
  expect(earlyDeletion('k', { StorageClass: 'GLACIER_IR', LastModified: ago(10) }, now)?.chargedDays).toBe(
    80,
  );
  expect(earlyDeletion('k', { StorageClass: 'GLACIER_IR', LastModified: ago(91) }, now)).toBeNull();
  expect(earlyDeletion('k', { LastModified: ago(1) }, now)).toBeNull();
});

test("a shared part: only the asked shop's segment is redacted; the others are copied and their views moved", async () => {
  const month = '2026-01';
  const built = [];
  for (const shopId of ['a', 'acme', 'z'])
    built.push(
      await buildPart({
        shopId,
        month,
        jobs: [
          { jobId: 'j1', details: details({ chunk_ids: ['p0'], failed: { r: [DOC, `${shopId}-k`] } }) },
          { jobId: 'j2', details: details({ chunk_ids: ['p0'], failed: { r: [`${shopId}-m`] } }) },
        ],
      }),
    );
  const name = 'part-20260201T000000Z-aaaaaaaa.jsonl.gz';
  const newName = 'part-20261125T100000Z-bbbbbbbb.jsonl.gz';
  const bytes = Buffer.concat(built.map((b) => b.bytes));
  const segments: Record<string, readonly [number, number]> = {};
  const views = new Map<string, MonthIndex>();
  let base = 0;
  for (const b of built) {
    segments[b.shopId] = [base, b.bytes.length];
    const { part: p, jobs } = indexEntries(b, AT);
    const at = base;
    const shift = <T extends { offset: number }>(r: T): T => ({ ...r, offset: r.offset + at });
    const moved: Record<string, IndexedJob> = {};
    for (const [id, e] of Object.entries(jobs))
      moved[id] = { ...shift(e), part: name, platform_data: e.platform_data ? shift(e.platform_data) : null };
    const part: IndexedPart = {
      ...p,
      name,
      key: sharedPartKey(month, name),
      size: bytes.length,
      shared: true,
    };
    views.set(b.shopId, commitPart(emptyMonthIndex(b.shopId, month, AT), part, moved, AT));
    base += b.bytes.length;
  }
  const blocks = blocksOf(bytes, 'test').map((m) => m.length);
  const old: SharedPart = {
    name,
    size: bytes.length,
    etag: 'old',
    run_id: 'r',
    committed_at: AT,
    segments,
    blocks,
  };
  const index: SharedIndex = { month, updated_at: AT, parts: [old], views };
  const r = redactSharedSegment(bytes, old, { shopId: 'acme', docId: DOC, at: AT, newName, where: 'k' });
  if (!r) throw new Error('nothing redacted');
  expect(r.removed).toBe(1);
  const next = switchRedactedSharedPart(
    index,
    'acme',
    { ...old, ...r.part, etag: 'new' },
    { ...r.switch, key: sharedPartKey(month, newName) },
    AT,
  );
  if (!next) throw new Error('not switched');
  const back = parseSharedIndex(serializeSharedIndex(next), 'k');
  expect(back.parts.map((p) => [p.name, p.size, p.etag])).toEqual([[newName, r.bytes.length, 'new']]);
  const record = (b: Buffer, e: { offset: number; length: number }) =>
    gunzipSync(b.subarray(e.offset, e.offset + e.length)).toString('utf8');
  for (const shop of ['a', 'acme', 'z']) {
    const was = views.get(shop);
    const now = back.views.get(shop);
    expect(now?.parts.map((p) => [p.name, p.key, p.size])).toEqual([
      [newName, sharedPartKey(month, newName), r.bytes.length],
    ]);
    for (const id of ['j1', 'j2']) {
      const e0 = was?.jobs[id]?.[0];
      const e1 = now?.jobs[id]?.[0];
      if (!e0 || !e1) throw new Error(`no entry ${shop} ${id}`);
      expect(record(r.bytes, e1)).toContain(`"job_id":"${id}"`);
      const pd = e1.platform_data;
      if (pd) expect(record(r.bytes, pd)).toContain('"type":"platform_data"');
      if (shop === 'acme') continue;
      // Another shop: the same bytes, elsewhere.
      expect(r.bytes.subarray(e1.offset, e1.offset + e1.length)).toEqual(
        bytes.subarray(e0.offset, e0.offset + e0.length),
      );
    }
    if (shop === 'acme') {
      expect(record(r.bytes, now?.jobs.j1?.[0] ?? { offset: 0, length: 0 })).not.toContain(DOC);
    } else expect(record(r.bytes, now?.jobs.j1?.[0] ?? { offset: 0, length: 0 })).toContain(DOC);
  }
  // The first shop's bytes did not move; the last one's moved by what the redaction saved.
  expect(r.part.segments.a).toEqual(segments.a);
  expect(r.bytes.subarray(0, segments.a?.[1]).equals(built[0]?.bytes ?? Buffer.alloc(0))).toBe(true);
  const z = r.part.segments.z ?? [0, 0];
  expect(
    r.bytes.subarray(z[0], z[0] + z[1]).equals((built[2]?.bytes ?? Buffer.alloc(0)).subarray(0, z[1])),
  ).toBe(true);
  // Switched already (re-applied after a 412 that was another writer's own switch): nothing to do.
  expect(
    switchRedactedSharedPart(back, 'acme', { ...old, ...r.part, etag: 'new' }, { ...r.switch, key: 'x' }, AT),
  ).toBeNull();
  // Another shop's segment does not list the document: nothing to rewrite.
  expect(
    redactSharedSegment(bytes, old, { shopId: 'a', docId: 'gid://none', at: AT, newName, where: 'k' }),
  ).toBeNull();
});
