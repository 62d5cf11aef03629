import { gunzipSync, gzipSync } from 'node:zlib';
import { blockRanges, reblockSegments } from '../../shared/archive/format';
import type { StagedPart } from '../../shared/archive/steps/archive/staged';
import { relocatedManifest } from '../../shared/archive/steps/verify/verify-shared';
import { type BuiltPart, buildPart, details } from '../support/archive-fixture';

/**
 * Verify of a shared part cut across shops (steps/verify/verify-shared.ts): each shop's manifest,
 * moved to where its records now lie, is checked against the stored blocks — the shop's framed lines
 * exactly its records, each with its digest — and its filters rebuilt from them.
 */
const MONTH = '2026-01';

const fixture = async () => {
  const built: BuiltPart[] = [];
  for (const shop of ['va.myshopify.com', 'vb.myshopify.com']) {
    built.push(
      await buildPart({
        shopId: shop,
        month: MONTH,
        shopOnLines: true,
        jobs: [1, 2].map((n) => ({
          jobId: `${shop.slice(0, 2)}${n}`,
          details: details({ chunk_ids: ['p0'], failed: { r: [`${shop}-${n}-doc`] } }),
          platformData: { shop },
        })),
      }),
    );
  }
  const packed = reblockSegments(
    built.map((b) => ({ shopId: b.shopId, bytes: b.bytes })),
    'test',
  );
  const staged = (i: number): StagedPart => ({ ...(built[i]?.pending as StagedPart), etag: 'e' });
  return { built, packed, staged };
};

const check = (
  packed: ReturnType<typeof reblockSegments>,
  staged: StagedPart,
  bytes: Buffer = packed.bytes,
  relocate = (r: Parameters<typeof packed.relocate>[1]) => packed.relocate(staged.shop_id, r),
) =>
  relocatedManifest(
    staged,
    { size: bytes.length, sha256: packed.sha256, blocks: blockRanges(packed.blocks) },
    (b) => gunzipSync(bytes.subarray(b.offset, b.offset + b.length)),
    relocate,
    'test',
    (reason) => {
      throw new Error(reason);
    },
  );

describe('verify of blocks shared across shops', () => {
  it("moves each shop's records into the shared block and rebuilds its filter from its own documents", async () => {
    const { packed, staged } = await fixture();
    expect(packed.blocks).toHaveLength(1);
    for (const i of [0, 1]) {
      const m = check(packed, staged(i));
      expect(m.size).toBe(packed.bytes.length);
      const block = packed.blocks[0];
      for (const e of Object.values(m.jobs)) expect(e).toMatchObject({ offset: 0, length: block });
      // One filter for the block, counting this shop's two documents only; the part's last member
      // holds it (with the other shop's).
      expect(m.doc_filters?.blocks).toEqual([expect.objectContaining({ offset: 0, length: block, docs: 2 })]);
      expect(packed.shopFilters.get(staged(i).shop_id)).toEqual(m.doc_filters);
      expect(packed.filters).toEqual({ offset: block, length: packed.bytes.length - (block ?? 0) });
    }
  });

  it('refuses a stored block whose lines of the shop are not its records', async () => {
    const { packed, staged } = await fixture();
    const text = gunzipSync(packed.bytes.subarray(0, packed.filters?.offset)).toString('utf8');
    // One of vb's documents renamed in the stored bytes: its record's digest differs.
    const tampered = gzipSync(Buffer.from(text.replace('vb.myshopify.com-2-doc', 'vb.myshopify.com-9-doc')));
    // The one block is the whole (re-gzipped) part: every record is in it.
    const into = (bytes: Buffer, shop: string) => (r: Parameters<typeof packed.relocate>[1]) => ({
      ...packed.relocate(shop, r),
      length: bytes.length,
    });
    const same = { ...packed, blocks: [tampered.length] };
    expect(() => check(same, staged(1), tampered, into(tampered, 'vb.myshopify.com'))).toThrow(
      /digest differs/,
    );
    // va's records are untouched: its check passes on the same bytes.
    expect(() => check(same, staged(0), tampered, into(tampered, 'va.myshopify.com'))).not.toThrow();
    // A line dropped: vb's framed lines no longer tile as its manifest says.
    const dropped = gzipSync(Buffer.from(text.split('\n').slice(0, -2).join('\n').concat('\n')));
    expect(() =>
      check({ ...packed, blocks: [dropped.length] }, staged(1), dropped, into(dropped, 'vb.myshopify.com')),
    ).toThrow(/lines end at byte/);
  });

  it("checks the shop a job line names against its segment's", async () => {
    const { packed, staged } = await fixture();
    const text = gunzipSync(packed.bytes.subarray(0, packed.filters?.offset)).toString('utf8');
    const jobLines = text.split('\n').filter((l) => l.includes('"type":"job"'));
    expect(jobLines).toHaveLength(4);
    for (const l of jobLines) expect(JSON.parse(l).shop_id).toMatch(/^v[ab]\.myshopify\.com$/);
    // vb's first job line names va (same length, so the lines still tile): refused by name.
    const tampered = gzipSync(
      Buffer.from(
        text.replace('"shop_id":"vb.myshopify.com","sources"', '"shop_id":"va.myshopify.com","sources"'),
      ),
    );
    expect(tampered).not.toEqual(gzipSync(Buffer.from(text)));
    const into = (shop: string) => (r: Parameters<typeof packed.relocate>[1]) => ({
      ...packed.relocate(shop, r),
      length: tampered.length,
    });
    const same = { ...packed, blocks: [tampered.length] };
    expect(() => check(same, staged(1), tampered, into('vb.myshopify.com'))).toThrow(
      /job vb1: record names shop va\.myshopify\.com/,
    );
    expect(() => check(same, staged(0), tampered, into('va.myshopify.com'))).not.toThrow();
  });

  it("refuses a relocation onto another shop's lines or outside the part's blocks", async () => {
    const { packed, staged } = await fixture();
    // vb's records where va's are: the framing finds va's header, not vb's.
    expect(() =>
      check(packed, staged(1), packed.bytes, (r) => packed.relocate('va.myshopify.com', r)),
    ).toThrow();
    expect(() =>
      check(packed, staged(0), packed.bytes, (r) => ({
        ...packed.relocate('va.myshopify.com', r),
        offset: 5,
      })),
    ).toThrow(/not a block of the part/);
  });
});
