import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../errors';
import { inflateBlocks } from './codec';
import {
  type PartDocFilters,
  parseSharedFiltersMember,
  partDocFilters,
  sharedFiltersMember,
} from './doc-filter';
import { sharedPartKey, validatePartName } from './keys';
import {
  type ByteRange,
  type IndexedJob,
  type IndexedPart,
  jobEntries,
  type MonthIndex,
} from './month-index';
import { blockRanges, blockSpan, blocksWithoutShop, jobDocs, linesOf, shopLines } from './shared-blocks';
import type { SharedIndex, SharedPart } from './shared-index';

/**
 * Removing one shop from a shared part (docs/archive-format.md, "Removing one shop from a shared
 * part"): pure, in two halves so the index switch can be re-applied to a fresher index after a 412.
 *
 * `sharedPartWithoutShop` builds the new part: the old bytes less the shop's lines (blocksWithoutShop:
 * only blocks shared with it are re-deflated, every other block is copied byte for byte, no record is
 * re-encoded). `null` bytes: the shop was alone in it.
 */
export interface PartWithoutShop {
  /** The new part's bytes (null: nothing left, the old part is only deleted). */
  readonly bytes: Buffer | null;
  /** sha256 (hex) of `bytes`: what the read-back must find. */
  readonly sha256: string | null;
  /** The new part as the shared index lists it, less what only its upload and commit know. */
  readonly part: Omit<SharedPart, 'etag' | 'run_id' | 'committed_at'> | null;
}

export const sharedPartWithoutShop = (
  bytes: Uint8Array,
  part: SharedPart,
  shopId: string,
  newName: string,
): PartWithoutShop => {
  validatePartName(newName);
  if (newName === part.name) throw new InvalidInputError('newName', 'the new part needs a name of its own');
  if (bytes.length !== part.size)
    throw new InvalidInputError('bytes', `part ${part.name} is ${part.size} bytes, got ${bytes.length}`);
  if (!Object.hasOwn(part.segments, shopId))
    throw new InvalidInputError('shopId', `part ${part.name} holds no segment of ${shopId}`);
  const kept = Object.entries(part.segments)
    .filter(([shop]) => shop !== shopId)
    .sort(([, a], [, b]) => a[0] - b[0]);
  if (kept.length === 0) return { bytes: null, sha256: null, part: null };
  return withoutShopsLines(bytes, part, shopId, newName);
};

/**
 * The shop's lines leave the blocks of its segment (those
 * blocks re-deflated, or dropped when nothing is left), every other block is copied byte for byte;
 * each other shop's segment is its same blocks where they now lie.
 */
const withoutShopsLines = (
  bytes: Uint8Array,
  part: SharedPart,
  shopId: string,
  newName: string,
): PartWithoutShop => {
  const r = blocksWithoutShop(
    bytes,
    part.blocks,
    part.segments[shopId] as readonly [number, number],
    shopId,
    part.name,
  );
  const before = blockRanges(part.blocks);
  const after = blockRanges(r.blocks);
  const segments: Record<string, readonly [number, number]> = {};
  for (const [shop, seg] of Object.entries(part.segments)) {
    if (shop === shopId) continue;
    const [first, last] = blockSpan(before, seg, part.name);
    const a = after[r.moved.get(first) ?? -1];
    const z = after[r.moved.get(last) ?? -1];
    if (!a || !z) throw new InvalidInputError('bytes', `part ${part.name}: a block of ${shop} was dropped`);
    segments[shop] = [a.offset, z.offset + z.length - a.offset];
  }
  // The filters member: every other shop's filters, each block at its new place (its documents are
  // the same: only the removed shop's lines left a block).
  let tail: Buffer | null = null;
  if (part.filters_bytes !== undefined) {
    const old = parseSharedFiltersMember(bytes.subarray(part.size - part.filters_bytes), part.name);
    const number = new Map(before.map((b, i) => [b.offset, i]));
    const kept = new Map<string, PartDocFilters>();
    for (const [shop, f] of old) {
      if (shop === shopId) continue;
      kept.set(shop, {
        ...f,
        blocks: f.blocks.map((b) => {
          const x = after[r.moved.get(number.get(b.offset) ?? -1) ?? -1];
          if (!x)
            throw new InvalidInputError(
              'bytes',
              `part ${part.name}: a filtered block of ${shop} was dropped`,
            );
          return { ...b, offset: x.offset, length: x.length };
        }),
      });
    }
    if (kept.size > 0) tail = sharedFiltersMember(kept);
  }
  const out = tail ? Buffer.concat([r.bytes, tail]) : r.bytes;
  return {
    bytes: out,
    sha256: createHash('sha256').update(out).digest('hex'),
    part: {
      name: newName,
      size: out.length,
      segments,
      blocks: r.blocks,
      ...(tail ? { filters_bytes: tail.length } : {}),
    },
  };
};

