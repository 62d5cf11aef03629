import { hash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { CorruptObjectError } from '../../errors';
import { deflateBlock, inflateBlocks } from './codec';
import { NUMBERED, splitNumbered } from './doc-lists';

/**
 * Per-block document filters of a part, over the document ids its job records list (failed,
 * skipped, conflict). Built with the part and stored as its last gzip member (filtersMember),
 * so they lie in the part's storage class: in Standard they were 2/3 of the month index and cost
 * more than the parts themselves in Deep Archive (docs/cost.md). Each block listing a document gets
 * the smaller of two encodings:
 * - `fence`: the exact set — ids split into a prefix and a decimal suffix without leading zero
 *   (`gid://shopify/Product/` + `7086727600002`); per prefix, in code-point order, byte 0,
 *   varint(prefix UTF-8 length), the prefix, varint(count), then the sorted suffixes as varint gaps
 *   (the first one whole); each other id as byte 1, varint(length), its UTF-8; all raw-deflated.
 *   Varints are LEB128 (7 bits a byte, least significant first). Ids of one catalog range cost
 *   ~5 bits each.
 * - `bloom`: BITS_PER_DOC bits a distinct id, HASHES hashes (~0.8 % false matches): `d` may be in
 *   the block when every bit `(h1 + i·h2) mod m`, i = 0…k−1, is set (bit j is bit `j % 8`, least
 *   significant first, of byte `j / 8`), h1, h2 the first two big-endian uint32 of sha256(UTF-8 d),
 *   h2 made odd, m the filter's bits. Used only when smaller than the block's fence.
 */
/** Bits per distinct document and hashes: ~0.8 % false positives per block checked. */
export const BITS_PER_DOC = 10;
export const HASHES = 7;

const positions = (doc: string, m: number, k: number): number[] => {
  // One-shot hash: several times faster than createHash() for short ids (a block can list 60,000).
  const h = hash('sha256', doc, 'buffer');
  const h1 = h.readUInt32BE(0);
  const h2 = (h.readUInt32BE(4) | 1) >>> 0;
  const out: number[] = [];
  for (let i = 0; i < k; i++) out.push((h1 + i * h2) % m);
  return out;
};

/** The Bloom filter of one block's distinct document ids. */
export const bloomFilter = (docs: ReadonlySet<string>): Uint8Array => {
  if (docs.size === 0) return new Uint8Array(0);
  const bytes = Math.ceil((docs.size * BITS_PER_DOC) / 8);
  const bits = new Uint8Array(bytes);
  for (const d of docs)
    for (const p of positions(d, bytes * 8, HASHES)) bits[p >> 3] = (bits[p >> 3] ?? 0) | (1 << (p & 7));
  return bits;
};

export const bloomMayContain = (bits: Uint8Array, doc: string, k = HASHES): boolean => {
  if (bits.length === 0) return false;
  return positions(doc, bits.length * 8, k).every((p) => ((bits[p >> 3] ?? 0) & (1 << (p & 7))) !== 0);
};

/** A growing byte buffer for the fence's layout. */
class Bytes {
  private buf = Buffer.allocUnsafe(1024);
  length = 0;
  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }
  varint(v: number): void {
    this.room(8);
    let x = v;
    while (x >= 128) {
      this.buf[this.length++] = (x % 128) | 128;
      x = Math.floor(x / 128);
    }
    this.buf[this.length++] = x;
  }
  string(v: string): void {
    const n = Buffer.byteLength(v, 'utf8');
    this.varint(n);
    this.room(n);
    this.length += this.buf.write(v, this.length, 'utf8');
  }
  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The exact set, raw-deflated (see the header comment). */
export const fenceFilter = (docs: ReadonlySet<string>): Uint8Array => {
  const byPrefix = new Map<string, number[]>();
  const other: string[] = [];
  for (const d of docs) {
    const split = splitNumbered(d);
    if (split === null) {
      other.push(d);
      continue;
    }
    const list = byPrefix.get(split.prefix);
    if (list) list.push(split.n);
    else byPrefix.set(split.prefix, [split.n]);
  }
  const out = new Bytes();
  for (const prefix of [...byPrefix.keys()].sort(byCodeUnits)) {
    const nums = (byPrefix.get(prefix) as number[]).sort((a, b) => a - b);
    out.byte(0);
    out.string(prefix);
    out.varint(nums.length);
    let last = 0;
    for (const n of nums) {
      out.varint(n - last);
      last = n;
    }
  }
  for (const d of other.sort()) {
    out.byte(1);
    out.string(d);
  }
  return deflateRawSync(out.bytes(), { level: 9 });
};

export const fenceContains = (bytes: Uint8Array, doc: string): boolean => {
  const b = inflateRawSync(bytes);
  let at = 0;
  const varint = (): number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      const byte = b[at++];
      if (byte === undefined) throw new CorruptObjectError('document fence', 'truncated');
      v += (byte & 127) * scale;
      if (byte < 128) return v;
      scale *= 128;
    }
  };
  const string = (): string => {
    const n = varint();
    const s = b.subarray(at, at + n).toString('utf8');
    at += n;
    return s;
  };
  const m = NUMBERED.exec(doc);
  const want = m?.[2] ? Number(m[2]) : -1;
  while (at < b.length) {
    const tag = b[at++];
    if (tag === 1) {
      if (string() === doc) return true;
      continue;
    }
    const prefix = string();
    const count = varint();
    let n = 0;
    for (let i = 0; i < count; i++) {
      n += varint();
      if (n === want && prefix === m?.[1]) return true;
    }
  }
  return false;
};

