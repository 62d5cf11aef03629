import {
  type ByteRange,
  candidateBlocks,
  checkIndex,
  gzipMemberLength,
  type IndexedPart,
  type MonthIndex,
  mergeBlocks,
  monthIndexKey,
  type PartDocFilters,
  parseFiltersMember,
  parseIndexHeader,
  parseMonthIndex,
  parseSharedFiltersMember,
  parseSharedIndex,
  sharedIndexKey,
} from '../archive/format';
import { ConcurrentModificationError, CorruptObjectError } from '../errors';
import { isNotFound, isPreconditionFailed } from '../s3/objects';
import { getRange, INDEX_PREFIX_BYTES, INDEX_READ_ATTEMPTS, statusOf } from './archive-reads';
import { isInvalidObjectState } from './glacier';
import { fetchObject, type ReadContext } from './s3-context';

/**
 * Which blocks of a month's parts may list a document, from each part's filters member (its last
 * gzip member, in the part's storage class: doc-filter.ts filtersMember). In Standard and Glacier
 * Instant Retrieval that is one ranged GET per part; a part in Flexible Retrieval or Deep Archive
 * cannot be read without a restore, so it is named (`cold`), never searched nor restored here.
 */
export interface PartCandidates {
  readonly part: string;
  /** The part's key. */
  readonly key: string;
  /**
   * 'part': its filters member was read; 'none': it has none (no block lists any document);
   * 'cold': the part is in a Glacier class that needs a restore first — not searched.
   */
  readonly filters: 'part' | 'none' | 'cold';
  /** Blocks that carry a filter (consulted). */
  readonly blocksFiltered: number;
  /** Byte ranges of the blocks whose filter may hold the document. */
  readonly blocks: readonly ByteRange[];
}

/** The month index as a search needs it: its parts (one GET of its first INDEX_PREFIX_BYTES, or all). */
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
    const head = gzipMemberLength(Buffer.from(first.bytes));
    if ('length' in head) {
      const { header } = parseIndexHeader(first.bytes.subarray(0, head.length), key);
      return checkIndex(mergeBlocks(header, []), key);
    }
    if ('bad' in head) throw new CorruptObjectError(key, `index header: ${head.bad}`);
    // A header longer than the first read (a month of very many parts): the whole index, of the same
    // version; rewritten (412) or removed (404) meanwhile, the month is read again.
    try {
      return parseMonthIndex((await getRange(ctx, key, undefined, { ifMatch: first.etag })).bytes, key);
    } catch (err) {
      if (!isPreconditionFailed(err) && !isNotFound(err)) throw err;
      if (attempt >= INDEX_READ_ATTEMPTS) throw new ConcurrentModificationError(key, { cause: err });
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

const ranges = (f: PartDocFilters, docId: string, key: string): ByteRange[] =>
  candidateBlocks(f, docId, key).flatMap((i) => {
    const b = f.blocks[i];
    return b ? [{ offset: b.offset, length: b.length }] : [];
  });

/** A part's filters member (one ranged GET), or null when the part needs a restore to be read. */
const readFilters = async (
  ctx: ReadContext,
  shopId: string,
  part: { readonly key: string; readonly shared?: true },
  at: ByteRange,
): Promise<PartDocFilters | null> => {
  let got: Awaited<ReturnType<typeof fetchObject>>;
  try {
    got = await fetchObject(ctx, part.key, at);
  } catch (err) {
    if (isInvalidObjectState(err)) return null;
    // A part shorter than its index says: damage named (the search goes on), not the S3 error.
    if (statusOf(err) === 416)
      throw new CorruptObjectError(part.key, 'document filters: range lies outside the part', { cause: err });
    throw err;
  }
  if (!got) throw new CorruptObjectError(part.key, 'committed part is missing');
  if (got.bytes.length !== at.length)
    throw new CorruptObjectError(
      part.key,
      `document filters: expected ${at.length} bytes, got ${got.bytes.length}`,
    );
  return part.shared
    ? (parseSharedFiltersMember(got.bytes, part.key).get(shopId) ?? { k: 0, blocks: [] })
    : parseFiltersMember(got.bytes, part.key);
};

/**
 * Given a shop, a month and a document id: per committed part, the blocks that may list it (a false
 * match costs a read, never a wrong answer; there are no false negatives), or `cold` for a part that
 * needs a restore first. null: the month has no index.
 */
export const documentCandidates = async (
  ctx: ReadContext,
  shopId: string,
  month: string,
  docId: string,
  /** The shop has no index of its own for the month (a listing said so): read its shared view only. */
  packed = false,
): Promise<PartCandidates[] | null> => {
  const index = await monthParts(ctx, shopId, month, packed);
  if (!index) return null;
  const out: PartCandidates[] = [];
  for (const part of index.parts) out.push(await partCandidates(ctx, shopId, part, docId));
  return out;
};

/** A month's committed parts: the shop's index, or (`packed`) its shared view; null: no index. */
export const monthParts = (ctx: ReadContext, shopId: string, month: string, packed = false) =>
  packed ? readSharedParts(ctx, shopId, month) : readMonthParts(ctx, shopId, month);

/** One committed part's candidate blocks (1 ranged GET of its filters member, none without one). */
export const partCandidates = async (
  ctx: ReadContext,
  shopId: string,
  part: IndexedPart,
  docId: string,
): Promise<PartCandidates> => {
  const at = { part: part.name, key: part.key };
  if (!part.filters) return { ...at, filters: 'none', blocksFiltered: 0, blocks: [] };
  const f = await readFilters(ctx, shopId, part, part.filters);
  if (!f) return { ...at, filters: 'cold', blocksFiltered: 0, blocks: [] };
  return { ...at, filters: 'part', blocksFiltered: f.blocks.length, blocks: ranges(f, docId, part.key) };
};
