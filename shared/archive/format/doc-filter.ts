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
 * - `golomb`: a Golomb-coded set (Golomb-Rice, parameter RICE_BITS): the n distinct ids hashed into
 *   [0, n·2^k) — `⌊h1 · n·2^k / 2^32⌋`, h1 the first big-endian uint32 of sha256(UTF-8 id) — sorted,
 *   each written as its gap to the one before (the first whole): the gap's quotient by 2^k in unary
 *   (that many 1 bits, then a 0), then its k low bits, most significant first; bits fill each byte from
 *   its most significant bit, the last byte padded with 0s. ~1/2^k false matches per block checked, at
 *   ~k + 1.6 bits an id (a Bloom filter at the same rate needs 1.44·k). Used only when smaller than
 *   the block's fence.
 */
/**
 * The Golomb-Rice parameter: 2^-5 ≈ 3.1 % false matches per block checked, ~6.6 bits an id (the
 * 10-bit Bloom filters it replaced: 0.8 %), for two thirds of the filter bytes. Blocks of 96 KB of
 * lines (BLOCK_BYTES) are two thirds of the blocks a search checked at 64 KB, so a search meets a few
 * more false blocks (one GET each; docs/search-and-sql.md has the measured figures). k = 6 would halve
 * them at ~1 bit an id more (+1.5 % of a part's bytes on random ids).
 */
export const RICE_BITS = 5;

/** sha256's first big-endian uint32 scaled to [0, range): exact in doubles for range < 2^37. */
const golombValue = (doc: string, range: number): number => {
  // One-shot hash as hex, its first 8 digits read: a block can list 60,000 ids, and for short ids
  // this is ~4× faster than createHash() and ~2.5× faster than a one-shot 'buffer' digest (whose
  // Buffer costs more than the hash: `npm run bench:hot-cpu`).
  const h1 = Number.parseInt(hash('sha256', doc, 'hex').slice(0, 8), 16);
  const hi = (h1 >>> 16) * range;
  const lo = (h1 & 0xffff) * range;
  return Math.floor(hi / 65536) + Math.floor(((hi % 65536) * 65536 + lo) / 4294967296);
};

/** The Golomb-coded set of one block's distinct document ids (see the header comment). */
export const golombFilter = (docs: ReadonlySet<string>, k = RICE_BITS): Uint8Array => {
  const range = docs.size * 2 ** k;
  return golombEncode(Float64Array.from(docs, (d) => golombValue(d, range)).sort(), k);
};

/** Sorted values as a Golomb-Rice code of their gaps (see the header comment). */
export const golombEncode = (values: ArrayLike<number>, k: number): Uint8Array => {
  const m = 2 ** k;
  // Sized exactly first (each value: its quotient's ones, a zero, k bits), then written in place: no
  // per-bit closure or growing array (a part's filters hash and code every document id it lists).
  let bits = 0;
  let last = 0;
  for (let n = 0; n < values.length; n++) {
    const v = values[n] as number;
    const gap = v - last;
    last = v;
    if (!(gap >= 0) || !Number.isSafeInteger(gap))
      throw new RangeError(`golombEncode: values must ascend as whole numbers (${last - gap} then ${v})`);
    bits += Math.floor(gap / m) + 1 + k;
  }
  const out = new Uint8Array(Math.ceil(bits / 8));
  let at = 0;
  last = 0;
  for (let n = 0; n < values.length; n++) {
    const v = values[n] as number;
    const gap = v - last;
    last = v;
    const q = Math.floor(gap / m);
    for (let end = at + q; at < end; at++) out[at >> 3] = (out[at >> 3] as number) | (0x80 >> (at & 7));
    at++; // the quotient's terminating 0
    const r = gap - q * m;
    for (let i = k - 1; i >= 0; i--, at++)
      if (Math.floor(r / 2 ** i) % 2 === 1) out[at >> 3] = (out[at >> 3] as number) | (0x80 >> (at & 7));
  }
  return out;
};