export type FilterKind = 'fence' | 'bloom';

/** A block's filter: the smaller encoding of its distinct document ids. */
export const blockFilter = (docs: ReadonlySet<string>): { kind: FilterKind; bytes: Uint8Array } => {
  if (docs.size === 0) return { kind: 'fence', bytes: new Uint8Array(0) };
  const fence = fenceFilter(docs);
  const bloomBytes = Math.ceil((docs.size * BITS_PER_DOC) / 8);
  return fence.length <= bloomBytes
    ? { kind: 'fence', bytes: fence }
    : { kind: 'bloom', bytes: bloomFilter(docs) };
};

export const mayContain = (b: { kind: FilterKind; bytes: Uint8Array }, doc: string, k = HASHES): boolean =>
  b.bytes.length > 0 && (b.kind === 'fence' ? fenceContains(b.bytes, doc) : bloomMayContain(b.bytes, doc, k));

/** A block's byte range in its part (month-index.ts ByteRange; not imported: the index imports this). */
interface BlockRange {
  readonly offset: number;
  readonly length: number;
}

export interface BlockFilter extends BlockRange {
  readonly docs: number;
  readonly kind: FilterKind;
  readonly bytes: Uint8Array;
}

/** A part's filters: one per block that lists a document. */
export interface PartDocFilters {
  readonly k: number;
  readonly blocks: readonly BlockFilter[];
}

/** The filters of a part's blocks, from each block's range and distinct document ids. */
export const partDocFilters = (
  blocks: Iterable<BlockRange & { readonly docs: ReadonlySet<string> }>,
): PartDocFilters => ({
  k: HASHES,
  blocks: [...blocks]
    .filter((b) => b.docs.size > 0)
    .map((b) => ({ offset: b.offset, length: b.length, docs: b.docs.size, ...blockFilter(b.docs) })),
});

/**
 * As a part's filters member stores them (filtersMember):
 * `{"k":7,"blocks":[[offset,length,docs,"f"|"b",base64 bytes], …]}` — `f` fence, `b` bloom. Base64 of
 * (already dense) filter bytes deflates back to within a few % of their raw size.
 */
export const storedDocFilters = (f: PartDocFilters): { k: number; blocks: unknown[][] } => ({
  k: f.k,
  blocks: f.blocks.map((b) => [
    b.offset,
    b.length,
    b.docs,
    b.kind === 'fence' ? 'f' : 'b',
    Buffer.from(b.bytes).toString('base64'),
  ]),
});

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

