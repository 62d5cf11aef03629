import { gunzipSync, gzipSync } from 'node:zlib';
import {
  blockRanges,
  blocksOf,
  commitPart,
  damagedBlocks,
  decodeBlock,
  emptyMonthIndex,
  type IndexedJob,
  type MonthIndex,
  parseSharedFiltersMember,
  parseSharedIndex,
  reblockSegments,
  type SharedIndex,
  type SharedPart,
  serializeSharedIndex,
  sharedPartKey,
  sharedPartWithoutDamage,
  sharedPartWithoutShop,
  shopLines,
  shopsOfBlock,
  switchRepairedPart,
  switchSharedPart,
} from '../../shared/archive/format';
import { CorruptObjectError, UnsupportedFormatError } from '../../shared/errors';
import { buildPart, details } from '../support/archive-fixture';

/**
 * Blocks cut across shops (shared-index@2, docs/archive-format.md "Shared parts"): the segments'
 * lines unchanged, cut into blocks whatever shop they belong to; a shop's lines in a block are its
 * header's framing; removing a shop rewrites only the blocks that held it.
 */
const MONTH = '2026-01';
const NAME = 'part-20260215T030000Z-aaaaaaaa.jsonl.gz';
const NEW = 'part-20260301T030000Z-bbbbbbbb.jsonl.gz';
const AT = '2026-02-15T03:00:00.000Z';
const KEY = 'job-details-index/_shared/2026-01/shared.json';

/** Doc ids enough to make a job's line `kb` KB long (so a shop spans blocks). */
const docs = (prefix: string, kb: number) =>
  Array.from({ length: kb * 60 }, (_, i) => `${prefix}-${i}-doc-id`);

/** shop → its jobs (job id, KB of details); `sbig` spans two blocks, the small ones share them. */
const SHOPS: ReadonlyArray<[string, ReadonlyArray<[string, number]>]> = [
  ['sa.myshopify.com', [['a1', 0]]],
  [
    'sbig.myshopify.com',
    [
      ['big1', 80],
      ['big2', 80],
    ],
  ],
  [
    'sc.myshopify.com',
    [
      ['c1', 0],
      ['c2', 0],
    ],
  ],
  ['sd.myshopify.com', [['d1', 0]]],
];

const fixture = async (): Promise<{ bytes: Buffer; index: SharedIndex; plain: string }> => {
  const built = [];
  for (const [shop, jobs] of SHOPS) {
    const b = await buildPart({
      shopId: shop,
      month: MONTH,
      jobs: jobs.map(([jobId, kb]) => ({
        jobId,
        details: details({ chunk_ids: ['p0'], failed: { r: [`${jobId}-doc`, ...docs(jobId, kb)] } }),
        platformData: { shop },
      })),
    });
    built.push({ shop, b });
  }
  const packed = reblockSegments(
    built.map(({ shop, b }) => ({ shopId: shop, bytes: b.bytes })),
    'test',
  );
  const views = new Map<string, MonthIndex>();
  for (const { shop, b } of built) {
    const entries: Record<string, IndexedJob> = {};
    for (const [jobId, e] of Object.entries(b.pending.jobs)) {
      const pd = e.platform_data_ref ? b.pending.platform_data[e.platform_data_ref] : undefined;
      const at = packed.relocate(shop, e);
      const pdAt = pd ? packed.relocate(shop, pd) : null;
      entries[jobId] = {
        part: NAME,
        offset: at.offset,
        length: at.length,
        completed_at: e.completed_at,
        committed_at: AT,
        platform_data: pdAt ? { offset: pdAt.offset, length: pdAt.length } : null,
        sources: [],
        deleted_at: null,
      };
    }
    const part = {
      name: NAME,
      key: sharedPartKey(MONTH, NAME),
      size: packed.bytes.length,
      etag: 'e0',
      run_id: 'r1',
      committed_at: AT,
      job_count: Object.keys(entries).length,
      bytes_in: 0,
      shared: true as const,
      ...(packed.filters ? { filters: packed.filters } : {}),
    };
    views.set(shop, commitPart(emptyMonthIndex(shop, MONTH, AT), part, entries, AT));
  }
  const part: SharedPart = {
    name: NAME,
    size: packed.bytes.length,
    etag: 'e0',
    run_id: 'r1',
    committed_at: AT,
    segments: packed.segments,
    blocks: packed.blocks,
    ...(packed.filters ? { filters_bytes: packed.filters.length } : {}),
  };
  // Each segment's lines less its own filters line (the shared part has one for every shop, last).
  const plain = built
    .map(({ b }) =>
      gunzipSync(b.bytes)
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('{"type":"doc_filters"'))
        .map((l) => `${l}\n`)
        .join(''),
    )
    .join('');
  return { bytes: packed.bytes, index: { month: MONTH, updated_at: AT, parts: [part], views }, plain };
};