/**
 * Where each block of `shop`'s segment in `old` lies in `next`: the same blocks in order (a shop's
 * blocks are never dropped while it has lines; their lengths change when another shop's lines left).
 */
const segmentMove = (
  old: SharedPart,
  next: Pick<SharedPart, 'name' | 'segments' | 'blocks'>,
  shop: string,
): ((r: ByteRange) => ByteRange) => {
  const from = old.segments[shop];
  const to = next.segments[shop];
  if (!from || !to)
    throw new InvalidInputError('shopId', `no segment of ${shop} in ${old.name} and ${next.name}`);
  const a = blockRanges(old.blocks);
  const b = blockRanges(next.blocks);
  const [i, j] = blockSpan(a, from, old.name);
  const [k, l] = blockSpan(b, to, next.name);
  if (j - i !== l - k)
    throw new InvalidInputError('part', `the segment of ${shop} changed its number of blocks`);
  const map = new Map<number, ByteRange>();
  for (let n = 0; n <= j - i; n++) map.set((a[i + n] as ByteRange).offset, b[k + n] as ByteRange);
  return (r) => {
    const m = map.get(r.offset);
    if (!m) throw new InvalidInputError('part', `${old.name}: no block of ${shop} at ${r.offset}`);
    return { ...r, offset: m.offset, length: m.length };
  };
};

/** A view's entries of part `from` moved to part `to`, each block range by `move`. */
const movedView = (
  view: MonthIndex,
  from: string,
  to: IndexedPart,
  move: (r: ByteRange) => ByteRange,
): MonthIndex => {
  const shift = <T extends ByteRange>(r: T): T => ({ ...r, ...move(r) });
  const jobs: Record<string, readonly IndexedJob[]> = {};
  for (const jobId of Object.keys(view.jobs)) {
    jobs[jobId] = jobEntries(view.jobs, jobId).map((e) =>
      e.part === from
        ? { ...shift(e), part: to.name, platform_data: e.platform_data ? shift(e.platform_data) : null }
        : e,
    );
  }
  return { ...view, parts: view.parts.map((p) => (p.name === from ? to : p)), jobs };
};

/** A view less part `name` and its entries (jobs left without any entry drop out). */
const withoutPart = (view: MonthIndex, name: string): MonthIndex => {
  const jobs: Record<string, readonly IndexedJob[]> = {};
  for (const jobId of Object.keys(view.jobs)) {
    const left = jobEntries(view.jobs, jobId).filter((e) => e.part !== name);
    if (left.length > 0) jobs[jobId] = left;
  }
  return { ...view, parts: view.parts.filter((p) => p.name !== name), jobs };
};

/**
 * The shared index after the switch from part `oldName` to `next` (the half re-applied on a 412):
 * the shop's view loses the part (the shop leaves the index with no part left), every other shop's
 * view points at its segment in the new part. `null` when the index no longer lists the old part
 * (switched already, by this or another writer).
 */
export const switchSharedPart = (
  index: SharedIndex,
  oldName: string,
  shopId: string,
  next: SharedPart | null,
  at: string,
): SharedIndex | null => {
  const old = index.parts.find((p) => p.name === oldName);
  if (!old) return null;
  const views = new Map(index.views);
  for (const shop of Object.keys(old.segments)) {
    const view = views.get(shop);
    if (!view) continue;
    const seg = next?.segments[shop];
    if (shop === shopId || !next || !seg) {
      const left = withoutPart(view, oldName);
      if (left.parts.length === 0) views.delete(shop);
      else views.set(shop, { ...left, updated_at: at });
      continue;
    }
    const before = view.parts.find((p) => p.name === oldName);
    if (!before) continue;
    const move = segmentMove(old, next, shop);
    const to = switchedPart(before, next, index.month);
    views.set(shop, { ...movedView(view, oldName, to, move), updated_at: at });
  }
  const parts = index.parts.flatMap((p) => (p.name !== oldName ? [p] : next ? [next] : []));
  return { month: index.month, updated_at: at, parts, views };
};

