import { createHash } from 'node:crypto';
import { CorruptObjectError } from '../../errors';
import type { ByteRange } from './month-index';

/**
 * Per-block document filters of a part: a Bloom filter per block over the document ids its job
 * records list (failed, skipped, conflict). Written beside the part when it is built (a sidecar
 * object, docFilterKey), never inside it: parts stay immutable and older parts simply have none.
 *
 * Sidecar bytes: one JSON header line, `\n`, then each block's filter bits back to back.
 *   header: {"format":"job-details-archive/docfilter@1","part":name,"k":7,
 *            "blocks":[{"offset":o,"length":l,"docs":n,"bits":m}, …]}
 * A block's filter is `m/8` bytes (m a multiple of 8; 0 for a block listing no document). Document
 * `d` may be in the block when every bit `(h1 + i·h2) mod m`, i = 0…k−1, is set (bit j is bit
 * `j % 8`, least significant first, of byte `j / 8`), where h1, h2 are the first two big-endian
 * uint32 of sha256(UTF-8 d) and h2 is made odd.
 */
export const DOC_FILTER_FORMAT = 'job-details-archive/docfilter@1';
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

/** The filter of one block's distinct document ids. */
export const blockFilter = (docs: ReadonlySet<string>): Uint8Array => {
  if (docs.size === 0) return new Uint8Array(0);
  const bytes = Math.ceil((docs.size * BITS_PER_DOC) / 8);
  const bits = new Uint8Array(bytes);
  for (const d of docs)
    for (const p of positions(d, bytes * 8, HASHES)) bits[p >> 3] = (bits[p >> 3] ?? 0) | (1 << (p & 7));
  return bits;
};

export const mayContain = (bits: Uint8Array, doc: string, k = HASHES): boolean => {
  if (bits.length === 0) return false;
  return positions(doc, bits.length * 8, k).every((p) => ((bits[p >> 3] ?? 0) & (1 << (p & 7))) !== 0);
};

export interface BlockFilter extends ByteRange {
  readonly docs: number;
  readonly bits: Uint8Array;
}

export interface DocFilters {
  readonly part: string;
  readonly k: number;
  readonly blocks: readonly BlockFilter[];
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
      bits: b.bits.length * 8,
    })),
  };
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), ...f.blocks.map((b) => b.bits)]);
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
  const blocks = (h.blocks as Record<string, unknown>[]).map((b) => {
    const { offset, length, docs, bits } = b;
    if (
      ![offset, length, docs, bits].every(
        (n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0,
      ) ||
      (bits as number) % 8 !== 0
    )
      throw new CorruptObjectError(key, 'document filters: bad block entry');
    const n = (bits as number) / 8;
    const slice = new Uint8Array(buf.subarray(at, at + n));
    at += n;
    return { offset: offset as number, length: length as number, docs: docs as number, bits: slice };
  });
  if (at !== buf.length)
    throw new CorruptObjectError(key, `document filters: ${buf.length - at} bytes left over`);
  return { part: h.part, k: h.k, blocks };
};

/** Indexes of the blocks that may list `doc`. */
export const candidateBlocks = (f: DocFilters, doc: string): number[] =>
  f.blocks.flatMap((b, i) => (mayContain(b.bits, doc, f.k) ? [i] : []));