/** What a lookup does: the entry's block, the shop's lines in it, the record by id. */
const lookup = (bytes: Uint8Array, r: { offset: number; length: number }, shop: string, want: string) =>
  decodeBlock(bytes.subarray(r.offset, r.offset + r.length), 'test', undefined, {
    want: want === 'pd' ? { type: 'platform_data', ref: '1' } : { type: 'job', jobId: want },
    shopId: shop,
    narrow: (inflated) => shopLines(inflated, shop),
  }).record;

const readsBack = (bytes: Uint8Array, index: SharedIndex) => {
  for (const [shop, view] of index.views) {
    for (const [jobId, entries] of Object.entries(view.jobs)) {
      const e = entries[0] as IndexedJob;
      expect(lookup(bytes, e, shop, jobId)).toMatchObject({ type: 'job', job_id: jobId });
      expect(lookup(bytes, e.platform_data as IndexedJob, shop, 'pd')).toMatchObject({ data: { shop } });
    }
  }
};

describe('blocks shared across shops', () => {
  it('keep every line as built, in order; cut into blocks across shops; segments fall on blocks', async () => {
    const { bytes, index, plain } = await fixture();
    // `gzip -dc part` is the segments' lines one after the other, exactly, then the filters line.
    const text = gunzipSync(bytes).toString('utf8');
    expect(text.startsWith(plain)).toBe(true);
    const last = JSON.parse(text.slice(plain.length)) as { type: string; shops: Record<string, unknown> };
    expect(last.type).toBe('doc_filters');
    expect(Object.keys(last.shops).sort()).toEqual(SHOPS.map(([s]) => s).sort());
    const part = index.parts[0] as SharedPart;
    const tail = { offset: bytes.length - (part.filters_bytes ?? 0), length: part.filters_bytes ?? 0 };
    expect(blocksOf(bytes, 'test')).toEqual([...blockRanges(part.blocks ?? []), tail]);
    expect(part.blocks?.length).toBeGreaterThan(1);
    expect(part.blocks?.length).toBeLessThan(SHOPS.length);
    const seg = (s: string) => part.segments[s] ?? [0, 0];
    // The small shop before the big one shares its first block; the ones after share its last.
    expect(seg('sa.myshopify.com')[0]).toBe(seg('sbig.myshopify.com')[0]);
    expect(seg('sc.myshopify.com')).toEqual(seg('sd.myshopify.com'));
    const back = parseSharedIndex(serializeSharedIndex(index), KEY);
    expect(back.parts).toEqual(index.parts);
    readsBack(bytes, back);
  });

  it("a block's lines of a shop are its header's framing; without it another shop's ref 1 is found", async () => {
    const { bytes, index } = await fixture();
    const view = index.views.get('sc.myshopify.com') as MonthIndex;
    const e = view.jobs.c1?.[0] as IndexedJob;
    const pd = e.platform_data as IndexedJob;
    const text = gunzipSync(bytes.subarray(pd.offset, pd.offset + pd.length));
    const c = shopLines(text, 'sc.myshopify.com').toString('utf8');
    expect(c.startsWith('{')).toBe(true);
    expect(c).toContain('"shop_id":"sc.myshopify.com"');
    expect(c).not.toContain('sd.myshopify.com');
    // The block holds sbig's last lines first (its segment runs into it): they are sbig's.
    const lead = shopLines(text, 'sbig.myshopify.com').toString('utf8');
    expect(lead).toContain('"job_id":"big2"');
    expect(lead).not.toContain('"type":"part"');
    // sd's lines follow sc's in that block: unnarrowed, the first `ref "1"` found is sc's platform data.
    const d = (index.views.get('sd.myshopify.com') as MonthIndex).jobs.d1?.[0] as IndexedJob;
    const dpd = d.platform_data as IndexedJob;
    expect(dpd.offset).toBe(pd.offset);
    const wrong = decodeBlock(bytes.subarray(dpd.offset, dpd.offset + dpd.length), 'test', undefined, {
      want: { type: 'platform_data', ref: '1' },
      shopId: 'sd.myshopify.com',
    }).record;
    expect(wrong).toMatchObject({ data: { shop: 'sc.myshopify.com' } });
    expect(lookup(bytes, dpd, 'sd.myshopify.com', 'pd')).toMatchObject({
      data: { shop: 'sd.myshopify.com' },
    });
  });

  it.each([['sc.myshopify.com'], ['sbig.myshopify.com'], ['sa.myshopify.com']])(
    'without %s: only the blocks that held it change, the others are copied; every other shop reads back',
    async (gone) => {
      const { bytes, index } = await fixture();
      const old = index.parts[0] as SharedPart;
      const out = sharedPartWithoutShop(bytes, old, gone, NEW);
      if (!out.bytes || !out.part) throw new Error('expected a new part');
      expect(out.part.segments[gone]).toBeUndefined();
      // Byte for byte: every old block outside the shop's segment is in the new part unchanged.
      const [so, sl] = old.segments[gone] ?? [0, 0];
      const kept = new Set(
        blockRanges(out.part.blocks ?? []).map((b) =>
          (out.bytes as Buffer).subarray(b.offset, b.offset + b.length).toString('base64'),
        ),
      );
      for (const b of blockRanges(old.blocks ?? []))
        if (b.offset + b.length <= so || b.offset >= so + sl)
          expect(kept.has(bytes.subarray(b.offset, b.offset + b.length).toString('base64'))).toBe(true);
      // The shop's lines are gone; everyone else's lines are as they were, in order.
      const text = gunzipSync(out.bytes).toString('utf8');
      expect(text).not.toContain(`"shop_id":"${gone}"`);
      const switched = switchSharedPart(
        index,
        NAME,
        gone,
        { ...out.part, etag: 'e1', run_id: 'forget', committed_at: AT },
        AT,
      );
      if (!switched) throw new Error('expected a switch');
      expect(switched.views.has(gone)).toBe(false);
      readsBack(out.bytes, parseSharedIndex(serializeSharedIndex(switched), KEY));
    },
  );

  it('a pre-1.0 shared index is refused with the fix; malformed blocks are refused', async () => {
    const { index } = await fixture();
    const body = JSON.parse(gunzipSync(serializeSharedIndex(index)).toString('utf8'));
    const v1 = (b: unknown) =>
      gzipSync(JSON.stringify({ ...(b as object), format: 'job-details-archive/shared-index@1' }));
    expect(() => parseSharedIndex(v1(body), KEY)).toThrow(UnsupportedFormatError);
    expect(() => parseSharedIndex(v1(body), KEY)).toThrow(/rebuild the local data/);
    const noBlocks = { ...body, parts: body.parts.map(({ blocks: _b, ...p }: { blocks: unknown }) => p) };
    expect(() => parseSharedIndex(gzipSync(JSON.stringify(noBlocks)), KEY)).toThrow(CorruptObjectError);
    const v2 = (parts: unknown) => gzipSync(JSON.stringify({ ...body, parts }));
    const p = body.parts[0];
    expect(() => parseSharedIndex(v2([{ ...p, blocks: [...p.blocks, 5] }]), KEY)).toThrow(/add up/);
    const askew = { ...p, segments: { ...p.segments, 'sa.myshopify.com': [1, 10] } };
    expect(() => parseSharedIndex(v2([askew]), KEY)).toThrow(/does not fall on blocks/);
  });
});