/**
 * A damaged shared part's repair (docs/erasure.md, "A damaged shared part"): the blocks that do not
 * inflate (gzip CRC-32 / length: their records cannot be read by anyone) are dropped, every other block
 * copied byte for byte; each shop's segment is its surviving blocks where they now lie (a shop left
 * with none leaves the part). Pure. Only parts of their committed size. The repair's filters member is
 * rebuilt from the surviving blocks (repairedFilters).
 */
export interface PartWithoutDamage {
  /** The new part's bytes (null: no block survived, the old part is only deleted). */
  readonly bytes: Buffer | null;
  readonly sha256: string | null;
  readonly part: Omit<SharedPart, 'etag' | 'run_id' | 'committed_at'> | null;
  /** Offsets (in the old part) of the blocks dropped. */
  readonly dropped: readonly number[];
  /** Old block offset → the block's range in the new part (surviving blocks only). */
  readonly moves: ReadonlyMap<number, ByteRange>;
}

/** Offsets of the blocks of a shared part that do not inflate (none: the part is intact). */
export const damagedBlocks = (bytes: Uint8Array, part: SharedPart): number[] => {
  if (bytes.length !== part.size)
    throw new InvalidInputError(
      'bytes',
      `part ${part.name} is ${part.size} bytes as committed, ${bytes.length} stored: its blocks cannot be located`,
    );
  return blockRanges(part.blocks).flatMap((b) => {
    try {
      inflateBlocks(bytes.subarray(b.offset, b.offset + b.length));
      return [];
    } catch {
      return [b.offset];
    }
  });
};

/** The shops whose segments hold the block at `offset`. */
export const shopsOfBlock = (part: SharedPart, offset: number): string[] =>
  Object.entries(part.segments)
    .filter(([, [o, l]]) => offset >= o && offset < o + l)
    .map(([shop]) => shop);

export const sharedPartWithoutDamage = (
  bytes: Uint8Array,
  part: SharedPart,
  newName: string,
): PartWithoutDamage => {
  validatePartName(newName);
  if (newName === part.name) throw new InvalidInputError('newName', 'the new part needs a name of its own');
  const dropped = new Set(damagedBlocks(bytes, part));
  const before = blockRanges(part.blocks ?? []);
  const out: Buffer[] = [];
  const moves = new Map<number, ByteRange>();
  let at = 0;
  for (const b of before) {
    if (dropped.has(b.offset)) continue;
    out.push(Buffer.from(bytes.subarray(b.offset, b.offset + b.length)));
    moves.set(b.offset, { offset: at, length: b.length });
    at += b.length;
  }
  const segments: Record<string, readonly [number, number]> = {};
  for (const [shop, seg] of Object.entries(part.segments)) {
    const [first, last] = blockSpan(before, seg, part.name);
    const kept = before.slice(first, last + 1).flatMap((b) => {
      const m = moves.get(b.offset);
      return m ? [m] : [];
    });
    const a = kept[0];
    const z = kept[kept.length - 1];
    if (a && z) segments[shop] = [a.offset, z.offset + z.length - a.offset];
  }
  if (out.length === 0 || Object.keys(segments).length === 0)
    return { bytes: null, sha256: null, part: null, dropped: [...dropped], moves };
  const tail = repairedFilters(bytes, part, before, moves, segments);
  const body = Buffer.concat(tail ? [...out, tail] : out);
  return {
    bytes: body,
    sha256: createHash('sha256').update(body).digest('hex'),
    part: {
      name: newName,
      size: body.length,
      segments,
      blocks: out.map((b) => b.length),
      ...(tail ? { filters_bytes: tail.length } : {}),
    },
    dropped: [...dropped],
    moves,
  };
};

/**
 * The repaired part's filters member, rebuilt from its surviving blocks (the damaged part's member may
 * name dropped blocks, or be damaged itself): each shop's documents per block at its new place, so a
 * search finds every document the repair kept. Null when no surviving record lists a document.
 */
