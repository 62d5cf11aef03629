import { gunzipSync } from 'node:zlib';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import {
  blockOf,
  blockRecords,
  COLD_PREFIX,
  checkIndex,
  groupPrefix,
  gzipMemberLength,
  INDEX_FIRST_READ_BYTES,
  type IndexedJob,
  type MonthIndex,
  mergeBlocks,
  monthIndexKey,
  parseIndexHeader,
  parseMonthIndex,
  parsePartKey,
  parseSharedIndex,
  parseSharedIndexKey,
  parseSharedPartKey,
  partWrittenAt,
  pendingPrefix,
  SHARED,
  SHARED_INDEX_PREFIX,
  settledCandidates,
  settledEntry,
  sharedIndexKey,
  sharedPendingPrefix,
  shopIndexPrefix,
} from '../archive/format';
import { mapLimit } from '../concurrency';
import {
  ArchiveExpiredError,
  ArchiveNotRestoredError,
  ConcurrentModificationError,
  CorruptObjectError,
} from '../errors';
import { isNotFound, isPreconditionFailed, listAll, normalizeEtag } from '../s3/objects';
import { retentionDays } from '../settings';
import { type ArchiveEntry, entriesFromIndex, newestIndexMonths } from './entries';
import { isInvalidObjectState, restoreOnce } from './glacier';
import type { ResolvedQuery } from './query';
import { planReads, sliceMembers, type WantedMember } from './ranges';
import { fetchObject, type ReadContext } from './s3-context';

/** The archive side's I/O: month indexes (one GET each) and ranged GETs of part members. */

/** One month index as read: the job's entries in it. */
export interface MonthRead {
  readonly month: string;
  readonly key: string;
  /** The month has no shared index either (see lostSharedIndexes). */
  readonly noSharedIndex?: boolean;
  readonly entries: readonly ArchiveEntry[];
  /**
   * Settled parts that may hold the job but could not be read (past retention, missing, damaged):
   * the reader names them (a warning, or the error when nothing else answers), never "none".
   */
  readonly left?: readonly Error[];
}

