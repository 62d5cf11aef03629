import { gunzipSync } from 'node:zlib';
import {
  type ByteRange,
  candidateBlocks,
  checkIndex,
  docFilterKey,
  docsRange,
  gzipMemberLength,
  type MonthIndex,
  mergeBlocks,
  monthIndexKey,
  type PartDocFilters,
  parseDocFilters,
  parseIndexHeader,
  parseMonthIndex,
  parseSharedIndex,
  sharedIndexKey,
} from '../archive/format';
import { CorruptObjectError } from '../errors';
import { isNotFound, isPreconditionFailed } from '../s3/objects';
import { getRange, INDEX_PREFIX_BYTES } from './archive-reads';
import { fetchObject, type ReadContext } from './s3-context';

/**
 * Which blocks of a month's parts may list a document — wherever the parts' filters are kept: the
 * month index (index@5, its trailing member), a sidecar object beside it (parts built before
 * index@5), or nowhere (parts built before filters: the caller must scan them whole).
 */
export interface PartCandidates {
  readonly part: string;
  /** The part's key. */
  readonly key: string;
  /** Where its filters were found; 'none': no filters — every block is a candidate, scan the part. */
  readonly filters: 'index' | 'sidecar' | 'none';
  /** Blocks that carry a filter (consulted). */
  readonly blocksFiltered: number;
  /** Byte ranges of the blocks whose filter may hold the document (empty for 'none'). */
  readonly blocks: readonly ByteRange[];
}

/**
 * The month index as a search needs it: its parts and their filters, not the job entries. One GET of
 * the first INDEX_PREFIX_BYTES (a lookup's first read), plus — when the filter member lies beyond it —
 * one ranged GET of that member (same version, If-Match). null: the month has no index.
 */
export const readMonthParts = async (
  ctx: ReadContext,
  shopId: string,
  month: string,
): Promise<MonthIndex | null> => {
  const key = monthIndexKey(shopId, month);
  for (let attempt = 1; ; attempt++) {
    let first: Awaited<ReturnType<typeof getRange>>;
    try {
      first = await getRange(ctx, key, `bytes=0-${INDEX_PREFIX_BYTES - 1}`);
    } catch (err) {
      if (isNotFound(err)) return readSharedParts(ctx, shopId, month);
      throw err;
    }
    if (first.bytes.length >= first.total) return parseMonthIndex(first.bytes, key);
    const same = { ifMatch: first.etag };
    try {
      const head = gzipMemberLength(Buffer.from(first.bytes));
      if (!('length' in head)) {
        if ('bad' in head) throw new CorruptObjectError(key, `index header: ${head.bad}`);
        return parseMonthIndex((await getRange(ctx, key, undefined, same)).bytes, key);
      }
      const { header } = parseIndexHeader(first.bytes.subarray(0, head.length), key);
      const at = docsRange(header, key);
      if (!at) return checkIndex(mergeBlocks(header, []), key);
      const start = head.length + at.offset;
      const end = start + at.length;
      const bytes =
        end <= first.bytes.length
          ? first.bytes.subarray(start, end)
          : (await getRange(ctx, key, `bytes=${start}-${end - 1}`, same)).bytes;
      let docs: Record<string, unknown>;
      try {
        docs = JSON.parse(gunzipSync(bytes).toString('utf8')) as Record<string, unknown>;
      } catch (err) {
        throw new CorruptObjectError(key, 'index document filters are not gzipped JSON', { cause: err });
      }
      return checkIndex(mergeBlocks(header, [docs]), key);
    } catch (err) {
      // Rewritten between the two reads: read the new version.
      if (attempt < 3 && isPreconditionFailed(err)) continue;
      throw err;
    }
  }
};

/** A packed shop-month: its view of the month's shared index (one GET), or null when it has none. */
const readSharedParts = async (
  ctx: ReadContext,
  shopId: string,
  month: string,
): Promise<MonthIndex | null> => {
  const key = sharedIndexKey(month);
  let got: Awaited<ReturnType<typeof getRange>>;
  try {
    got = await getRange(ctx, key, undefined);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
  return parseSharedIndex(got.bytes, key, shopId).views.get(shopId) ?? null;
};

const ranges = (f: PartDocFilters, docId: string): ByteRange[] =>
  candidateBlocks(f, docId).flatMap((i) => {
    const b = f.blocks[i];
    return b ? [{ offset: b.offset, length: b.length }] : [];
  });

/**
 * Given a shop, a month and a document id: per committed part, the blocks that may list it (a false
 * match costs a read, never a wrong answer; there are no false negatives). `sidecars`: the sidecar
 * keys known to exist (from a listing of the shop's index prefix); without it, a part without filters
 * in the index costs one GET for its sidecar (a 404 when it has none). null: the month has no index.
 */
export const documentCandidates = async (
  ctx: ReadContext,
  shopId: string,
  month: string,
  docId: string,
  sidecars?: ReadonlySet<string>,
  /** The shop has no index of its own for the month (a listing said so): read its shared view only. */
  packed = false,
): Promise<PartCandidates[] | null> => {
  const index = packed ? await readSharedParts(ctx, shopId, month) : await readMonthParts(ctx, shopId, month);
  if (!index) return null;
  const out: PartCandidates[] = [];
  for (const part of index.parts) {
    const at = { part: part.name, key: part.key };
    if (part.doc_filters) {
      const f = part.doc_filters;
      out.push({ ...at, filters: 'index', blocksFiltered: f.blocks.length, blocks: ranges(f, docId) });
      continue;
    }
    // A shared part is always built with filters: none means no block of this shop's segment lists a
    // document (never scan it whole — the other segments are other shops').
    if (part.shared) {
      out.push({ ...at, filters: 'index', blocksFiltered: 0, blocks: [] });
      continue;
    }
    const fkey = docFilterKey(shopId, month, part.name);
    const got = !sidecars || sidecars.has(fkey) ? await fetchObject(ctx, fkey) : null;
    if (got) {
      const f = parseDocFilters(got.bytes, fkey);
      out.push({ ...at, filters: 'sidecar', blocksFiltered: f.blocks.length, blocks: ranges(f, docId) });
    } else out.push({ ...at, filters: 'none', blocksFiltered: 0, blocks: [] });
  }
  return out;
};
