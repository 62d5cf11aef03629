import { createHash } from 'node:crypto';
import { parseJobDetailsPayload } from '../../details/payload';
import { CorruptObjectError } from '../../errors';
import { gzipMemberLength } from './block-scan';
import { BLOCK_BYTES } from './blocks';
import { deflateBlock, inflateBlocks } from './codec';
import { isFiltersMember, type PartDocFilters, partDocFilters, sharedFiltersMember } from './doc-filter';
import { expandDetails } from './doc-lists';
import { documentListings } from './flatten';
import type { ByteRange, Located } from './month-index';

/**
 * Blocks shared across shops in a shared part (docs/archive-format.md, "Shared parts"): pure byte logic.
 *
 * A shared part's JSONL is each shop's segment in turn — its `part` header line, then its platform
 * data and job records — and its blocks (gzip members) are cut across shops: that is where the
 * gzip members are cut: every ≤ BLOCK_BYTES of lines, across shops, so small shops' records compress
 * together (the fleet's parts: 59 % of per-shop members). A line belongs to the shop of the last
 * header line before it in the part; a block that holds no header of a shop starts with the lines of
 * the shop whose segment runs into it. A shop's segment is the byte range of the blocks holding its
 * lines, so neighbouring segments may share one block.
 */

/** A part's members, each with its byte range (any part, any form). */
export const blocksOf = (bytes: Buffer, where: string): ByteRange[] => {
  const out: ByteRange[] = [];
  for (let at = 0; at < bytes.length; ) {
    const m = gzipMemberLength(bytes.subarray(at));
    if (!('length' in m))
      throw new CorruptObjectError(
        where,
        `no whole gzip member at byte ${at}: ${'bad' in m ? m.bad : 'truncated'}`,
      );
    out.push({ offset: at, length: m.length });
    at += m.length;
  }
  return out;
};

/** Byte ranges of the lines of an inflated block (each ends with its newline). */
export const linesOf = (inflated: Buffer): ByteRange[] => {
  const out: ByteRange[] = [];
  for (let at = 0; at < inflated.length; ) {
    const end = inflated.indexOf(0x0a, at);
    const stop = end < 0 ? inflated.length : end + 1;
    out.push({ offset: at, length: stop - at });
    at = stop;
  }
  return out;
};

const HEADER_TEXT = Buffer.from('"type":"part"', 'utf8');

/** The shop a line opens a segment of (a part header line), or null for any other line. */
const headerShop = (line: Buffer): string | null => {
  // Canonical JSON: a header holds this text; a payload holding it too is parsed and refused below.
  if (line.indexOf(HEADER_TEXT) < 0) return null;
  let rec: unknown;
  try {
    rec = JSON.parse(line.toString('utf8'));
  } catch {
    return null;
  }
  const r = rec as { type?: unknown; shop_id?: unknown };
  return r && r.type === 'part' && typeof r.shop_id === 'string' ? r.shop_id : null;
};

/**
 * The lines of `shopId` in one inflated block of a shared part: from its header to the next header, or
 * — when the block holds no header of it — the lines before the block's first header (its segment runs
 * into the block). The caller has checked that the block lies inside the shop's segment.
 */
export const shopLines = (inflated: Buffer, shopId: string): Buffer => {
  const lines = linesOf(inflated);
  const shops = lines.map((l) => headerShop(inflated.subarray(l.offset, l.offset + l.length)));
  const startOf = (i: number) => (i < 0 ? inflated.length : (lines[i] as ByteRange).offset);
  const own = shops.indexOf(shopId);
  if (own >= 0)
    return inflated.subarray(startOf(own), startOf(shops.findIndex((s, i) => i > own && s !== null)));
  return inflated.subarray(0, startOf(shops.findIndex((s) => s !== null)));
};

/** One shop's segment as built alone (complete blocks of an own part; its own filters member, if any, is skipped). */
export interface Segment {
  readonly shopId: string;
  readonly bytes: Buffer;
}

export interface Reblocked {
  readonly bytes: Buffer;
  readonly sha256: string;
  /** Compressed length of each block, in order (the shared index's `blocks`; the filters member apart). */
  readonly blocks: readonly number[];
  /** The trailing filters member (doc-filter.ts sharedFiltersMember), when any shop lists a document. */
  readonly filters?: ByteRange;
  /** Each shop's filters over the blocks holding its job records (what the member holds). */
  readonly shopFilters: ReadonlyMap<string, PartDocFilters>;
  /** Shop → `[offset, length]` of the blocks holding its lines. */
  readonly segments: Readonly<Record<string, readonly [number, number]>>;
  /** Where a record of `shopId` at `at` in its own segment (member range + line) lies in the part. */
  readonly relocate: (shopId: string, at: Located) => Located;
}

