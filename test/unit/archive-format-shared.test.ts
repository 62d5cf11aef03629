import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import {
  blocksOf,
  commitPart,
  decodeBlock,
  emptyMonthIndex,
  type IndexedJob,
  type MonthIndex,
  parseSharedIndex,
  type SharedIndex,
  type SharedPart,
  serializeSharedIndex,
  sharedPartKey,
  sharedPartWithoutShop,
  switchSharedPart,
} from '../../shared/archive/format';
import { InvalidInputError } from '../../shared/errors';
import { buildPart, details } from '../support/archive-fixture';

/**
 * Shared parts as shared-index@1 wrote them (docs/archive-format.md, "Shared parts"; no `blocks`, still
 * read and rewritten — blocks cut across shops are archive-format-shared-blocks.test.ts): segments of
 * complete part@4 streams, one per shop; the shared index round-trips; removing a shop rewrites the part without re-encoding anyone
 * else's bytes and moves the other shops' entries exactly where their records now are.
 */
const MONTH = '2026-01';
const NAME = 'part-20260215T030000Z-aaaaaaaa.jsonl.gz';
const NEW = 'part-20260301T030000Z-bbbbbbbb.jsonl.gz';
const AT = '2026-02-15T03:00:00.000Z';

const shops = {
  'sa.myshopify.com': ['a1', 'a2'],
  'sb.myshopify.com': ['b1'],
  'sc.myshopify.com': ['c1', 'c2', 'c3'],
};

/** Three shops' segments one after the other, and the shared index a commit of them writes. */
const sharedFixture = async (): Promise<{ bytes: Buffer; index: SharedIndex }> => {
  const segments: Buffer[] = [];
  const views = new Map<string, MonthIndex>();
  const ranges: Record<string, [number, number]> = {};
  let at = 0;
  const built = [];
  for (const [shop, ids] of Object.entries(shops)) {
    const b = await buildPart({
      shopId: shop,
      month: MONTH,
      jobs: ids.map((jobId) => ({
        jobId,
        details: details({ chunk_ids: ['p0'], failed: { r: [`${jobId}-doc`] } }),
        platformData: { shop },
      })),
    });
    built.push({ shop, b, start: at });
    ranges[shop] = [at, b.bytes.length];
    segments.push(b.bytes);
    at += b.bytes.length;
  }
  const etag = 'e0';
  for (const { shop, b, start } of built) {
    const entries: Record<string, IndexedJob> = {};
    for (const [jobId, e] of Object.entries(b.pending.jobs)) {
      const pd = e.platform_data_ref ? b.pending.platform_data[e.platform_data_ref] : undefined;
      entries[jobId] = {
        part: NAME,
        offset: e.offset + start,
        length: e.length,
        completed_at: e.completed_at,
        committed_at: AT,
        platform_data: pd ? { offset: pd.offset + start, length: pd.length } : null,
        sources: [],
        deleted_at: null,
      };
    }
    const part = {
      name: NAME,
      key: sharedPartKey(MONTH, NAME),
      size: at,
      etag,
      run_id: 'r1',
      committed_at: AT,
      job_count: Object.keys(entries).length,
      bytes_in: 0,
      shared: true as const,
    };
    views.set(shop, commitPart(emptyMonthIndex(shop, MONTH, AT), part, entries, AT));
  }
  const blocks = blocksOf(Buffer.concat(segments), 'test').map((m) => m.length);
  const part: SharedPart = {
    name: NAME,
    size: at,
    etag,
    run_id: 'r1',
    committed_at: AT,
    segments: ranges,
    blocks,
  };
  return { bytes: Buffer.concat(segments), index: { month: MONTH, updated_at: AT, parts: [part], views } };
};

const recordAt = (bytes: Uint8Array, e: IndexedJob, shopId: string, jobId: string) =>
  decodeBlock(bytes.subarray(e.offset, e.offset + e.length), 'test', undefined, {
    want: { type: 'job', jobId },
    shopId,
  }).record;

