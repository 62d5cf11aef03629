import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import {
  blockOf,
  checkIndex,
  gzipMemberLength,
  INDEX_FIRST_READ_BYTES,
  type MonthIndex,
  mergeBlocks,
  monthIndexKey,
  parseIndexHeader,
  parseMonthIndex,
  parseSharedIndex,
  partWrittenAt,
  SHARED_INDEX_PREFIX,
  sharedIndexKey,
  shopIndexPrefix,
} from '../archive/format';
import { mapLimit } from '../concurrency';
import { ArchiveExpiredError, ArchiveNotRestoredError, CorruptObjectError } from '../errors';
import { isNotFound, isPreconditionFailed, listAll, normalizeEtag } from '../s3/objects';
import { retentionDays } from '../settings';
import { type ArchiveEntry, entriesFromIndex, newestIndexMonths } from './entries';
import { isInvalidObjectState, restoreOnce } from './glacier';
import type { ResolvedQuery } from './query';
import { planReads, sliceMembers, type WantedMember } from './ranges';
import { fetchObject, type ReadContext } from './s3-context';

/** The archive side's I/O: month indexes (one GET each) and ranged GETs of part members. */

/** One month index as read: the job's entries in it, and the ETag to re-check it cheaply. */
export interface MonthRead {
  readonly month: string;
  readonly key: string;
  /** null: there is no index for that month. */
  readonly etag: string | null;
  readonly entries: readonly ArchiveEntry[];
}

