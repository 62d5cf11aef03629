import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import {
  blockFilter,
  candidateBlocks,
  documentListings,
  fenceContains,
  fenceFilter,
  filtersMember,
  golombEncode,
  golombFilter,
  golombMayContain,
  inflateBlock,
  isFiltersMember,
  mayContain,
  parseFiltersMember,
  parseSharedFiltersMember,
  parseStoredDocFilters,
  sharedFiltersMember,
  storedDocFilters,
} from '../../shared/archive/format';
import { buildPart, details } from '../support/archive-fixture';
import { NUMBERED_EDGE_IDS } from '../support/numbered-ids';

const ids = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `gid://shopify/Product/${tag}${7e12 + i}`);

describe('block filters', () => {
  it('never miss a document they hold, match ~1/32 of absent ones, at < 7 bits an id', () => {
    const docs = ids(2000, 'a');
    const bits = golombFilter(new Set(docs));
    for (const d of docs) expect(golombMayContain(bits, docs.length, d)).toBe(true);
    const absent = ids(20000, 'b');
    const fp = absent.filter((d) => golombMayContain(bits, docs.length, d)).length / absent.length;
    expect(fp).toBeGreaterThan(0.022);
    expect(fp).toBeLessThan(0.04);
    // A Bloom filter at this rate takes ~7.2 bits an id (10 bits: 0.8 %); the set ~k + 1.6.
    expect((bits.length * 8) / docs.length).toBeLessThan(7);
    expect(golombMayContain(new Uint8Array(0), 0, 'x')).toBe(false);
    // A set cut short: some id's value lies past its end.
    expect(() => {
      for (const d of docs) golombMayContain(bits.subarray(0, 10), docs.length, d);
    }).toThrow(/truncated/);
  });

  it("a Golomb-coded set's bytes are the spec's layout", () => {
    // Written straight from the spec (docs/archive-format.md): v = ⌊h1 · n·2^k / 2^32⌋, sorted, gaps
    // as unary quotient (1s then a 0) and k remainder bits, most significant bit first, 0-padded.
    const spec = (docs: readonly string[], k: number): Buffer => {
      const range = BigInt(docs.length * 2 ** k);
      const values = docs
        .map((d) => (BigInt(createHash('sha256').update(d, 'utf8').digest().readUInt32BE(0)) * range) >> 32n)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      let bits = '';
      let last = 0n;
      for (const v of values) {
        const gap = v - last;
        last = v;
        bits += `${'1'.repeat(Number(gap >> BigInt(k)))}0${(gap % BigInt(2 ** k)).toString(2).padStart(k, '0')}`;
      }
      bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0');
      return Buffer.from(
        Array.from({ length: bits.length / 8 }, (_, i) => parseInt(bits.slice(i * 8, i * 8 + 8), 2)),
      );
    };
    for (const [docs, k] of [
      [ids(1, 'x'), 6],
      [ids(500, 'y'), 5],
      [['a', 'b', 'c', 'ü', ''], 3],
      [ids(3000, 'z'), 10],
      [ids(700, 'w'), 1],
      [ids(40, 'v'), 16],
    ] as const) {
      const set = new Set(docs);
      expect(Buffer.from(golombFilter(set, k)).equals(spec([...set], k))).toBe(true);
      for (const d of set) expect(golombMayContain(golombFilter(set, k), set.size, d, k)).toBe(true);
    }
  });

  it('codes any ascending whole numbers as the spec lays them out, and refuses anything else', () => {
    // The layout bit by bit (as a string of 0s and 1s), for values the writer never meets: gaps of
    // 0, gaps far above 2^k (long unary runs across bytes), a last value near 2^37.
    const spec = (values: readonly number[], k: number): Buffer => {
      let bits = '';
      let last = 0;
      for (const v of values) {
        const gap = v - last;
        last = v;
        const q = Math.floor(gap / 2 ** k);
        bits += `${'1'.repeat(q)}0${(gap - q * 2 ** k).toString(2).padStart(k, '0')}`;
      }
      bits = bits.padEnd(Math.ceil(bits.length / 8) * 8, '0');
      return Buffer.from(
        Array.from({ length: bits.length / 8 }, (_, i) => parseInt(bits.slice(i * 8, i * 8 + 8), 2)),
      );
    };
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const k of [1, 2, 5, 8, 13, 16]) {
      for (const n of [0, 1, 2, 9, 300]) {
        const values: number[] = [];
        let v = 0;
        for (let i = 0; i < n; i++) {
          v += next() < 0.2 ? 0 : Math.floor(next() * 2 ** (k + (next() < 0.1 ? 6 : 1)));
          values.push(v);
        }
        expect(Buffer.from(golombEncode(values, k))).toEqual(spec(values, k));
      }
    }
    expect(Buffer.from(golombEncode([2 ** 37 - 1], 30))).toEqual(spec([2 ** 37 - 1], 30));
    expect(() => golombEncode([3, 2], 5)).toThrow(RangeError);
    expect(() => golombEncode([1.5], 5)).toThrow(RangeError);
    expect(() => golombEncode([-1], 5)).toThrow(RangeError);
  });

  it('a fence is exact, and the smaller encoding is kept: fences for catalog ranges, Golomb for scattered ids', () => {
    const dense = new Set(ids(2000, '').map((d, i) => (i % 3 === 0 ? d : `${d.slice(0, -1)}9`)));
    const odd = new Set(['plain-id', 'x=1\ty', '007', 'gid://a/0', ...dense]);
    const fence = fenceFilter(odd);
    for (const d of odd) expect(fenceContains(fence, d)).toBe(true);
    for (const d of ['plain-id2', '7', 'gid://a/00', 'gid://shopify/Product/1', ...ids(50, 'z')])
      expect(fenceContains(fence, d)).toBe(false);
    expect(blockFilter(dense).kind).toBe('fence');
    const scattered = new Set(Array.from({ length: 2000 }, (_, i) => `doc-${(i * 2654435761) % 1e13}x`));
    const golomb = blockFilter(scattered);
    expect(golomb.kind).toBe('golomb');
    for (const d of scattered) expect(mayContain({ ...golomb, docs: scattered.size }, d)).toBe(true);
  });

  it("keeps the smaller encoding, a tie to the fence, at every density around the Golomb set's least size", () => {
    // Catalog ranges from dense to sparse: the fence costs from ~1 bit an id to ~3 bytes, crossing
    // the Golomb set's n·(k + 1) bits (the least it can take) on the way; blockFilter skips coding
    // the set only when the fence is within that, so its choice is always the smaller of the two.
    let seed = 11;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const kinds = new Set<string>();
    for (const n of [1, 2, 7, 64, 500]) {
      for (let spread = 1; spread <= 2 ** 14; spread *= 2) {
        const docs = new Set(
          Array.from({ length: n }, () => `gid://shopify/Product/${7e12 + Math.floor(next() * n * spread)}`),
        );
        const fence = fenceFilter(docs);
        const golomb = golombFilter(docs);
        const want =
          fence.length <= golomb.length ? { kind: 'fence', bytes: fence } : { kind: 'golomb', bytes: golomb };
        const got = blockFilter(docs);
        expect(got.kind).toBe(want.kind);
        expect(Buffer.from(got.bytes)).toEqual(Buffer.from(want.bytes));
        kinds.add(got.kind);
      }
    }
    expect([...kinds].sort()).toEqual(['fence', 'golomb']);
  });

  it("a fence's bytes are the spec's layout: ids split as /^(.*?)([1-9][0-9]{0,14})$/ splits them", () => {
    // The layout written straight from the spec (docs/archive-format.md, doc-filter.ts header), with
    // the regular expression it names: the encoder's hand-written split must give the same bytes.
    const spec = (docs: Iterable<string>): Buffer => {
      const out: number[] = [];
      const varint = (v: number) => {
        let x = v;
        while (x >= 128) {
          out.push((x % 128) | 128);
          x = Math.floor(x / 128);
        }
        out.push(x);
      };
      const str = (v: string) => {
        const b = Buffer.from(v, 'utf8');
        varint(b.length);
        out.push(...b);
      };
      const byPrefix = new Map<string, number[]>();
      const other: string[] = [];
      for (const d of docs) {
        const m = /^(.*?)([1-9][0-9]{0,14})$/.exec(d);
        if (m?.[1] !== undefined && m[2]) byPrefix.set(m[1], [...(byPrefix.get(m[1]) ?? []), Number(m[2])]);
        else other.push(d);
      }
      for (const p of [...byPrefix.keys()].sort()) {
        const nums = (byPrefix.get(p) ?? []).sort((a, b) => a - b);
        out.push(0);
        str(p);
        varint(nums.length);
        for (const [i, n] of nums.entries()) varint(i === 0 ? n : n - (nums[i - 1] ?? 0));
      }
      for (const d of other.sort()) {
        out.push(1);
        str(d);
      }
      return Buffer.from(out);
    };
    const edge = NUMBERED_EDGE_IDS;
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const random = Array.from({ length: 3000 }, () => {
      const prefixes = ['gid://shopify/Product/', 'sku-', 'p/0', 'Z', ''];
      const tail = String(rand() % 10 ** (1 + (rand() % 16)));
      return `${prefixes[rand() % prefixes.length]}${rand() % 4 === 0 ? '0' : ''}${tail}`;
    });
    for (const set of [edge, random, [...edge, ...random], ['only-other'], ['5']]) {
      const docs = new Set(set);
      expect(inflateRawSync(fenceFilter(docs)).equals(spec(docs))).toBe(true);
      for (const d of docs) expect(fenceContains(fenceFilter(docs), d)).toBe(true);
    }
  });

  it('an empty block matches nothing', () => {
    expect(mayContain({ ...blockFilter(new Set()), docs: 0 }, 'x')).toBe(false);
    expect(blockFilter(new Set()).bytes.length).toBe(0);
  });

  it("round-trip through a part's filters member (own and shared); anything else is corruption", () => {
    const f = {
      k: 5,
      blocks: [
        { offset: 0, length: 10, docs: 2, ...blockFilter(new Set(['a', 'b'])) },
        { offset: 10, length: 5, docs: 2, kind: 'golomb' as const, bytes: golombFilter(new Set(['c', 'd'])) },
      ],
    };
    const member = filtersMember(f);
    expect(isFiltersMember(member)).toBe(true);
    // One JSONL line of type doc_filters: `gzip -dc part | jq .` reads it with the records.
    expect(JSON.parse(gunzipSync(member).toString()).type).toBe('doc_filters');
    expect(parseFiltersMember(member, 'k')).toEqual(f);
    expect(candidateBlocks(parseFiltersMember(member, 'k'), 'a', 'k')).toEqual([0]);
    expect(candidateBlocks(parseFiltersMember(member, 'k'), 'd', 'k')).toEqual([1]);
    const shared = sharedFiltersMember(new Map([['s1', f]]));
    expect(parseSharedFiltersMember(shared, 'k').get('s1')).toEqual(f);
    expect(isFiltersMember(gzipSync('{"type":"job"}\n'))).toBe(false);
    expect(() => parseFiltersMember(gzipSync('{"type":"job"}\n'), 'k')).toThrow(/not a doc_filters line/);
    expect(() => parseSharedFiltersMember(member, 'k')).toThrow(/need shops/);
  });

  it('round-trip through the stored form; malformed entries are corruption', () => {
    const f = {
      k: 5,
      blocks: [
        { offset: 0, length: 10, docs: 2, ...blockFilter(new Set(['a', 'b'])) },
        { offset: 10, length: 5, docs: 2, kind: 'golomb' as const, bytes: golombFilter(new Set(['c', 'd'])) },
      ],
    };
    const stored = JSON.parse(JSON.stringify(storedDocFilters(f))) as unknown;
    expect(parseStoredDocFilters(stored, 'k', 'p')).toEqual(f);
    expect(candidateBlocks(parseStoredDocFilters(stored, 'k', 'p'), 'c', 'k')).toEqual([1]);
    for (const bad of [
      null,
      { k: 5 },
      { k: 0, blocks: [] },
      { k: 17, blocks: [] },
      { k: 5, blocks: [[0, 1, 1, 'x', '']] },
      { k: 5, blocks: [[0, 1, 1, 'b', '']] },
      // Damage that would read as "no match": no ids, no bytes, a set too short for its count.
      { k: 5, blocks: [[0, 1, 0, 'g', 'AA==']] },
      { k: 5, blocks: [[0, 1, 1, 'g', '']] },
      { k: 5, blocks: [[0, 1, 1, 'f', '']] },
      { k: 5, blocks: [[0, 1, 2, 'g', 'AA==']] },
    ])
      expect(() => parseStoredDocFilters(bad, 'k', 'p')).toThrow(/filters of part p/);
  });
});

