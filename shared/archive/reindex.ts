import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { listJobsObjects } from '../details/hot-listing';
import { CorruptObjectError, IndexExistsError, PackedShopMonthError } from '../errors';
import {
  getObjectBytes,
  type ListedObject,
  listAllArray,
  normalizeEtag,
  putConditional,
} from '../s3/objects';
import {
  applyCommit,
  BlockScanner,
  type ByteRange,
  decodeLine,
  documentListings,
  emptyMonthIndex,
  groupPrefix,
  type IndexedJob,
  type IndexedPart,
  inflateBlock,
  isFiltersText,
  type JobRecord,
  type Located,
  MONTH_INDEX_HEADERS,
  type MonthIndex,
  markDeleted,
  monthIndexKey,
  parseFiltersMember,
  parseMonthIndex,
  parsePartKey,
  parseSharedIndex,
  partDocFilters,
  pendingPrefix,
  serializeMonthIndex,
  settlePart,
  sharedIndexKey,
  stagedDocsByPart,
  storedDocFilters,
  type VerifiedPart,
} from './format';

/**
 * Rebuilds a lost or corrupt month index from the group's parts, which are self-describing (a header
 * record, then platform-data and job records, one gzip member each). Reads parts and staging docs,
 * writes at most the index, deletes nothing.
 */

export interface ReindexDeps {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly clock: () => Date;
}

export interface ReindexOptions {
  readonly dryRun: boolean;
  /** Overwrite an index that exists (corrupt or not), with If-Match on its ETag. */
  readonly force?: boolean;
}

export interface ExcludedPart {
  readonly key: string;
  readonly reason: string;
}

export interface ReindexResult {
  readonly index: MonthIndex;
  readonly partsIncluded: readonly IndexedPart[];
  readonly partsExcluded: readonly ExcludedPart[];
  /** The index found before the rebuild: null when there was none. */
  readonly existing: { readonly etag: string; readonly readable: boolean } | null;
  readonly written: boolean;
}

/** An index already exists and `force` was not given: nothing was written. */
/**
 * The largest member one part may hold; a member is one job's record and is held in memory while it
 * is found and decoded (the part itself is streamed, never held whole).
 */
export const MAX_MEMBER_BYTES = 256 * 1024 * 1024;

const readExisting = async (deps: ReindexDeps, shopId: string, month: string) => {
  const key = monthIndexKey(shopId, month);
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) return null;
  let readable = true;
  try {
    const idx = parseMonthIndex(got.bytes, key);
    readable = idx.shop_id === shopId && idx.month === month;
  } catch (err) {
    if (!(err instanceof CorruptObjectError)) throw err;
    readable = false;
  }
  return { etag: got.etag, readable };
};