/**
 * The shops' segments (each built alone by the archive step, in this order) as ONE stream of lines
 * cut into blocks across shops, as PartBuilder cuts a part: a block closes before a line that would
 * take it past BLOCK_BYTES, or once it reaches BLOCK_BYTES; a longer line is a block of its own. Every
 * line keeps its bytes, so each record's digest is what its segment's manifest says.
 */
export const reblockSegments = (segments: readonly Segment[], where: string): Reblocked => {
  const lines: Buffer[] = [];
  /** The shop of each line (by index in `lines`). */
  const shopOf: string[] = [];
  /** Shop → its member offset → where that member's first byte lies in the part's JSONL. */
  const starts = new Map<string, Map<number, number>>();
  const spans = new Map<string, [number, number]>();
  let at = 0;
  for (const s of segments) {
    if (starts.has(s.shopId)) throw new CorruptObjectError(where, `two segments of ${s.shopId}`);
    const mine = new Map<number, number>();
    starts.set(s.shopId, mine);
    const first = at;
    for (const m of blocksOf(s.bytes, `${where} (${s.shopId})`)) {
      // A segment built as a part ends with its own filters member: the shared part gets one for all.
      if (
        m.offset > 0 &&
        m.offset + m.length === s.bytes.length &&
        isFiltersMember(s.bytes.subarray(m.offset))
      )
        continue;
      mine.set(m.offset, at);
      const inflated = inflateBlocks(s.bytes.subarray(m.offset, m.offset + m.length));
      if (inflated.length === 0 || inflated[inflated.length - 1] !== 0x0a)
        throw new CorruptObjectError(where, `a block of ${s.shopId} does not end with a newline`);
      for (const l of linesOf(inflated)) {
        lines.push(inflated.subarray(l.offset, l.offset + l.length));
        shopOf.push(s.shopId);
      }
      at += inflated.length;
    }
    if (at === first) throw new CorruptObjectError(where, `the segment of ${s.shopId} is empty`);
    spans.set(s.shopId, [first, at]);
  }
  // Cut as PartBuilder does; `cuts` holds each block's first JSONL byte.
  const cuts: number[] = [];
  const members: Buffer[] = [];
  let open: Buffer[] = [];
  let openBytes = 0;
  let pos = 0;
  const close = () => {
    if (open.length === 0) return;
    members.push(deflateBlock(Buffer.concat(open)));
    open = [];
    openBytes = 0;
  };
  /** Shop → block number → the documents its job records there list. */
  const docs = new Map<string, Map<number, Set<string>>>();
  for (const [i, line] of lines.entries()) {
    if (openBytes > 0 && openBytes + line.length > BLOCK_BYTES) close();
    if (openBytes === 0) cuts.push(pos);
    const listed = jobDocs(line, where);
    if (listed.length > 0) {
      const shop = shopOf[i] as string;
      const byBlock = docs.get(shop) ?? new Map<number, Set<string>>();
      docs.set(shop, byBlock);
      const set = byBlock.get(cuts.length - 1) ?? new Set<string>();
      byBlock.set(cuts.length - 1, set);
      for (const d of listed) set.add(d);
    }
    open.push(line);
    openBytes += line.length;
    pos += line.length;
    if (openBytes >= BLOCK_BYTES) close();
  }
  close();
  const offsets: number[] = [];
  let o = 0;
  for (const m of members) {
    offsets.push(o);
    o += m.length;
  }
  const blockAt = (p: number): number => {
    let lo = 0;
    let hi = cuts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((cuts[mid] as number) <= p) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const range = (b: number): ByteRange => ({
    offset: offsets[b] as number,
    length: (members[b] as Buffer).length,
  });
  const segs: Record<string, readonly [number, number]> = {};
  for (const [shop, [from, to]] of spans) {
    const a = range(blockAt(from));
    const z = range(blockAt(to - 1));
    segs[shop] = [a.offset, z.offset + z.length - a.offset];
  }
  const shopFilters = new Map<string, PartDocFilters>();
  for (const [shop, byBlock] of docs)
    shopFilters.set(
      shop,
      partDocFilters([...byBlock].sort(([a], [b]) => a - b).map(([b, set]) => ({ ...range(b), docs: set }))),
    );
  const tail = shopFilters.size > 0 ? sharedFiltersMember(shopFilters) : null;
  const bytes = Buffer.concat(tail ? [...members, tail] : members);
  return {
    bytes,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    blocks: members.map((m) => m.length),
    ...(tail ? { filters: { offset: o, length: tail.length } } : {}),
    shopFilters,
    segments: segs,
    relocate: (shopId, r) => {
      const start = starts.get(shopId)?.get(r.offset);
      if (start === undefined || !r.line)
        throw new CorruptObjectError(where, `no record of ${shopId} at block ${r.offset}`);
      const p = start + r.line.offset;
      const b = blockAt(p);
      return { ...range(b), line: { offset: p - (cuts[b] as number), length: r.line.length } };
    },
  };
};

/** The document ids a job line lists (none for any other line). */
/** The documents a line lists: a job record's details' listings (none for any other line). */
export const jobDocs = (line: Buffer, where: string): string[] => {
  let rec: { type?: unknown; details?: unknown };
  try {
    rec = JSON.parse(line.toString('utf8')) as { type?: unknown; details?: unknown };
  } catch (err) {
    throw new CorruptObjectError(where, 'a segment line is not JSON', { cause: err });
  }
  if (rec?.type !== 'job') return [];
  return documentListings(parseJobDetailsPayload(expandDetails(rec.details, where), where)).map(
    (l) => l.doc_id,
  );
};

/** The blocks of a part from their lengths: byte ranges in order. */
export const blockRanges = (lengths: readonly number[]): ByteRange[] => {
  let at = 0;
  return lengths.map((length) => {
    const r = { offset: at, length };
    at += length;
    return r;
  });
};

/** The first and last block numbers of a segment (it starts and ends on block boundaries). */
export const blockSpan = (
  blocks: readonly ByteRange[],
  seg: readonly [number, number],
  name: string,
): [number, number] => {
  const first = blocks.findIndex((b) => b.offset === seg[0]);
  const last = blocks.findIndex((b) => b.offset + b.length === seg[0] + seg[1]);
  if (first < 0 || last < first)
    throw new CorruptObjectError(name, `segment ${seg[0]}+${seg[1]} does not fall on the part's blocks`);
  return [first, last];
};

/** Segments over `after`, a part of as many blocks as `before` (blocks rewritten in place, lengths changed). */
export const sameBlocksSegments = (
  before: readonly number[],
  after: readonly number[],
  segments: Readonly<Record<string, readonly [number, number]>>,
  name: string,
): Record<string, readonly [number, number]> => {
  if (before.length !== after.length) throw new CorruptObjectError(name, 'block count changed');
  const a = blockRanges(before);
  const b = blockRanges(after);
  const out: Record<string, readonly [number, number]> = {};
  for (const [shop, seg] of Object.entries(segments)) {
    const [i, j] = blockSpan(a, seg, name);
    const x = b[i] as ByteRange;
    const z = b[j] as ByteRange;
    out[shop] = [x.offset, z.offset + z.length - x.offset];
  }
  return out;
};

export interface WithoutShop {
  readonly bytes: Buffer;
  readonly blocks: readonly number[];
  /** Old block number → new one (absent: dropped, it held only the shop's lines). */
  readonly moved: ReadonlyMap<number, number>;
}

/**
 * A shared part less one shop's lines: the blocks of its segment lose them (re-deflated, or
 * dropped when nothing else is left), every other block is copied byte for byte.
 */
export const blocksWithoutShop = (
  bytes: Uint8Array,
  blocks: readonly number[],
  segment: readonly [number, number],
  shopId: string,
  where: string,
): WithoutShop => {
  const out: Buffer[] = [];
  const moved = new Map<number, number>();
  for (const [i, b] of blockRanges(blocks).entries()) {
    const old = Buffer.from(bytes.subarray(b.offset, b.offset + b.length));
    const inside = b.offset >= segment[0] && b.offset + b.length <= segment[0] + segment[1];
    if (!inside) {
      moved.set(i, out.length);
      out.push(old);
      continue;
    }
    let inflated: Buffer;
    try {
      inflated = inflateBlocks(old);
    } catch (err) {
      throw new CorruptObjectError(where, `block at ${b.offset} does not inflate`, { cause: err });
    }
    const own = shopLines(inflated, shopId);
    const start = own.byteOffset - inflated.byteOffset;
    const left = Buffer.concat([inflated.subarray(0, start), inflated.subarray(start + own.length)]);
    if (left.length === 0) continue;
    moved.set(i, out.length);
    out.push(own.length === 0 ? old : deflateBlock(left));
  }
  return { bytes: Buffer.concat(out), blocks: out.map((m) => m.length), moved };
};