const statusOf = (err: unknown): number | undefined =>
  (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;

/**
 * Bytes of an index a lookup asks for first: a month whose whole index fits (most: ~45 bytes a job
 * once compressed) costs one GET; a larger one is read as its header member plus the one block that
 * can hold the job — one more ranged GET, whatever the month's size.
 */
export const INDEX_PREFIX_BYTES = INDEX_FIRST_READ_BYTES;

export const getRange = async (
  ctx: ReadContext,
  key: string,
  range: string | undefined,
  cond: { ifNoneMatch?: string; ifMatch?: string } = {},
) => {
  const out = await ctx.s3.send(
    new GetObjectCommand({
      Bucket: ctx.bucket,
      Key: key,
      ...(range ? { Range: range } : {}),
      ...(cond.ifNoneMatch ? { IfNoneMatch: `"${cond.ifNoneMatch}"` } : {}),
      ...(cond.ifMatch ? { IfMatch: `"${cond.ifMatch}"` } : {}),
    }),
  );
  const bytes = out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
  ctx.ledger.received(bytes.length);
  const total = Number(/\/(\d+)$/.exec(out.ContentRange ?? '')?.[1] ?? bytes.length);
  return { bytes, etag: normalizeEtag(out.ETag), total };
};

/** The index as a lookup of `jobId` needs it: whole when it fits the first read, else header + one block. */
const lookupIndex = async (
  ctx: ReadContext,
  key: string,
  jobId: string,
  first: { bytes: Uint8Array; total: number; etag: string },
): Promise<MonthIndex> => {
  if (first.bytes.length >= first.total) return parseMonthIndex(first.bytes, key);
  // Later reads are of the same version (If-Match): offsets from one version never index another.
  const same = { ifMatch: first.etag };
  const whole = async () => parseMonthIndex((await getRange(ctx, key, undefined, same)).bytes, key);
  const head = gzipMemberLength(Buffer.from(first.bytes));
  if (!('length' in head)) {
    if ('bad' in head) throw new CorruptObjectError(key, `index header: ${head.bad}`);
    return whole(); // a header longer than the first read (a very long parts list)
  }
  const { header, blocks } = parseIndexHeader(first.bytes.subarray(0, head.length), key);
  // A header holding the jobs itself is all a lookup needs .
  if (blocks.length === 0)
    return header.jobs !== undefined ? checkIndex(mergeBlocks(header, []), key) : whole();
  const block = blockOf(blocks, jobId);
  if (!block) return checkIndex(mergeBlocks(header, []), key);
  const start = head.length + block.offset;
  const end = start + block.length;
  const bytes =
    end <= first.bytes.length
      ? first.bytes.subarray(start, end)
      : (await getRange(ctx, key, `bytes=${start}-${end - 1}`, same)).bytes;
  let jobs: Record<string, unknown>;
  try {
    jobs = JSON.parse(Buffer.from(gunzipSync(bytes)).toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new CorruptObjectError(key, `index block ${block.first}…${block.last} is not gzipped JSON`, {
      cause: err,
    });
  }
  return checkIndex(mergeBlocks(header, [jobs]), key);
};

/** GET one month index; with `ifNoneMatch`, an unchanged index answers 304 and 'unchanged' is returned. */
const readMonthIndex = async (
  ctx: ReadContext,
  q: ResolvedQuery,
  month: string,
  ifNoneMatch?: string,
): Promise<MonthRead | 'unchanged'> => {
  const key = monthIndexKey(q.shopId, month);
  let first: { bytes: Uint8Array; etag: string; total: number };
  let index: MonthIndex;
  for (let attempt = 1; ; attempt++) {
    try {
      first = await getRange(
        ctx,
        key,
        `bytes=0-${INDEX_PREFIX_BYTES - 1}`,
        ifNoneMatch ? { ifNoneMatch } : {},
      );
    } catch (err) {
      if (ifNoneMatch && statusOf(err) === 304) return 'unchanged';
      // No index of its own: the shop-month may be packed (its view is in the month's shared index).
      if (isNotFound(err)) return readSharedView(ctx, q, month, ifNoneMatch);
      throw err;
    }
    try {
      index = await lookupIndex(ctx, key, q.jobId, first);
      break;
    } catch (err) {
      // Rewritten between the header read and the block read: read the new version.
      if (attempt < 3 && isPreconditionFailed(err)) continue;
      throw err;
    }
  }
  return {
    month,
    key,
    etag: first.etag,
    entries: entriesFromIndex(index, { indexKey: key, shopId: q.shopId, month }, q.jobId),
  };
};

/**
 * A packed shop-month (docs/archive-format.md, "Shared parts"): the month's shared index, one GET of
 * the whole object, and the shop's view in it. Every entry must lie inside the shop's own segment of
 * its part, so a damaged shared index never makes us read another shop's bytes.
 */
const readSharedView = async (
  ctx: ReadContext,
  q: ResolvedQuery,
  month: string,
  ifNoneMatch?: string,
): Promise<MonthRead | 'unchanged'> => {
  const key = sharedIndexKey(month);
  let got: { bytes: Uint8Array; etag: string };
  try {
    got = await getRange(ctx, key, undefined, ifNoneMatch ? { ifNoneMatch } : {});
  } catch (err) {
    if (ifNoneMatch && statusOf(err) === 304) return 'unchanged';
    if (isNotFound(err)) return { month, key: monthIndexKey(q.shopId, month), etag: null, entries: [] };
    throw err;
  }
  const shared = parseSharedIndex(got.bytes, key, q.shopId);
  const view = shared.views.get(q.shopId);
  if (!view) return { month, key, etag: got.etag, entries: [] };
  const entries = entriesFromIndex(view, { indexKey: key, shopId: q.shopId, month }, q.jobId);
  for (const a of entries) {
    const seg = shared.parts.find((p) => p.name === a.entry.part)?.segments[q.shopId];
    const inside = (r: { offset: number; length: number }) =>
      seg !== undefined && r.offset >= seg[0] && r.offset + r.length <= seg[0] + seg[1];
    if (!inside(a.entry) || (a.entry.platform_data && !inside(a.entry.platform_data)))
      throw new CorruptObjectError(key, `entry of job ${q.jobId} lies outside the segment of ${q.shopId}`);
  }
  return { month, key, etag: got.etag, entries };
};

/** The given months' indexes (1 GET each, in parallel). */
export const readIndexes = async (
  ctx: ReadContext,
  q: ResolvedQuery,
  months: readonly string[],
): Promise<MonthRead[]> =>
  mapLimit(months, ctx.settings.readConcurrency, async (month) => {
    const read = await readMonthIndex(ctx, q, month);
    // Without If-None-Match S3 never answers 304.
    if (read === 'unchanged') throw new Error(`unexpected 304 for ${monthIndexKey(q.shopId, month)}`);
    return read;
  });

/** Re-reads indexes already read; an unchanged one costs a 304 and no body. */
export const recheckIndexes = async (
  ctx: ReadContext,
  q: ResolvedQuery,
  reads: readonly MonthRead[],
): Promise<MonthRead[]> =>
  mapLimit(reads, ctx.settings.readConcurrency, async (prev) => {
    const read = await readMonthIndex(ctx, q, prev.month, prev.etag ?? undefined);
    return read === 'unchanged' ? prev : read;
  });

/**
 * The month is unknown: list the shop's index prefix (no Delimiter; pending manifests are filtered
 * out by key shape) and read the newest `searchMonths` indexes, none older than `q.searchFrom`.
 * Costs one List per 1,000 keys under the prefix plus one GET per index read.
 */
export const searchIndexes = async (ctx: ReadContext, q: ResolvedQuery): Promise<MonthRead[]> => {
  const keys: string[] = [];
  for await (const o of listAll(ctx.s3, ctx.bucket, shopIndexPrefix(q.shopId))) keys.push(o.key);
  // Months with a shared index: the shop may be packed there (one more List per 1,000 keys).
  for await (const o of listAll(ctx.s3, ctx.bucket, SHARED_INDEX_PREFIX)) keys.push(o.key);
  return readIndexes(ctx, q, newestIndexMonths(keys, q.shopId, ctx.settings.searchMonths, q.searchFrom));
};

/**
 * A part its index names is gone: expired by the retention rule when it is older than the horizon
 * (the index outlives its parts by a month, so it may still name them), damage otherwise.
 */
const missingPart = (ctx: ReadContext, key: string): Error => {
  const written = partWrittenAt(key);
  const months = ctx.settings.retentionMonths;
  if (months > 0 && written) {
    const horizon = written.getTime() + retentionDays(months) * 86_400_000;
    if (ctx.settings.clock().getTime() >= horizon)
      return new ArchiveExpiredError(key, months, written.toISOString());
  }
  return new CorruptObjectError(key, 'part is committed in its month index but does not exist');
};

/** One ranged GET; a part in a Glacier class triggers (at most one) restore and ArchiveNotRestoredError. */
const readRange = async (
  ctx: ReadContext,
  key: string,
  offset: number,
  length: number,
): Promise<Uint8Array> => {
  const at = `${key} bytes ${offset}-${offset + length - 1}`;
  let got: Awaited<ReturnType<typeof fetchObject>>;
  try {
    got = await fetchObject(ctx, key, { offset, length });
  } catch (err) {
    if (isInvalidObjectState(err)) throw await restoreOnce(ctx, key);
    if (statusOf(err) === 416)
      throw new CorruptObjectError(at, 'range lies outside the part', { cause: err });
    throw err;
  }
  if (!got) throw missingPart(ctx, key);
  if (got.bytes.length !== length) {
    throw new CorruptObjectError(
      at,
      `expected ${length} bytes, got ${got.bytes.length} (part shorter than its index says)`,
    );
  }
  ctx.ledger.partRead(key);
  return got.bytes;
};

/**
 * The bytes of every wanted member, by id. Adjacent members of one part share a GET. All reads run
 * (bounded) even when one part needs a restore, so every cold part gets its restore requested in this
 * call; then the first ArchiveNotRestoredError is thrown. Any other failure aborts at once.
 */
export const readMembers = async (
  ctx: ReadContext,
  wanted: readonly WantedMember[],
): Promise<Map<string, Uint8Array>> => {
  const reads = planReads(wanted);
  const bodies = await mapLimit(reads, ctx.settings.readConcurrency, async (r) => {
    try {
      return await readRange(ctx, r.key, r.offset, r.length);
    } catch (err) {
      if (err instanceof ArchiveNotRestoredError) return err;
      throw err;
    }
  });
  const notRestored = bodies.find((b): b is ArchiveNotRestoredError => b instanceof ArchiveNotRestoredError);
  if (notRestored) throw notRestored;
  return sliceMembers(reads, bodies as Uint8Array[]);
};