describe('shared parts', () => {
  it('are gzip -dc readable, one header per segment; the shared index round-trips', async () => {
    const { bytes, index } = await sharedFixture();
    const headers = gunzipSync(bytes)
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; shop_id?: string })
      .filter((r) => r.type === 'part');
    expect(headers.map((h) => h.shop_id)).toEqual(Object.keys(shops));
    const key = 'job-details-index/_shared/2026-01/shared.json';
    const back = parseSharedIndex(serializeSharedIndex(index), key);
    expect(back.parts).toEqual(index.parts);
    expect([...back.views.keys()].sort()).toEqual(Object.keys(shops));
    expect(back.views.get('sb.myshopify.com')?.jobs).toEqual(index.views.get('sb.myshopify.com')?.jobs);
    expect(back.views.get('sb.myshopify.com')?.parts[0]).toMatchObject({
      key: sharedPartKey(MONTH, NAME),
      shared: true,
    });
    // A lookup parses one view only.
    expect([...parseSharedIndex(serializeSharedIndex(index), key, 'sc.myshopify.com').views.keys()]).toEqual([
      'sc.myshopify.com',
    ]);
  });

  it('sharedPartWithoutShop + switchSharedPart: the others keep their bytes, their entries point at them', async () => {
    const { bytes, index } = await sharedFixture();
    const old = index.parts[0] as SharedPart;
    const out = sharedPartWithoutShop(bytes, old, 'sb.myshopify.com', NEW);
    if (!out.bytes || !out.part || !out.sha256) throw new Error('expected a new part');
    const [, bLength] = old.segments['sb.myshopify.com'] ?? [0, 0];
    expect(out.bytes.length).toBe(bytes.length - bLength);
    expect(out.sha256).toBe(createHash('sha256').update(out.bytes).digest('hex'));
    // Not re-encoded: each kept segment is the same bytes.
    for (const shop of ['sa.myshopify.com', 'sc.myshopify.com']) {
      const [o, l] = old.segments[shop] ?? [0, 0];
      const [n, nl] = out.part.segments[shop] ?? [0, 0];
      expect(nl).toBe(l);
      expect(out.bytes.subarray(n, n + nl).equals(bytes.subarray(o, o + l))).toBe(true);
    }
    expect(out.part.segments['sb.myshopify.com']).toBeUndefined();

    const next: SharedPart = {
      ...out.part,
      etag: 'e1',
      run_id: 'forget',
      committed_at: '2026-03-01T00:00:00.000Z',
    };
    const switched = switchSharedPart(index, NAME, 'sb.myshopify.com', next, '2026-03-01T00:00:00.000Z');
    if (!switched) throw new Error('expected a switch');
    expect(switched.views.has('sb.myshopify.com')).toBe(false);
    expect(switched.parts.map((p) => p.name)).toEqual([NEW]);
    for (const [shop, ids] of Object.entries(shops)) {
      if (shop === 'sb.myshopify.com') continue;
      const view = switched.views.get(shop) as MonthIndex;
      expect(view.parts).toEqual([
        expect.objectContaining({
          name: NEW,
          key: sharedPartKey(MONTH, NEW),
          size: out.bytes.length,
          etag: 'e1',
        }),
      ]);
      for (const id of ids) {
        const e = view.jobs[id]?.[0] as IndexedJob;
        expect(e.part).toBe(NEW);
        expect(recordAt(out.bytes, e, shop, id)).toMatchObject({ type: 'job', job_id: id });
        const pd = e.platform_data as IndexedJob['platform_data'] & object;
        expect(
          decodeBlock(out.bytes.subarray(pd.offset, pd.offset + pd.length), 'test', undefined, {
            want: { type: 'platform_data', ref: '1' },
            shopId: shop,
          }).record,
        ).toMatchObject({ data: { shop } });
      }
    }
    // The switch is what a 412 re-applies: on an index that no longer lists the old part, nothing.
    expect(switchSharedPart(switched, NAME, 'sb.myshopify.com', next, AT)).toBeNull();
    // The new index serializes and parses like any other.
    const key = 'job-details-index/_shared/2026-01/shared.json';
    expect(parseSharedIndex(serializeSharedIndex(switched), key).views.get('sc.myshopify.com')?.jobs).toEqual(
      switched.views.get('sc.myshopify.com')?.jobs,
    );
  });

  it('a shop alone in its part leaves nothing to write; bad input is refused before anything is built', async () => {
    const { bytes, index } = await sharedFixture();
    const old = index.parts[0] as SharedPart;
    const [o, l] = old.segments['sa.myshopify.com'] ?? [0, 0];
    const alone: SharedPart = { ...old, size: l, segments: { 'sa.myshopify.com': [0, l] } };
    expect(sharedPartWithoutShop(bytes.subarray(o, o + l), alone, 'sa.myshopify.com', NEW)).toEqual({
      bytes: null,
      sha256: null,
      part: null,
    });
    expect(() => sharedPartWithoutShop(bytes, old, 'nobody.myshopify.com', NEW)).toThrow(InvalidInputError);
    expect(() => sharedPartWithoutShop(bytes.subarray(1), old, 'sa.myshopify.com', NEW)).toThrow(
      InvalidInputError,
    );
    expect(() => sharedPartWithoutShop(bytes, old, 'sa.myshopify.com', NAME)).toThrow(InvalidInputError);
  });
});