export const parseStoredDocFilters = (v: unknown, key: string, part: string): PartDocFilters => {
  const bad = (): never => {
    throw new CorruptObjectError(key, `document filters of part ${part} are malformed`);
  };
  const f = v as { k?: unknown; blocks?: unknown } | null;
  if (!f || typeof f !== 'object' || !isCount(f.k) || f.k === 0 || !Array.isArray(f.blocks)) return bad();
  return {
    k: f.k,
    blocks: f.blocks.map((b: unknown): BlockFilter => {
      if (!Array.isArray(b) || b.length !== 5) return bad();
      const [offset, length, docs, kind, bytes] = b as unknown[];
      if (!isCount(offset) || !isCount(length) || !isCount(docs) || typeof bytes !== 'string') return bad();
      if (kind !== 'f' && kind !== 'b') return bad();
      return {
        offset,
        length,
        docs,
        kind: kind === 'f' ? 'fence' : 'bloom',
        bytes: new Uint8Array(Buffer.from(bytes, 'base64')),
      };
    }),
  };
};

/** The `type` of a part's last line: its document filters. */
export const FILTERS_TYPE = 'doc_filters';

/**
 * A part's document filters as its trailing gzip member, after its last block: one JSONL
 * line, `{"type":"doc_filters","k":7,"blocks":[…]}` (own part: storedDocFilters' blocks) or, in a
 * shared part, `{"type":"doc_filters","k":7,"shops":{shop: […], …}}` (each shop's blocks at their
 * offsets in the shared part, counting only that shop's documents). It lies in the part's storage
 * class, with the part; the month index names its length (`filters_bytes`), so a search reads it with
 * one ranged GET and never the blocks that cannot list the document.
 */
export const filtersMember = (f: PartDocFilters): Buffer =>
  deflateBlock(Buffer.from(`${JSON.stringify({ type: FILTERS_TYPE, ...storedDocFilters(f) })}\n`, 'utf8'));

export const sharedFiltersMember = (byShop: ReadonlyMap<string, PartDocFilters>): Buffer =>
  deflateBlock(
    Buffer.from(
      `${JSON.stringify({
        type: FILTERS_TYPE,
        k: HASHES,
        shops: Object.fromEntries([...byShop].map(([shop, f]) => [shop, storedDocFilters(f).blocks])),
      })}\n`,
      'utf8',
    ),
  );

/** The parsed line of a filters member: an own part's, or every shop's of a shared part. */
const filtersLine = (bytes: Uint8Array, key: string): Record<string, unknown> => {
  let v: unknown;
  try {
    v = JSON.parse(inflateBlocks(bytes).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'document filters: the trailing member is not gzipped JSON', {
      cause: err,
    });
  }
  if (!v || typeof v !== 'object' || (v as { type?: unknown }).type !== FILTERS_TYPE)
    throw new CorruptObjectError(key, `document filters: the trailing member is not a ${FILTERS_TYPE} line`);
  return v as Record<string, unknown>;
};

/** Whether a part's gzip member is its filters member (its one line is a doc_filters record). */
export const isFiltersMember = (bytes: Uint8Array): boolean => {
  try {
    return isFiltersText(inflateBlocks(bytes));
  } catch {
    return false;
  }
};
/** Whether an inflated member is the filters member (for a caller that inflated it already). */
export const isFiltersText = (inflated: Buffer): boolean =>
  inflated.subarray(0, FILTERS_PREFIX.length).equals(FILTERS_PREFIX);
const FILTERS_PREFIX = Buffer.from(`{"type":"${FILTERS_TYPE}"`, 'utf8');

/** An own part's filters from its trailing member. */
export const parseFiltersMember = (bytes: Uint8Array, key: string): PartDocFilters => {
  const { type: _t, ...rest } = filtersLine(bytes, key);
  return parseStoredDocFilters(rest, key, key);
};

/** Every shop's filters from a shared part's trailing member. */
export const parseSharedFiltersMember = (bytes: Uint8Array, key: string): Map<string, PartDocFilters> => {
  const v = filtersLine(bytes, key);
  const shops = v.shops as Record<string, unknown> | undefined;
  if (!shops || typeof shops !== 'object' || Array.isArray(shops))
    throw new CorruptObjectError(key, 'document filters of a shared part need shops');
  return new Map(
    Object.entries(shops).map(([shop, blocks]) => [
      shop,
      parseStoredDocFilters({ k: v.k, blocks }, key, shop),
    ]),
  );
};

/** Indexes of the blocks that may list `doc`. */
export const candidateBlocks = (f: PartDocFilters, doc: string): number[] =>
  f.blocks.flatMap((b, i) => (mayContain(b, doc, f.k) ? [i] : []));