/**
 * The `n` values a Golomb-coded set holds, ascending; null when its bytes do not hold exactly that:
 * cut short, or more than the last value's byte with zero padding.
 */
export const golombValues = (bytes: Uint8Array, n: number, k: number): number[] | null => {
  const total = bytes.length * 8;
  let at = 0;
  const bit = (): number => {
    const b = ((bytes[at >> 3] as number) >> (7 - (at & 7))) & 1;
    at++;
    return b;
  };
  const values: number[] = [];
  let value = 0;
  for (let i = 0; i < n; i++) {
    let q = 0;
    for (;;) {
      if (at >= total) return null;
      if (bit() === 0) break;
      q++;
    }
    if (at + k > total) return null;
    let r = 0;
    for (let j = 0; j < k; j++) r = r * 2 + bit();
    value += q * 2 ** k + r;
    values.push(value);
  }
  if (Math.ceil(at / 8) !== bytes.length) return null;
  while (at < total) if (bit() !== 0) return null;
  return values;
};

/** Whether `doc` may be one of the `docs` ids a Golomb-coded set holds (false: it is not). */
export const golombMayContain = (bytes: Uint8Array, docs: number, doc: string, k = RICE_BITS): boolean => {
  if (docs === 0 || bytes.length === 0) return false;
  const want = golombValue(doc, docs * 2 ** k);
  let at = 0;
  const bit = (): number => {
    const byte = bytes[at >> 3];
    if (byte === undefined) throw new CorruptObjectError('document filter', 'Golomb-coded set truncated');
    const b = (byte >> (7 - (at & 7))) & 1;
    at++;
    return b;
  };
  let value = 0;
  for (let i = 0; i < docs; i++) {
    let q = 0;
    while (bit() === 1) q++;
    let r = 0;
    for (let j = 0; j < k; j++) r = r * 2 + bit();
    value += q * 2 ** k + r;
    if (value >= want) return value === want;
  }
  return false;
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

/**
 * Whether a fence holds `doc`. The fence stores ids as UTF-8, where a lone surrogate (an id from JSON
 * may hold one: `"\ud800"`) is written as U+FFFD: `doc` is compared as that UTF-8 reads back.
 */
export const fenceContains = (bytes: Uint8Array, id: string): boolean => {
  const doc = Buffer.from(id, 'utf8').toString('utf8');
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
    if (at + n > b.length) throw new CorruptObjectError('document fence', 'truncated');
    const s = b.subarray(at, at + n).toString('utf8');
    at += n;
    return s;
  };
  const m = NUMBERED.exec(doc);
  const want = m?.[2] ? Number(m[2]) : -1;
  while (at < b.length) {
    const tag = b[at++];
    if (tag !== 0 && tag !== 1) throw new CorruptObjectError('document fence', `unknown entry tag ${tag}`);
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

export type FilterKind = 'fence' | 'golomb';

/** A block's filter: the smaller encoding of its distinct document ids. */
export const blockFilter = (docs: ReadonlySet<string>): { kind: FilterKind; bytes: Uint8Array } => {
  if (docs.size === 0) return { kind: 'fence', bytes: new Uint8Array(0) };
  const fence = fenceFilter(docs);
  // A Golomb-coded set of n ids takes at least n·(k + 1) bits (each gap: a 0 after its quotient, k
  // remainder bits): a fence no longer than that is kept without hashing and coding the set (ids of
  // catalog ranges, ~5 bits each, the usual case).
  if (fence.length <= Math.ceil((docs.size * (RICE_BITS + 1)) / 8)) return { kind: 'fence', bytes: fence };
  const golomb = golombFilter(docs);
  return fence.length <= golomb.length ? { kind: 'fence', bytes: fence } : { kind: 'golomb', bytes: golomb };
};

/** Whether a block's filter (of `docs` distinct ids) may hold `doc`; `k` the part's Rice parameter. */
export const mayContain = (
  b: { kind: FilterKind; bytes: Uint8Array; docs: number },
  doc: string,
  k = RICE_BITS,
): boolean =>
  b.bytes.length > 0 &&
  (b.kind === 'fence' ? fenceContains(b.bytes, doc) : golombMayContain(b.bytes, b.docs, doc, k));

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

/** A part's filters: one per block that lists a document; `k` the Golomb-coded sets' Rice parameter. */
export interface PartDocFilters {
  readonly k: number;
  readonly blocks: readonly BlockFilter[];
}

/** The filters of a part's blocks, from each block's range and distinct document ids. */
export const partDocFilters = (
  blocks: Iterable<BlockRange & { readonly docs: ReadonlySet<string> }>,
): PartDocFilters => ({
  k: RICE_BITS,
  blocks: [...blocks]
    .filter((b) => b.docs.size > 0)
    .map((b) => ({ offset: b.offset, length: b.length, docs: b.docs.size, ...blockFilter(b.docs) })),
});

/**
 * As a part's filters member stores them (filtersMember):
 * `{"k":5,"blocks":[[offset,length,docs,"f"|"g",base64 bytes], …]}` — `f` fence, `g` Golomb-coded set. Base64 of
 * (already dense) filter bytes deflates back to within a few % of their raw size.
 */
export const storedDocFilters = (f: PartDocFilters): { k: number; blocks: unknown[][] } => ({
  k: f.k,
  blocks: f.blocks.map((b) => [
    b.offset,
    b.length,
    b.docs,
    b.kind === 'fence' ? 'f' : 'g',
    Buffer.from(b.bytes).toString('base64'),
  ]),
});

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

export const parseStoredDocFilters = (v: unknown, key: string, part: string): PartDocFilters => {
  const bad = (): never => {
    throw new CorruptObjectError(key, `document filters of part ${part} are malformed`);
  };
  const f = v as { k?: unknown; blocks?: unknown } | null;
  if (!f || typeof f !== 'object' || !isCount(f.k) || f.k === 0 || f.k > 16 || !Array.isArray(f.blocks))
    return bad();
  return {
    k: f.k,
    blocks: f.blocks.map((b: unknown): BlockFilter => {
      if (!Array.isArray(b) || b.length !== 5) return bad();
      const [offset, length, docs, kind, bytes] = b as unknown[];
      if (!isCount(offset) || !isCount(length) || !isCount(docs) || typeof bytes !== 'string') return bad();
      if (kind !== 'f' && kind !== 'g') return bad();
      // The writer lists only blocks with documents, never with empty bytes, and a set of n ids takes
      // at least n·(k + 1) bits: anything else would read as "no match" where it is damage.
      const raw = Buffer.from(bytes, 'base64');
      if (docs === 0 || raw.length === 0) return bad();
      if (kind === 'g' && docs * (Number(f.k) + 1) > raw.length * 8) return bad();
      return {
        offset,
        length,
        docs,
        kind: kind === 'f' ? 'fence' : 'golomb',
        bytes: new Uint8Array(raw),
      };
    }),
  };
};

/** The `type` of a part's last line: its document filters. */
export const FILTERS_TYPE = 'doc_filters';

/**
 * A part's document filters as its trailing gzip member, after its last block: one JSONL
 * line, `{"type":"doc_filters","k":5,"blocks":[…]}` (own part: storedDocFilters' blocks) or, in a
 * shared part, `{"type":"doc_filters","k":5,"shops":{shop: […], …}}` (each shop's blocks at their
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
        k: RICE_BITS,
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

/**
 * Indexes of the blocks that may list `doc`; a filter that cannot be decoded is a CorruptObjectError
 * naming `key` (the part) and the block's byte range, never "no match".
 */
export const candidateBlocks = (f: PartDocFilters, doc: string, key: string): number[] =>
  f.blocks.flatMap((b, i) => {
    try {
      return mayContain(b, doc, f.k) ? [i] : [];
    } catch (err) {
      const why = err instanceof CorruptObjectError ? err.reason : String(err);
      throw new CorruptObjectError(
        key,
        `document filter of the block at bytes ${b.offset}-${b.offset + b.length - 1}: ${why}`,
        { cause: err },
      );
    }
  });