describe('a damaged shared part repaired: its unreadable blocks dropped, every other entry still reads', () => {
  it('drops the block, moves the others byte for byte, and the entries in the block leave their views', async () => {
    const { bytes, index } = await fixture();
    const part = index.parts[0] as SharedPart;
    const ranges = blockRanges(part.blocks ?? []);
    // The first block (shared by the first shops, whose entries in it are lost with it).
    const alone = ranges[0] as { offset: number; length: number };
    expect(ranges.length).toBeGreaterThan(1);
    const lost: Record<string, number> = {};
    for (const shop of shopsOfBlock(part, alone.offset))
      for (const entries of Object.values(index.views.get(shop)?.jobs ?? {}))
        for (const e of entries)
          if (e.offset === alone.offset || e.platform_data?.offset === alone.offset)
            lost[shop] = (lost[shop] ?? 0) + 1;
    expect(Object.keys(lost).length).toBeGreaterThan(0);
    const damaged = Buffer.from(bytes);
    const flip = alone.offset + Math.floor(alone.length / 2);
    damaged[flip] = (damaged[flip] as number) ^ 0xff;
    expect(damagedBlocks(damaged, part)).toEqual([alone.offset]);
    expect(damagedBlocks(bytes, part)).toEqual([]);

    const r = sharedPartWithoutDamage(damaged, part, NEW);
    expect(r.dropped).toEqual([alone.offset]);
    const sum = (lengths: readonly number[]) => lengths.reduce((n, b) => n + b, 0);
    const repaired = r.part as NonNullable<typeof r.part>;
    expect(sum(repaired.blocks ?? [])).toBe(sum(part.blocks ?? []) - alone.length);
    // Its filters member is rebuilt from the surviving blocks: each shop's filters are the damaged
    // part's, less the dropped block, each block at its new place (a search still finds every document).
    expect(r.bytes?.length).toBe(sum(repaired.blocks ?? []) + (repaired.filters_bytes ?? 0));
    const filtersOf = (b: Uint8Array, size: number, fb: number | undefined) =>
      parseSharedFiltersMember(b.subarray(size - (fb ?? 0)), NAME);
    const old = filtersOf(bytes, part.size, part.filters_bytes);
    const rebuilt = filtersOf(r.bytes as Buffer, repaired.size, repaired.filters_bytes);
    for (const [shop, f] of old) {
      const moved = f.blocks.flatMap((b) => {
        const m = r.moves.get(b.offset);
        return m ? [{ ...b, offset: m.offset, length: m.length }] : [];
      });
      expect(rebuilt.get(shop)?.blocks ?? []).toEqual(moved);
    }
    const next: SharedPart = {
      ...(r.part as NonNullable<typeof r.part>),
      etag: 'e1',
      run_id: 'r2',
      committed_at: AT,
    };
    const switched = switchRepairedPart(index, NAME, next, r.moves, AT);
    // The jobs whose record or platform data was in the block leave their views; nothing else does.
    expect(switched.dropped).toEqual(lost);
    const after = switched.index as SharedIndex;
    expect(after.parts).toEqual([next]);
    const count = (i: SharedIndex) =>
      [...i.views.values()].reduce((n, v) => n + Object.keys(v.jobs).length, 0);
    expect(count(after)).toBe(count(index) - Object.values(lost).reduce((n, k) => n + k, 0));
    readsBack(r.bytes as Buffer, after);
    // Re-applied to an index that no longer lists the old part: nothing to do.
    expect(switchRepairedPart(after, NAME, next, r.moves, AT).index).toBeNull();
  });

  it('a part not of its committed size cannot be repaired block by block', async () => {
    const { bytes, index } = await fixture();
    expect(() => damagedBlocks(bytes.subarray(1), index.parts[0] as SharedPart)).toThrow('cannot be located');
  });
});
