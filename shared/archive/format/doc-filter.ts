import { createHash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { CorruptObjectError } from '../../errors';

/**
 * Per-block document filters of a part, over the document ids its job records list (failed,
 * skipped, conflict). Built with the part, kept in the month index (index@5, month-index.ts: one
 * trailing gzip member after the job blocks, see storedDocFilters), never inside the part: parts stay
 * immutable and older parts simply have none. Each block listing a document gets the smaller of two
 * encodings:
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
 *
 * Parts built between filters and index@5 have them in a sidecar object (docFilterKey), still read:
 * one JSON header line, `\n`, then each block's filter bytes back to back.
 *   header: {"format":"job-details-archive/docfilter@2","part":name,"k":7,
 *            "blocks":[{"offset":o,"length":l,"docs":n,"kind":"fence"|"bloom","bytes":b}, …]}
 * (`bytes` 0: the block lists no document.)
 */
export const DOC_FILTER_FORMAT = 'job-details-archive/docfilter@2';
/** Bits per distinct document and hashes: ~0.8 % false positives per block checked. */
export const BITS_PER_DOC = 10;
export const HASHES = 7;

const positions = (doc: string, m: number, k: number): number[] => {
  const h = createHash('sha256').update(doc, 'utf8').digest();
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

const SUFFIX = /^(.*?)([1-9][0-9]{0,14})$/;

const pushVarint = (out: number[], v: number): void => {
  let x = v;
  while (x >= 128) {
    out.push((x % 128) | 128);
    x = Math.floor(x / 128);
  }
  out.push(x);
};

const pushString = (out: number[], v: string): void => {
  const b = Buffer.from(v, 'utf8');
  pushVarint(out, b.length);
  for (const byte of b) out.push(byte);
};

/** The exact set, raw-deflated (see the header comment). */
export const fenceFilter = (docs: ReadonlySet<string>): Uint8Array => {
  const byPrefix = new Map<string, number[]>();
  const other: string[] = [];
  for (const d of docs) {
    const m = SUFFIX.exec(d);
    if (m?.[1] !== undefined && m[2]) {
      const list = byPrefix.get(m[1]) ?? [];
      list.push(Number(m[2]));
      byPrefix.set(m[1], list);
    } else other.push(d);
  }
  const out: number[] = [];
  for (const [prefix, nums] of [...byPrefix].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    nums.sort((a, b) => a - b);
    out.push(0);
    pushString(out, prefix);
    pushVarint(out, nums.length);
    for (const [i, n] of nums.entries()) pushVarint(out, i === 0 ? n : n - (nums[i - 1] ?? 0));
  }
  for (const d of other.sort()) {
    out.push(1);
    pushString(out, d);
  }
  return deflateRawSync(Buffer.from(out), { level: 9 });
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
  const m = SUFFIX.exec(doc);
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

/** A byte range in a part (month-index.ts's ByteRange, restated: month-index imports this module). */
interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

export interface BlockFilter extends ByteRange {
  readonly docs: number;
  readonly kind: FilterKind;
  readonly bytes: Uint8Array;
}

/** A part's filters as the month index keeps them: one per block that lists a document. */
export interface PartDocFilters {
  readonly k: number;
  readonly blocks: readonly BlockFilter[];
}

/** The filters of a part's blocks, from each block's range and distinct document ids. */
export const partDocFilters = (
  blocks: Iterable<ByteRange & { readonly docs: ReadonlySet<string> }>,
): PartDocFilters => ({
  k: HASHES,
  blocks: [...blocks]
    .filter((b) => b.docs.size > 0)
    .map((b) => ({ offset: b.offset, length: b.length, docs: b.docs.size, ...blockFilter(b.docs) })),
});

/**
 * As index@5 stores a part's filters (JSON in the index's trailing gzip member):
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

/** The sidecar's filters (docfilter@2): a part's, by name. */
export interface DocFilters extends PartDocFilters {
  readonly part: string;
}

export const encodeDocFilters = (f: DocFilters): Buffer => {
  const header = {
    format: DOC_FILTER_FORMAT,
    part: f.part,
    k: f.k,
    blocks: f.blocks.map((b) => ({
      offset: b.offset,
      length: b.length,
      docs: b.docs,
      kind: b.kind,
      bytes: b.bytes.length,
    })),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), ...f.blocks.map((b) => b.bytes)]);
};

export const parseDocFilters = (bytes: Uint8Array, key: string): DocFilters => {
  const buf = Buffer.from(bytes);
  const nl = buf.indexOf(0x0a);
  if (nl < 0) throw new CorruptObjectError(key, 'document filters: no header line');
  let h: { format?: unknown; part?: unknown; k?: unknown; blocks?: unknown };
  try {
    h = JSON.parse(buf.subarray(0, nl).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'document filters: header is not JSON', { cause: err });
  }
  if (h.format !== DOC_FILTER_FORMAT) throw new CorruptObjectError(key, `unknown format ${String(h.format)}`);
  if (typeof h.part !== 'string' || typeof h.k !== 'number' || !Array.isArray(h.blocks))
    throw new CorruptObjectError(key, 'document filters: header needs part, k and blocks');
  let at = nl + 1;
  const blocks = (h.blocks as Record<string, unknown>[]).map((b): BlockFilter => {
    const { offset, length, docs, bytes, kind } = b;
    if (
      ![offset, length, docs, bytes].every(
        (n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0,
      ) ||
      (kind !== 'fence' && kind !== 'bloom')
    )
      throw new CorruptObjectError(key, 'document filters: bad block entry');
    const n = bytes as number;
    const slice = new Uint8Array(buf.subarray(at, at + n));
    at += n;
    return { offset: offset as number, length: length as number, docs: docs as number, kind, bytes: slice };
  });
  if (at !== buf.length)
    throw new CorruptObjectError(key, `document filters: ${buf.length - at} bytes left over`);
  return { part: h.part, k: h.k, blocks };
};

/** Indexes of the blocks that may list `doc`. */
export const candidateBlocks = (f: PartDocFilters, doc: string): number[] =>
  f.blocks.flatMap((b, i) => (mayContain(b, doc, f.k) ? [i] : []));
