import { createHash } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import {
  BLOCK_BYTES,
  blockFilter,
  candidateBlocks,
  compactDetails,
  expandDetails,
  fenceContains,
  fenceFilter,
  filtersMember,
  golombFilter,
  golombMayContain,
  inflateBlock,
  mayContain,
  parseFiltersMember,
} from '../../shared/archive/format';
import { CorruptObjectError } from '../../shared/errors';
import { partBlocks } from '../../shared/redact/redact-part';
import { buildPart, details } from '../support/archive-fixture';
import { STORED_FORM_IDS } from '../support/numbered-ids';

/** The value an id takes in a Golomb-coded set of `n` ids at k = 5 (the spec's formula). */
const value = (id: string, n: number): number =>
  Number((BigInt(createHash('sha256').update(id, 'utf8').digest().readUInt32BE(0)) * BigInt(n * 32)) >> 32n);

/** Ids whose value in a set of `n` is `want` (brute force over a tag). */
const idsWithValue = (n: number, want: number, count: number, tag: string): string[] => {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) if (value(`${tag}${i}`, n) === want) out.push(`${tag}${i}`);
  return out;
};

const ODD_IDS = [...STORED_FORM_IDS, 'x'.repeat(100_000), '\u0000', 'a\u0085b12', '\u{10FFFF}'];

describe('Golomb-coded sets: no false negatives', () => {
  it('hold every id of any set: one id, odd text, values at 0 and at the range top, collisions', () => {
    const sets: string[][] = [
      ['only'],
      [''],
      ODD_IDS,
      // n = 4 → range 128: two ids at value 0, two at 127 (equal values: gaps of 0).
      [...idsWithValue(4, 0, 2, 'lo'), ...idsWithValue(4, 127, 2, 'hi')],
      // every id on one value
      idsWithValue(3, 50, 3, 'same'),
    ];
    for (const s of sets) {
      const set = new Set(s);
      const bytes = golombFilter(set);
      for (const d of set) expect([d, golombMayContain(bytes, set.size, d)]).toEqual([d, true]);
    }
  });

  it('hold every id of a large set (15,000 random-looking ids)', () => {
    const set = new Set(Array.from({ length: 15_000 }, (_, i) => `doc-${(i * 2654435761) % 1e9}-${i}`));
    const bytes = golombFilter(set);
    let missed = 0;
    for (const d of set) if (!golombMayContain(bytes, set.size, d)) missed++;
    expect(missed).toBe(0);
  });

  it('a block filter (fence or set, whichever the writer picks) holds ids with lone surrogates', () => {
    // A payload's JSON may carry "\ud800" (JSON.parse keeps it): checkDocId takes any string.
    const gids = Array.from({ length: 200 }, (_, i) => `gid://shopify/Product/${7086727600000 + i}`);
    for (const ids of [
      ['\uD800'],
      ['a\uDC00b'],
      ['\uD800123', '\uD800124'],
      ['gid://x/\uDFFF/1'],
      // The writer's own pick for a block of numbered ids: the fence.
      [...gids, 'lone\uD800'],
      [...gids, '\uDBFF7'],
    ]) {
      const set = new Set(ids);
      const f = blockFilter(set);
      for (const d of ids)
        expect([d, f.kind, mayContain({ ...f, docs: set.size }, d)]).toEqual([d, f.kind, true]);
      // The fence itself (the writer picks it for sets this small).
      for (const d of ids) expect([d, fenceContains(fenceFilter(set), d)]).toEqual([d, true]);
    }
  });

  it("a truncated set read through a part's filters names the part and the block, never answers no", () => {
    const set = new Set(Array.from({ length: 400 }, (_, i) => `rnd-${(i * 7919) % 10007}-x`));
    const g = golombFilter(set);
    // Long enough for its count (n·(k + 1) bits, what parsing checks), short of its last values.
    const cut = g.subarray(0, Math.ceil((set.size * 6) / 8) + 2);
    expect(cut.length).toBeLessThan(g.length);
    const member = filtersMember({
      k: 5,
      blocks: [{ offset: 12345, length: 678, docs: set.size, kind: 'golomb', bytes: cut }],
    });
    const f = parseFiltersMember(member, 'parts/shop/2026-03/part-x.jsonl.gz');
    // An id whose value lies past the cut: the decoder runs off the end.
    const late = [...set].find((d) => value(d, set.size) > set.size * 32 * 0.9) as string;
    let err: unknown;
    try {
      candidateBlocks(f, late, 'parts/shop/2026-03/part-x.jsonl.gz');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CorruptObjectError);
    expect((err as Error).message).toContain('parts/shop/2026-03/part-x.jsonl.gz');
    expect((err as Error).message).toContain('12345');
  });
});

