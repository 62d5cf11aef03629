import { createHash } from 'node:crypto';
import {
  blockRanges,
  blockSpan,
  type PartDocFilters,
  parseSharedFiltersMember,
  type SharedIndex,
  type SharedPart,
  sameBlocksSegments,
  sharedFiltersMember,
  switchSharedPart,
  validatePartName,
} from '../archive/format';
import { InvalidInputError } from '../errors';
import { partBlocks, redactPart } from './redact-part';
import { type PartSwitch, switchPart } from './switch-part';

/**
 * Pure byte logic of redacting one shop's segment of a shared part (docs/archive-format.md, "Shared
 * parts"): the asked shop's segment is redacted member by member (redact-part.ts), every other shop's
 * segment is copied byte for byte and only moves (by the size change of the segments before it).
 * The switch is in two views: the asked shop's as an own part's switch (switch-part.ts, with the
 * segment's old and new start), every other shop's as forget's move (switchSharedPart).
 */
export interface RedactedSharedPart {
  readonly bytes: Buffer;
  /** sha256 (hex) of `bytes`: what the read-back must find. */
  readonly sha256: string;
  /** The new part as the shared index lists it, less what only its upload and commit know. */
  readonly part: Omit<SharedPart, 'etag' | 'run_id' | 'committed_at'>;
  /** The asked shop's view switch (without the new part's ETag, known after the upload). */
  readonly switch: Omit<PartSwitch, 'part'>;
  readonly removed: number;
}

/** null: the shop's segment does not list the document (a filter's false match). */
export const redactSharedSegment = (
  bytes: Buffer,
  part: SharedPart,
  ctx: { shopId: string; docId: string; at: string; newName: string; where: string },
): RedactedSharedPart | null => {
  validatePartName(ctx.newName);
  if (ctx.newName === part.name)
    throw new InvalidInputError('newName', 'the new part needs a name of its own');
  if (bytes.length !== part.size)
    throw new InvalidInputError('bytes', `part ${part.name} is ${part.size} bytes, got ${bytes.length}`);
  const own = part.segments[ctx.shopId];
  if (!own) throw new InvalidInputError('shopId', `part ${part.name} holds no segment of ${ctx.shopId}`);
  const oldMembers = partBlocks(bytes.subarray(own[0], own[0] + own[1]), ctx.where);
  const r = redactPart(oldMembers, { shopId: ctx.shopId, docId: ctx.docId, at: ctx.at, where: ctx.where });
  if (r.removed === 0) return null;
  // Blocks cut across shops: the segment's blocks are rewritten in place (other
  // shops' lines in them keep their bytes), every other block is copied; none moves in number.
  const before = blockRanges(part.blocks);
  const [i, j] = blockSpan(before, own, part.name);
  const blocks = [...part.blocks.slice(0, i), ...r.members.map((m) => m.length), ...part.blocks.slice(j + 1)];
  const dataEnd = part.size - (part.filters_bytes ?? 0);
  const data = Buffer.concat([
    bytes.subarray(0, own[0]),
    ...r.members,
    bytes.subarray(own[0] + own[1], dataEnd),
  ]);
  // The filters member: the shop's rebuilt from its redacted records, every other shop's with its
  // blocks at their new places (same numbers; only the segment's blocks changed length).
  const after = blockRanges(blocks);
  const number = new Map(before.map((b, n) => [b.offset, n]));
  const shops = new Map<string, PartDocFilters>();
  if (part.filters_bytes !== undefined)
    for (const [shop, f] of parseSharedFiltersMember(bytes.subarray(dataEnd), ctx.where)) {
      if (shop === ctx.shopId) continue;
      shops.set(shop, {
        ...f,
        blocks: f.blocks.map((b) => {
          const x = after[number.get(b.offset) ?? -1];
          if (!x)
            throw new InvalidInputError('bytes', `part ${part.name}: a filtered block of ${shop} is gone`);
          return { ...b, offset: x.offset, length: x.length };
        }),
      });
    }
  if (r.filters.blocks.length > 0)
    shops.set(ctx.shopId, {
      ...r.filters,
      blocks: r.filters.blocks.map((b) => ({ ...b, offset: b.offset + own[0] })),
    });
  const tail = shops.size > 0 ? sharedFiltersMember(shops) : null;
  const out = tail ? Buffer.concat([data, tail]) : data;
  return {
    bytes: out,
    sha256: createHash('sha256').update(out).digest('hex'),
    part: {
      name: ctx.newName,
      size: out.length,
      segments: sameBlocksSegments(part.blocks, blocks, part.segments, part.name),
      blocks,
      ...(tail ? { filters_bytes: tail.length } : {}),
    },
    switch: {
      oldName: part.name,
      oldMembers: oldMembers.map((m) => m.length),
      newMembers: r.members.map((m) => m.length),
      ...(tail ? { filters: { offset: data.length, length: tail.length } } : {}),
      oldBase: own[0],
      newBase: own[0],
    },
    removed: r.removed,
  };
};

/**
 * The shared index after the switch from `sw.oldName` to `next` (re-applied after a 412): the asked
 * shop's view gets its redacted entries, counts and filters, every other shop's view its segment's new
 * place. null when the index no longer lists the old part (switched already, or gone).
 */
export const switchRedactedSharedPart = (
  index: SharedIndex,
  shopId: string,
  next: SharedPart,
  sw: Omit<PartSwitch, 'part'> & { key: string },
  at: string,
): SharedIndex | null => {
  const view = index.views.get(shopId);
  const others = switchSharedPart(index, sw.oldName, shopId, next, at);
  if (!others || !view) return null;
  const own = switchPart(
    view,
    { ...sw, part: { name: next.name, key: sw.key, size: next.size, etag: next.etag } },
    at,
  );
  if (!own) return null;
  const views = new Map(others.views);
  views.set(shopId, own);
  return { ...others, views };
};