describe('PartBuilder filters', () => {
  it('tile the part block by block, each holding every document its job records list', async () => {
    const jobs = Array.from({ length: 60 }, (_, i) => ({
      jobId: `j${i}`,
      details: details({
        chunk_ids: ['p0'],
        // Ids without a trailing number: stored whole (numbered ids after the first are stored as
        // short offsets, doc-lists.ts), so 60 jobs span several blocks.
        failed: { timeout: ids(150, `j${i}-`).map((d) => `${d}/v`) },
        skipped: { unchanged: [`s${i}`] },
        conflict: { version: [{ doc_id: `c${i}` }] },
      }),
    }));
    const built = await buildPart({ shopId: 's', month: '2026-01', jobs });
    const f = built.docFilters;
    expect(built.pending.doc_filters).toEqual(f);
    // The part's last member holds them (in the part's storage class), after every block.
    const tail = built.pending.filters;
    if (!tail) throw new Error('no filters member');
    expect(tail.offset + tail.length).toBe(built.bytes.length);
    expect(parseFiltersMember(built.bytes.subarray(tail.offset), 'p')).toEqual(f);
    expect(Math.max(...Object.values(built.pending.jobs).map((e) => e.offset + e.length))).toBe(tail.offset);
    expect(f.blocks.length).toBeGreaterThan(3);
    const members = built.pending.jobs;
    const blocks = [...new Map(Object.values(members).map((e) => [e.offset, e.length]))];
    let listed = 0;
    for (const [offset, length] of blocks) {
      const lines = inflateBlock(built.bytes.subarray(offset, offset + length), `block ${offset}`)
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as { type: string; details?: Parameters<typeof documentListings>[0] });
      const docs = new Set(
        lines.flatMap((r) => (r.details ? documentListings(r.details).map((l) => l.doc_id) : [])),
      );
      // Blocks listing documents have a filter (exactly one), blocks listing none have none.
      const i = f.blocks.findIndex((b) => b.offset === offset);
      expect(i >= 0).toBe(docs.size > 0);
      if (i < 0) continue;
      expect(f.blocks[i]).toMatchObject({ offset, length, docs: docs.size });
      for (const d of docs) expect(candidateBlocks(f, d, 'k')).toContain(i);
      listed += docs.size;
    }
    expect(listed).toBe(60 * 152);
    expect(f.blocks.every((b) => blocks.some(([o]) => o === b.offset))).toBe(true);
    // Filter bytes against part bytes for random, never-repeating ids (the design mix's worst case).
    const filterBytes = f.blocks.reduce((n, b) => n + b.bytes.length, 0);
    expect(filterBytes / built.bytes.length).toBeLessThan(0.5);
  });
});