/** What one part holds, measured from its bytes: the VerifiedPart commit would have added. */
const scanPart = async (
  deps: ReindexDeps,
  shopId: string,
  month: string,
  listed: ListedObject,
  partName: string,
  /** Filled with each job record's sources as `key size` (records name no ETags). */
  recordSources?: Map<string, string[]>,
): Promise<VerifiedPart> => {
  const fail = (reason: string): never => {
    throw new CorruptObjectError(listed.key, reason);
  };
  const out = await deps.s3.send(new GetObjectCommand({ Bucket: deps.bucket, Key: listed.key }));
  if (!out.Body) return fail('part has no body');
  const stream = out.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
  const hash = createHash('sha256');
  const scanner = new BlockScanner(MAX_MEMBER_BYTES);
  let size = 0;
  let runId: string | null = null;
  const platformData = new Map<string, Located>();
  const jobs: Array<{ record: JobRecord; at: Located; sha256: string }> = [];
  // Each member's distinct document ids: the rebuilt index gets the part's filters back.
  const memberDocs: Array<ByteRange & { docs: Set<string> }> = [];
  // The part's trailing document filters member.
  let filters: { offset: number; bytes: Buffer } | null = null;
  const take = (members: Array<{ offset: number; bytes: Buffer }>) => {
    for (const m of members) {
      if (filters) fail(`a member after the document filters (at ${m.offset})`);
      // Inflated once: to tell the filters member and to read the block's lines.
      const where = `${listed.key}@${m.offset}`;
      const inflated = inflateBlock(m.bytes, where);
      if (m.offset > 0 && isFiltersText(inflated)) {
        filters = m;
        continue;
      }
      const docs = new Set<string>();
      memberDocs.push({ offset: m.offset, length: m.bytes.length, docs });
      // A member is a block of whole lines.
      let start = 0;
      while (start < inflated.length) {
        const end = inflated.indexOf(0x0a, start);
        if (end < 0) fail(`${where}: a block ends inside a line`);
        const line = { offset: start, length: end + 1 - start };
        const { record, sha256 } = decodeLine(inflated.subarray(start, end + 1), where, shopId);
        const at: Located = { offset: m.offset, length: m.bytes.length, line };
        if (m.offset === 0 && start === 0) {
          if (record.type !== 'part') fail('first record is not the part header');
          // The header leaves the part's name to its key.
          else if (record.shop_id !== shopId || record.month !== month) {
            fail(`header names ${record.shop_id} ${record.month}`);
          } else runId = record.run_id;
        } else if (record.type === 'platform_data') {
          platformData.set(record.ref, at);
        } else if (record.type === 'job') {
          if (record.shop_id !== shopId) fail(`job ${record.job_id} is of shop ${record.shop_id}`);
          jobs.push({ record, at, sha256 });
          for (const l of documentListings(record.details)) docs.add(l.doc_id);
        } else fail(`second part header at byte ${m.offset}`);
        start = end + 1;
      }
    }
  };
  try {
    for await (const chunk of stream) {
      const buf = Buffer.from(chunk);
      size += buf.length;
      hash.update(buf);
      try {
        take(scanner.push(buf));
      } catch (err) {
        if (err instanceof CorruptObjectError) throw err;
        fail((err as Error).message);
      }
    }
    try {
      take(scanner.finish());
    } catch (err) {
      if (err instanceof CorruptObjectError) throw err;
      fail((err as Error).message);
    }
  } catch (err) {
    stream.destroy?.();
    throw err;
  }
  if (runId === null) return fail('part is empty');
  const built = partDocFilters(memberDocs);
  const stored = filters as { offset: number; bytes: Buffer } | null;
  if ((stored === null) !== (built.blocks.length === 0))
    fail(stored ? 'a document filters member, but no block lists a document' : 'no document filters member');
  if (
    stored &&
    !isDeepStrictEqual(
      storedDocFilters(parseFiltersMember(stored.bytes, listed.key)),
      storedDocFilters(built),
    )
  )
    fail('the document filters member does not describe the records');
  const etag = normalizeEtag(out.ETag) || listed.etag;
  const entries: Record<string, VerifiedPart['jobs'][string]> = {};
  for (const j of jobs) {
    if (Object.hasOwn(entries, j.record.job_id)) fail(`job ${j.record.job_id} appears twice`);
    const ref = j.record.platform_data_ref;
    const pd = ref === null ? undefined : platformData.get(ref);
    recordSources?.set(
      j.record.job_id,
      j.record.sources.map((src) => `${src.key} ${src.size}`),
    );
    entries[j.record.job_id] = {
      part: partName,
      ...j.at,
      sha256: j.sha256,
      completed_at: j.record.job.completed_at,
      platform_data: pd && ref !== null ? { ...pd, ref } : null,
      // Records name their sources without ETags (the index keeps them until deletion): a rebuilt
      // entry lists none, and delete never removes objects it cannot match.
      sources: [],
    };
  }
  return {
    part: {
      name: partName,
      key: listed.key,
      size,
      etag,
      sha256: hash.digest('hex'),
      run_id: runId,
      job_count: jobs.length,
      bytes_in: jobs.reduce((n, j) => n + j.record.sources.reduce((m, s) => m + s.size, 0), 0),
      ...(stored ? { filters: { offset: stored.offset, length: stored.bytes.length } } : {}),
    },
    jobs: entries,
  };
};

/**
 * Rebuilds the month index of `shopId` × `month` from its parts. Parts that still have a staging doc
 * (pending or verified) were never committed — commit removes those docs after its index write — and
 * are excluded, as are parts that do not decode; both are reported, neither is touched. Parts are added
 * in name order (= creation order) with the commit step's own rule (a job whose latest entry already
 * has this completed_at gets no second entry), committed_at = the part's LastModified, deleted_at null:
 * the delete step re-checks every source by key, size and ETag, so a rebuilt entry deletes nothing
 * that no longer matches.
 *
 * Unless `dryRun`, writes the index with If-None-Match; an existing index (corrupt or not) is only
 * replaced with `force`, with If-Match on the ETag read at the start (a concurrent commit → 412 →
 * ConcurrentModificationError, nothing written).
 */