const repairedFilters = (
  bytes: Uint8Array,
  part: SharedPart,
  before: readonly ByteRange[],
  moves: ReadonlyMap<number, ByteRange>,
  segments: Readonly<Record<string, readonly [number, number]>>,
): Buffer | null => {
  const byShop = new Map<string, PartDocFilters>();
  for (const [shop, seg] of Object.entries(part.segments)) {
    if (!segments[shop]) continue;
    const [first, last] = blockSpan(before, seg, part.name);
    const blocks = before.slice(first, last + 1).flatMap((b) => {
      const to = moves.get(b.offset);
      if (!to) return [];
      const lines = shopLines(inflateBlocks(bytes.subarray(b.offset, b.offset + b.length)), shop);
      const docs = new Set(
        linesOf(lines).flatMap((l) => jobDocs(lines.subarray(l.offset, l.offset + l.length), part.name)),
      );
      return [{ ...to, docs }];
    });
    const f = partDocFilters(blocks);
    if (f.blocks.length > 0) byShop.set(shop, f);
  }
  return byShop.size > 0 ? sharedFiltersMember(byShop) : null;
};

/**
 * A shop view's entry for the part that replaces `before`'s: the new part's name, key, size, ETag and
 * filters member (every shop's: a search takes this shop's from it).
 */
const switchedPart = (before: IndexedPart, next: SharedPart, month: string): IndexedPart => {
  const { filters: _old, ...kept } = before;
  return {
    ...kept,
    ...(next.filters_bytes !== undefined
      ? { filters: { offset: next.size - next.filters_bytes, length: next.filters_bytes } }
      : {}),
    name: next.name,
    key: sharedPartKey(month, next.name),
    size: next.size,
    etag: next.etag,
  };
};

/**
 * The shared index after the switch from damaged part `oldName` to its repair `next` (re-applied on a
 * 412): every view's entries in the part move with their blocks; an entry whose record or platform
 * data was in a dropped block goes (the view loses the part when none is left, the index the view
 * when it has no part). `dropped`: the entries that went, per shop. `index` null when the old part is
 * no longer listed.
 */
export const switchRepairedPart = (
  index: SharedIndex,
  oldName: string,
  next: SharedPart | null,
  moves: ReadonlyMap<number, ByteRange>,
  at: string,
): { index: SharedIndex | null; dropped: Readonly<Record<string, number>> } => {
  const old = index.parts.find((p) => p.name === oldName);
  if (!old) return { index: null, dropped: {} };
  const dropped: Record<string, number> = {};
  const moved = <T extends ByteRange>(r: T): T | null => {
    const m = moves.get(r.offset);
    return m && next ? { ...r, offset: m.offset, length: m.length } : null;
  };
  const views = new Map(index.views);
  for (const shop of Object.keys(old.segments)) {
    const view = views.get(shop);
    const before = view?.parts.find((p) => p.name === oldName);
    if (!view || !before) continue;
    const jobs: Record<string, readonly IndexedJob[]> = {};
    let kept = 0;
    for (const jobId of Object.keys(view.jobs)) {
      const entries = jobEntries(view.jobs, jobId).flatMap((e): IndexedJob[] => {
        if (e.part !== oldName) return [e];
        const record = moved(e);
        const pd = e.platform_data ? moved(e.platform_data) : null;
        if (!record || (e.platform_data && !pd)) {
          dropped[shop] = (dropped[shop] ?? 0) + 1;
          return [];
        }
        kept++;
        return [{ ...record, part: (next as SharedPart).name, platform_data: pd }];
      });
      if (entries.length > 0) jobs[jobId] = entries;
    }
    if (!next || kept === 0 || !next.segments[shop]) {
      const left = withoutPart({ ...view, jobs }, oldName);
      if (left.parts.length === 0) views.delete(shop);
      else views.set(shop, { ...left, updated_at: at });
      continue;
    }
    // The repair's filters member was rebuilt from its surviving blocks.
    const to = switchedPart(before, next, index.month);
    views.set(shop, {
      ...view,
      jobs,
      parts: view.parts.map((p) => (p.name === oldName ? to : p)),
      updated_at: at,
    });
  }
  const parts = index.parts.flatMap((p) => (p.name !== oldName ? [p] : next ? [next] : []));
  return { index: { month: index.month, updated_at: at, parts, views }, dropped };
};