describe('fences: damage is an error, never "no match"', () => {
  it('an id cut short or an unknown entry tag throws', () => {
    const raw = (bytes: number[]) => deflateRawSync(Buffer.from(bytes));
    // byte 1, length 5, then only 2 bytes of text
    expect(() => fenceContains(raw([1, 5, 0x61, 0x62]), 'zz')).toThrow(CorruptObjectError);
    expect(() => fenceContains(raw([2, 1, 0x61]), 'zz')).toThrow(/unknown entry tag 2/);
    // The whole fence still answers.
    expect(fenceContains(raw([1, 2, 0x61, 0x62]), 'ab')).toBe(true);
  });
});

describe('document lists: odd ids round-trip', () => {
  it('every odd id, first or not, beside numbered ids, comes back exactly', () => {
    const P = 'gid://shopify/Product/';
    for (const odd of ODD_IDS) {
      for (const list of [
        [odd, `${P}7086727600000`, `${P}7086727600001`],
        [`${P}7086727600000`, odd, `${P}7086727600001`, odd],
        [`${odd}1`, `${odd}2`, `${odd}900`],
        [odd],
      ]) {
        const d = details({ chunk_ids: ['p0'], failed: { r: list }, skipped: {} });
        const back = expandDetails(JSON.parse(JSON.stringify(compactDetails(d))), 'w') as typeof d;
        expect([odd, back.failed.r]).toEqual([odd, list]);
      }
    }
  });

  it('a stored string never reads as an integer to SQL (Trino: Java regex, $ also before a final line terminator)', () => {
    // What the Athena view's storedId takes for an offset: Java's `^-?[0-9]+$` also matches "7\n".
    const javaInteger = /^-?[0-9]+(?:\r\n|[\n\r\u0085\u2028\u2029])?$/;
    for (const odd of ODD_IDS) {
      const stored =
        compactDetails(details({ chunk_ids: [], failed: { r: ['gid://x/5', odd] }, skipped: {} })).failed.r ??
        [];
      for (const s of stored)
        if (typeof s === 'string') expect([odd, s, javaInteger.test(s)]).toEqual([odd, s, false]);
    }
  });
});

describe('a line longer than a block', () => {
  it('is a block of its own, and every document of it and of its neighbours is found', async () => {
    const small = (i: number) => ({
      jobId: `s${String(i).padStart(4, '0')}`,
      details: details({ chunk_ids: ['p0'], failed: { r: [`small-${i}`] } }),
    });
    const hugeIds = Array.from({ length: 30_000 }, (_, i) => `gid://shopify/Product/${7e12 + i * 13}`);
    const part = await buildPart({
      shopId: 'acme',
      month: '2026-01',
      jobs: [
        ...Array.from({ length: 50 }, (_, i) => small(i)),
        { jobId: 'huge', details: details({ chunk_ids: ['p0'], failed: { r: hugeIds, s: ['~9', '9\n'] } }) },
        ...Array.from({ length: 50 }, (_, i) => small(50 + i)),
      ],
    });
    const members = partBlocks(part.bytes, part.partKey).slice(0, -1);
    const texts = members.map((m) => inflateBlock(m, 'k').toString('utf8'));
    const at = texts.findIndex((t) => t.includes('"job_id":"huge"'));
    expect(Buffer.byteLength(texts[at] as string)).toBeGreaterThan(BLOCK_BYTES);
    expect((texts[at] as string).split('\n').filter(Boolean)).toHaveLength(1);
    const f = part.docFilters;
    const offsetOf = (i: number) => members.slice(0, i).reduce((n, m) => n + m.length, 0);
    for (const id of [hugeIds[0], hugeIds[29_999], hugeIds[12_345], '~9', '9\n'] as string[])
      expect(candidateBlocks(f, id, part.partKey).map((i) => f.blocks[i]?.offset)).toContain(offsetOf(at));
    for (const i of [0, 49, 50, 99])
      expect(candidateBlocks(f, `small-${i}`, part.partKey).length).toBeGreaterThan(0);
  });
});