export const rebuildMonthIndex = async (
  deps: ReindexDeps,
  shopId: string,
  month: string,
  opts: ReindexOptions,
): Promise<ReindexResult> => {
  const prefix = groupPrefix(shopId, month); // validates shop and month before any I/O
  const key = monthIndexKey(shopId, month);
  const existing = await readExisting(deps, shopId, month);
  if (existing && !opts.dryRun && !opts.force) throw new IndexExistsError(key);
  // A packed shop-month has no index of its own by design: writing one would hide its shared view.
  if (!existing) {
    const sharedKey = sharedIndexKey(month);
    const got = await getObjectBytes(deps.s3, deps.bucket, sharedKey);
    if (got && parseSharedIndex(got.bytes, sharedKey, shopId).views.has(shopId))
      throw new PackedShopMonthError(shopId, month, sharedKey);
  }

  const stagingPrefix = pendingPrefix(shopId, month);
  const staged = stagedDocsByPart(stagingPrefix, await listAllArray(deps.s3, deps.bucket, stagingPrefix));
  const listed = (await listAllArray(deps.s3, deps.bucket, prefix)).sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );

  let index = emptyMonthIndex(shopId, month, deps.clock().toISOString());
  const partsExcluded: ExcludedPart[] = [];
  // Per job and completion, the sources (`key size`) of every part added so far.
  const archived = new Map<string, Set<string>>();
  for (const obj of listed) {
    const parsed = parsePartKey(obj.key);
    if (!parsed || parsed.shopId !== shopId || parsed.month !== month) {
      partsExcluded.push({ key: obj.key, reason: 'not a part key' });
      continue;
    }
    if (staged.has(parsed.partName)) {
      partsExcluded.push({ key: obj.key, reason: 'has a pending staging doc: never committed' });
      continue;
    }
    let verified: VerifiedPart;
    const sources = new Map<string, string[]>();
    try {
      verified = await scanPart(deps, shopId, month, obj, parsed.partName, sources);
    } catch (err) {
      if (!(err instanceof CorruptObjectError)) throw err;
      partsExcluded.push({ key: obj.key, reason: `unreadable: ${err.reason}` });
      continue;
    }
    const committedAt = (obj.lastModified ?? deps.clock()).toISOString();
    index =
      applyCommit(index, verified, committedAt, rearchivesIn(index, verified, sources, archived)).index ??
      index;
    for (const [jobId, list] of sources) {
      const mine = `${jobId}\u0000${verified.jobs[jobId]?.completed_at}`;
      archived.set(mine, new Set([...(archived.get(mine) ?? []), ...list]));
    }
  }
  index = await settleGone(deps, { ...index, updated_at: deps.clock().toISOString() });

  let written = false;
  if (!opts.dryRun) {
    await putConditional(
      deps.s3,
      { Bucket: deps.bucket, Key: key, Body: serializeMonthIndex(index), ...MONTH_INDEX_HEADERS },
      existing?.etag ?? null,
    );
    written = true;
  }
  return { index, partsIncluded: index.parts, partsExcluded, existing, written };
};

/**
 * A rebuilt part whose jobs' hot prefixes are all empty has nothing left for a delete step to do
 * (its sources are gone, and rebuilt entries name none): its entries are marked deleted at the rebuild
 * (by no run) and the part settles (settlePart: its summary instead of entries), as the delete step
 * leaves it. A part with any object left in one of its jobs' prefixes keeps its entries undeleted,
 * so readers still read the hot prefix first. One walk of the jobs' hot prefixes (hot-listing.ts).
 */
const settleGone = async (deps: ReindexDeps, index: MonthIndex): Promise<MonthIndex> => {
  const ids = Object.keys(index.jobs);
  if (ids.length === 0) return index;
  const { objects } = await listJobsObjects(deps.s3, deps.bucket, ids);
  const byPart = new Map<string, string[]>();
  for (const [jobId, list] of Object.entries(index.jobs))
    for (const e of list) byPart.set(e.part, [...(byPart.get(e.part) ?? []), jobId]);
  let out = index;
  for (const [part, jobIds] of byPart) {
    if (jobIds.some((id) => (objects.get(id)?.length ?? 0) > 0)) continue;
    const marked = markDeleted(
      out,
      jobIds.map((jobId) => ({ jobId, part })),
      index.updated_at,
    );
    out = settlePart(marked, part);
  }
  return { ...out, updated_at: index.updated_at };
};

/** Entries per part of a rebuilt index (for reports). */
export const entriesByPart = (index: MonthIndex): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const list of Object.values(index.jobs) as (readonly IndexedJob[])[]) {
    for (const e of list) out[e.part] = (out[e.part] ?? 0) + 1;
  }
  return out;
};

/**
 * Jobs a part archived again (classify.ts `rearchive`): the same completion as the job's latest entry
 * so far, but sources the parts before it did not hold (objects rewritten or added after their
 * commit). Their entries are kept beside the earlier one — readers merge both — where a duplicate of
 * the same archival (an overlapping run's part, the same sources) is left out, as the commit step
 * leaves it out.
 */
const rearchivesIn = (
  index: MonthIndex,
  verified: VerifiedPart,
  sources: ReadonlyMap<string, readonly string[]>,
  archived: ReadonlyMap<string, ReadonlySet<string>>,
): Map<string, string> => {
  const out = new Map<string, string>();
  for (const [jobId, e] of Object.entries(verified.jobs)) {
    const entries = Object.hasOwn(index.jobs, jobId) ? index.jobs[jobId] : undefined;
    const latest = entries?.[entries.length - 1];
    if (!latest || latest.completed_at !== e.completed_at) continue;
    const before = archived.get(`${jobId}\u0000${e.completed_at}`) ?? new Set<string>();
    if ((sources.get(jobId) ?? []).some((s) => !before.has(s))) out.set(jobId, latest.part);
  }
  return out;
};