/** The HTTP status of an S3 error (416: a range outside the object). */
export const statusOf = (err: unknown): number | undefined =>
  (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;

/**
 * Bytes of an index a lookup asks for first: a month whose whole index fits (most: 18–22 bytes a job
 * once compressed) costs one GET; a larger one is read as its header member plus either the record
 * block its parts' block directories name (settled parts: no more index reads) or the one entry block
 * that can hold the job — one more ranged GET, whatever the month's size.
 */
export const INDEX_PREFIX_BYTES = INDEX_FIRST_READ_BYTES;
/**
 * Reads of one month index that a concurrent rewrite (412 on a later read's If-Match) or removal
 * (404) may restart, before ConcurrentModificationError names it.
 */
export const INDEX_READ_ATTEMPTS = 3;

export const getRange = async (
  ctx: ReadContext,
  key: string,
  range: string | undefined,
  cond: { ifMatch?: string } = {},
) => {
  const out = await ctx.s3.send(
    new GetObjectCommand({
      Bucket: ctx.bucket,
      Key: key,
      ...(range ? { Range: range } : {}),
      ...(cond.ifMatch ? { IfMatch: `"${cond.ifMatch}"` } : {}),
    }),
  );
  const bytes = out.Body ? await out.Body.transformToByteArray() : new Uint8Array(0);
  ctx.ledger.received(bytes.length);
  const total = Number(/\/(\d+)$/.exec(out.ContentRange ?? '')?.[1] ?? bytes.length);
  return { bytes, etag: normalizeEtag(out.ETag), total };
};

/**
 * The index as a lookup of `jobId` needs it: whole when it fits the first read, else its header and
 * the one entry block that can hold the job. That block is left unread when it lies past the first
 * read and every part has a block directory (settled parts, or parts whose entries are their
 * records'): the directory names the record block instead (readSettled), 3 requests in all.
 */
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
  const parts = Array.isArray(header.parts) ? (header.parts as unknown[]) : [];
  const allDirectories = parts.every((p) => p !== null && typeof p === 'object' && 'dir' in p);
  // Past the first read, and no part needs its entries: the parts' directories answer.
  if (end > first.bytes.length && allDirectories) return checkIndex(mergeBlocks(header, []), key);
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

/**
 * The job's entries in the month's settled parts (format settledCandidates: by each part's block
 * directory): one ranged GET of each candidate block, kept in `ctx.blocks` for the record read that
 * follows, the entry built from the record (settledEntry). A part in a restore class gets its
 * restore requested and, once every candidate was tried, ArchiveNotRestoredError naming it is
 * thrown: whether the job is there cannot be told without it, so it is never "not archived". A
 * part past retention, missing or damaged is `left` (named by the reader), the others still answer.
 */
const readSettled = async (
  ctx: ReadContext,
  key: string,
  jobId: string,
  index: MonthIndex,
): Promise<{ entries: IndexedJob[]; left: Error[] }> => {
  const entries: IndexedJob[] = [];
  const left: Error[] = [];
  let notRestored: ArchiveNotRestoredError | undefined;
  for (const c of settledCandidates(index, jobId)) {
    const pk = c.part.key;
    const expired = expiredPart(ctx, pk);
    if (expired) {
      left.push(expired);
      continue;
    }
    // A job's platform data in the block just before (a job line longer than a block): one GET of
    // both, as the record read would ask for them.
    const pd = c.pdRange;
    const span =
      pd && pd.offset + pd.length === c.range.offset
        ? { offset: pd.offset, length: pd.length + c.range.length }
        : c.range;
    const where = `${pk} bytes ${c.range.offset}-${c.range.offset + c.range.length - 1}`;
    let got: Awaited<ReturnType<typeof fetchObject>>;
    try {
      got = await fetchObject(ctx, pk, span);
    } catch (err) {
      if (isInvalidObjectState(err)) {
        const e = await restoreOnce(ctx, pk);
        notRestored ??= e;
        continue;
      }
      if (statusOf(err) === 416) {
        left.push(new CorruptObjectError(where, 'range lies outside the part', { cause: err }));
        continue;
      }
      throw err;
    }
    if (!got) {
      left.push(new CorruptObjectError(pk, 'part is committed in its month index but does not exist'));
      continue;
    }
    if (got.bytes.length !== span.length) {
      left.push(
        new CorruptObjectError(
          where,
          `expected ${span.length} bytes, got ${got.bytes.length} (part shorter than its index says)`,
        ),
      );
      continue;
    }
    const bytes = got.bytes.subarray(span.length - c.range.length);
    let entry: IndexedJob | null;
    try {
      entry = settledEntry(c, blockRecords(bytes, where, index.shop_id), jobId, key);
    } catch (err) {
      if (err instanceof CorruptObjectError) {
        left.push(err);
        continue;
      }
      throw err;
    }
    if (entry) {
      if (span !== c.range) ctx.blocks.set(blockKey(pk, span.offset, span.length), got.bytes);
      ctx.blocks.set(blockKey(pk, c.range.offset, c.range.length), bytes);
      entries.push(entry);
    }
  }
  if (notRestored) throw notRestored;
  return { entries, left };
};

/** The cache key of a probed block (s3-context.ts `blocks`). */
const blockKey = (key: string, offset: number, length: number): string => `${key}@${offset}+${length}`;

/** GET one month index (its first bytes, plus the job's block when larger). */
const readMonthIndex = async (ctx: ReadContext, q: ResolvedQuery, month: string): Promise<MonthRead> => {
  const key = monthIndexKey(q.shopId, month);
  let first: { bytes: Uint8Array; etag: string; total: number };
  let index: MonthIndex;
  for (let attempt = 1; ; attempt++) {
    try {
      first = await getRange(ctx, key, `bytes=0-${INDEX_PREFIX_BYTES - 1}`);
    } catch (err) {
      // No index of its own: the shop-month may be packed (its view is in the month's shared index).
      if (isNotFound(err)) return readSharedView(ctx, q, month);
      throw err;
    }
    try {
      index = await lookupIndex(ctx, key, q.jobId, first);
      break;
    } catch (err) {
      // Rewritten (412) or removed (404) between the first read and a later one: read the month again.
      if (!isPreconditionFailed(err) && !isNotFound(err)) throw err;
      if (attempt >= INDEX_READ_ATTEMPTS) throw new ConcurrentModificationError(key, { cause: err });
    }
  }
  const at = { indexKey: key, shopId: q.shopId, month };
  // The index is checked (its shop and month) before any part of it is read.
  entriesFromIndex(index, at, q.jobId);
  const settled = await readSettled(ctx, key, q.jobId, index);
  return {
    month,
    key,
    entries: entriesFromIndex(index, at, q.jobId, settled.entries),
    ...(settled.left.length > 0 ? { left: settled.left } : {}),
  };
};

/** The repair a lost month index needs (docs/operations.md). */
export const reindexRepair = (shopId: string, month: string): string =>
  `jobarchive reindex --shop ${shopId} --month ${month}`;

/**
 * Parts under `partsPrefix` that are committed — no staging manifest under `stagingPrefix` names
 * them (a part still staged was never committed and is rightly invisible). 1 List of the parts
 * (empty for a month never archived); only when it holds parts, 1 List of the manifests.
 */
const committedParts = async (
  ctx: ReadContext,
  partsPrefix: string,
  stagingPrefix: string,
): Promise<number> => {
  const parts: string[] = [];
  for await (const o of listAll(ctx.s3, ctx.bucket, partsPrefix)) {
    const name = o.key.slice(partsPrefix.length);
    if (parsePartKey(o.key) && !name.includes('/')) parts.push(name);
  }
  if (parts.length === 0) return 0;
  const staged = new Set<string>();
  for await (const o of listAll(ctx.s3, ctx.bucket, stagingPrefix)) {
    const name = /\/pending\/([^/]+)\.json$/.exec(o.key)?.[1];
    if (name && !name.endsWith('.verified')) staged.add(name);
  }
  return parts.filter((p) => !staged.has(p)).length;
};

/**
 * The shop has no month index (and no view in the shared one), yet parts of its own may lie under
 * the month: then the index was lost, and answering "nothing archived" would hide them.
 * CorruptObjectError naming the index and the repair when committed parts are there.
 */
export const checkNoCommittedParts = async (
  ctx: ReadContext,
  shopId: string,
  month: string,
): Promise<void> => {
  const n = await committedParts(ctx, groupPrefix(shopId, month), pendingPrefix(shopId, month));
  if (n === 0) return;
  throw new CorruptObjectError(
    monthIndexKey(shopId, month),
    `month index is missing while ${n} committed part(s) of the month exist under ${groupPrefix(shopId, month)}: their jobs cannot be read until it is rebuilt with \`${reindexRepair(shopId, month)}\``,
  );
};

const lostSharedIndex = (month: string, n: number): CorruptObjectError =>
  new CorruptObjectError(
    sharedIndexKey(month),
    `shared index is missing while ${n} committed shared part(s) exist under ${COLD_PREFIX}${SHARED}/${month}/: the jobs of shops packed there cannot be read; no command rebuilds a shared index yet — restore the object (e.g. from a bucket version) or keep the jobs' hot copies`,
  );

/**
 * Months whose shared index is lost while committed shared parts remain: any shop packed there lost
 * its view with it. Readers ask only when nothing else answered. With the months known (those read
 * with no shared index): 1 List of each month's shared parts (+1 of its intents when there are
 * parts). Searching (`months` null): 1 List of the shared index prefix and 1 of the shared parts (per
 * 1,000 keys), months from `from` on. One CorruptObjectError per such month.
 */
export const lostSharedIndexes = async (
  ctx: ReadContext,
  months: readonly string[] | null,
  from: string | null,
): Promise<CorruptObjectError[]> => {
  if (months !== null) {
    const out: CorruptObjectError[] = [];
    for (const month of months) {
      const n = await committedParts(ctx, `${COLD_PREFIX}${SHARED}/${month}/`, sharedPendingPrefix(month));
      if (n > 0) out.push(lostSharedIndex(month, n));
    }
    return out;
  }
  const indexed = new Set<string>();
  const staged = new Set<string>();
  for await (const o of listAll(ctx.s3, ctx.bucket, SHARED_INDEX_PREFIX)) {
    const month = parseSharedIndexKey(o.key);
    if (month) indexed.add(month);
    const intent = /^job-details-index\/_shared\/(\d{4}-\d{2})\/pending\/([^/]+)\.json$/.exec(o.key);
    if (intent) staged.add(`${intent[1]}/${intent[2]}`);
  }
  const lost = new Map<string, number>();
  for await (const o of listAll(ctx.s3, ctx.bucket, `${COLD_PREFIX}${SHARED}/`)) {
    const p = parseSharedPartKey(o.key);
    if (!p || indexed.has(p.month) || (from !== null && p.month < from)) continue;
    if (staged.has(`${p.month}/${p.partName}`)) continue;
    lost.set(p.month, (lost.get(p.month) ?? 0) + 1);
  }
  return [...lost]
    .sort()
    .reverse()
    .map(([month, n]) => lostSharedIndex(month, n));
};

/**
 * A packed shop-month (docs/archive-format.md, "Shared parts"): the month's shared index, one GET of
 * the whole object, and the shop's view in it. Every entry must lie inside the shop's own segment of
 * its part, so a damaged shared index never makes us read another shop's bytes.
 */
const readSharedView = async (ctx: ReadContext, q: ResolvedQuery, month: string): Promise<MonthRead> => {
  const key = sharedIndexKey(month);
  let got: { bytes: Uint8Array };
  try {
    got = await getRange(ctx, key, undefined);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await checkNoCommittedParts(ctx, q.shopId, month);
    return { month, key: monthIndexKey(q.shopId, month), entries: [], noSharedIndex: true };
  }
  const shared = parseSharedIndex(got.bytes, key, q.shopId);
  const view = shared.views.get(q.shopId);
  if (!view) {
    await checkNoCommittedParts(ctx, q.shopId, month);
    return { month, key, entries: [] };
  }
  const entries = entriesFromIndex(view, { indexKey: key, shopId: q.shopId, month }, q.jobId);
  for (const a of entries) {
    const seg = shared.parts.find((p) => p.name === a.entry.part)?.segments[q.shopId];
    const inside = (r: { offset: number; length: number }) =>
      seg !== undefined && r.offset >= seg[0] && r.offset + r.length <= seg[0] + seg[1];
    if (!inside(a.entry) || (a.entry.platform_data && !inside(a.entry.platform_data)))
      throw new CorruptObjectError(key, `entry of job ${q.jobId} lies outside the segment of ${q.shopId}`);
  }
  return { month, key, entries };
};

/** A month whose index could not be read: damaged, or lost while its parts remain. */
export interface MonthFailure {
  readonly month: string;
  readonly error: CorruptObjectError;
}

/**
 * The given months' indexes (1 GET each, in parallel). A month whose index is damaged or lost
 * (CorruptObjectError) does not fail the others: it is returned among `failed` for the caller to
 * warn about, or to throw when nothing else answers. A settled part in a restore class
 * (ArchiveNotRestoredError) is thrown once every month was read, so each such part has its restore
 * requested in this call. Any other error propagates.
 */
export const readIndexes = async (
  ctx: ReadContext,
  q: ResolvedQuery,
  months: readonly string[],
): Promise<{ reads: MonthRead[]; failed: MonthFailure[] }> => {
  const all = await mapLimit(months, ctx.settings.readConcurrency, async (month) => {
    try {
      return await readMonthIndex(ctx, q, month);
    } catch (err) {
      if (err instanceof CorruptObjectError || err instanceof ArchiveNotRestoredError)
        return { month, error: err };
      throw err;
    }
  });
  // Every month's settled parts in a restore class got their restore requested: then the first.
  const notRestored = all.find(
    (r): r is { month: string; error: ArchiveNotRestoredError } =>
      'error' in r && r.error instanceof ArchiveNotRestoredError,
  );
  if (notRestored) throw notRestored.error;
  return {
    reads: all.filter((r): r is MonthRead => 'entries' in r),
    failed: all.filter((r): r is MonthFailure => 'error' in r),
  };
};

/**
 * The month is unknown: list the shop's index prefix (no Delimiter; pending manifests are filtered
 * out by key shape) and read the newest `searchMonths` indexes, none older than `q.searchFrom`.
 * The shop's part prefix is listed too: a month with parts and no index (a lost index) is read like
 * the others, which names it among `failed` instead of leaving it out. Costs one List per 1,000 keys
 * under each prefix plus one GET per index read.
 */
export const searchIndexes = async (
  ctx: ReadContext,
  q: ResolvedQuery,
): Promise<{ reads: MonthRead[]; failed: MonthFailure[] }> => {
  const keys: string[] = [];
  for await (const o of listAll(ctx.s3, ctx.bucket, shopIndexPrefix(q.shopId))) keys.push(o.key);
  // Months with a shared index: the shop may be packed there (one more List per 1,000 keys).
  for await (const o of listAll(ctx.s3, ctx.bucket, SHARED_INDEX_PREFIX)) keys.push(o.key);
  for await (const o of listAll(ctx.s3, ctx.bucket, `${COLD_PREFIX}${q.shopId}/`)) {
    const part = parsePartKey(o.key);
    if (part?.shopId === q.shopId) keys.push(monthIndexKey(q.shopId, part.month));
  }
  return readIndexes(ctx, q, newestIndexMonths(keys, q.shopId, ctx.settings.searchMonths, q.searchFrom));
};

/**
 * When the part passed the retention horizon (written + retentionMonths): the lifecycle rule expires
 * it then, or soon after (S3 runs lifecycle rules lazily), and the index outlives it by a month. A
 * part past the horizon is not served even while it still exists: ArchiveExpiredError, no request.
 */
export const expiredPart = (ctx: ReadContext, key: string): ArchiveExpiredError | null => {
  const written = partWrittenAt(key);
  const months = ctx.settings.retentionMonths;
  if (months <= 0 || !written) return null;
  const horizon = written.getTime() + retentionDays(months) * 86_400_000;
  return ctx.settings.clock().getTime() >= horizon
    ? new ArchiveExpiredError(key, months, written.toISOString())
    : null;
};

/** One ranged GET; a part in a Glacier class triggers (at most one) restore and ArchiveNotRestoredError. */
const readRange = async (
  ctx: ReadContext,
  key: string,
  offset: number,
  length: number,
): Promise<Uint8Array> => {
  const at = `${key} bytes ${offset}-${offset + length - 1}`;
  const expired = expiredPart(ctx, key);
  if (expired) throw expired;
  // A block a settled part's directory led the index read to: read once.
  const probed = ctx.blocks.get(blockKey(key, offset, length));
  if (probed) {
    ctx.ledger.partRead(key);
    return probed;
  }
  let got: Awaited<ReturnType<typeof fetchObject>>;
  try {
    got = await fetchObject(ctx, key, { offset, length });
  } catch (err) {
    if (isInvalidObjectState(err)) throw await restoreOnce(ctx, key);
    if (statusOf(err) === 416)
      throw new CorruptObjectError(at, 'range lies outside the part', { cause: err });
    throw err;
  }
  if (!got) throw new CorruptObjectError(key, 'part is committed in its month index but does not exist');
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
 * call; then the first ArchiveNotRestoredError is thrown. A part that is damaged, missing or expired
 * (CorruptObjectError, ArchiveExpiredError) fails only its own members: they are in `failed`, by id,
 * and the other parts are still read. Any other failure aborts at once.
 */
export const readMembers = async (
  ctx: ReadContext,
  wanted: readonly WantedMember[],
): Promise<{ bytes: Map<string, Uint8Array>; failed: Map<string, Error> }> => {
  const reads = planReads(wanted);
  const bodies = await mapLimit(reads, ctx.settings.readConcurrency, async (r) => {
    try {
      return await readRange(ctx, r.key, r.offset, r.length);
    } catch (err) {
      if (
        err instanceof ArchiveNotRestoredError ||
        err instanceof CorruptObjectError ||
        err instanceof ArchiveExpiredError
      )
        return err;
      throw err;
    }
  });
  const notRestored = bodies.find((b): b is ArchiveNotRestoredError => b instanceof ArchiveNotRestoredError);
  if (notRestored) throw notRestored;
  const failed = new Map<string, Error>();
  const ok: { read: (typeof reads)[number]; body: Uint8Array }[] = [];
  reads.forEach((read, i) => {
    const body = bodies[i];
    if (body instanceof Error) for (const m of read.members) failed.set(m.id, body);
    else if (body) ok.push({ read, body });
  });
  return {
    bytes: sliceMembers(
      ok.map((o) => o.read),
      ok.map((o) => o.body),
    ),
    failed,
  };
};
