import { type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  COLD_PREFIX,
  type DetailKind,
  documentListings,
  flattenDocuments,
  inflateBlock,
  parseMonthIndexKey,
  parsePartKey,
  parsePartRecord,
  parseSharedIndexKey,
  parseSharedPartKey,
  SHARED,
  SHARED_INDEX_PREFIX,
  shopIndexPrefix,
  shopLines,
} from '../archive/format';
import { JobDetailsStore } from '../details/store';
import { ArchiveExpiredError, CorruptObjectError, InvalidInputError } from '../errors';
import { validateMonth, validateShopId } from '../ids';
import { jobPk } from '../jobs/schema';
import { listAll } from '../s3/objects';
import { checkNoCommittedParts, expiredPart, reindexRepair, statusOf } from './archive-reads';
import { monthParts, partCandidates } from './doc-candidates';
import { fetchObject, type ReadContext } from './s3-context';

/**
 * Find by document: every job of a shop whose details list a document. Archived jobs through the
 * per-block document filters each part carries as its last member (doc-filter.ts): 1 List of the
 * shop's index prefix, per month 1 GET of the index's first 64 KB and 1 ranged GET of each part's
 * filters member, then 1 ranged GET per block whose filter matches (a month of one part: 2 requests
 * + 1 a matching block). Parts in Flexible Retrieval / Deep Archive are not searched without a
 * restore and are named in `partsNotSearched`. Hot jobs through the shop's partition of the jobs table: one Query
 * page per 1 MB of the shop's rows, then 1 List + 1 GET per flush object of each job in range.
 *
 * Never hides: the shop's parts and the shared parts are listed too (1 List per 1,000 each), so a
 * month with committed parts and no index is named in `provenance.warnings` (with its repair), as
 * are a damaged index or block, a missing part and a part past the retention horizon (not read).
 */
export interface FindDocumentQuery {
  readonly shopId: string;
  readonly docId: string;
  /** First month searched (`yyyy-mm`, inclusive). @default the shop's oldest */
  readonly from?: string;
  /** Last month searched (`yyyy-mm`, inclusive). @default the shop's newest */
  readonly to?: string;
}

export interface DocumentListing {
  readonly kind: DetailKind;
  readonly reason: string;
}

export interface DocumentJob {
  readonly jobId: string;
  /** null: the job is still running (hot only). */
  readonly completedAt: string | null;
  readonly status: string;
  readonly listings: readonly DocumentListing[];
  /** Where it was found: an archival (its month and part), the hot objects, or both. */
  readonly sources: readonly ('archive' | 'hot')[];
  readonly month: string | null;
  readonly partKey: string | null;
}

export interface FindDocumentProvenance {
  /** S3 requests (List, index and filter GETs, block and part GETs, hot List/GETs). */
  readonly requests: number;
  /** S3 bytes received. */
  readonly bytes: number;
  readonly monthsSearched: number;
  /** Committed parts searched through their filters. */
  readonly partsFiltered: number;
  /**
   * Keys of committed parts NOT searched: they lie in Glacier Flexible Retrieval / Deep Archive, where
   * even their filters need a restore. A document listed only there is not in `jobs`: restore those
   * parts (`aws s3api restore-object`, or one `jobarchive lookup` of a job in each) and search again.
   */
  readonly partsNotSearched: readonly string[];
  /** Blocks whose filter was consulted (the blocks of filtered parts that list any document). */
  readonly blocksFiltered: number;
  readonly blocksRead: number;
  /** Blocks a filter matched that did not list the document. */
  readonly falsePositiveBlocks: number;
  /** Hot side: whether it was searched, DynamoDB Query pages, read capacity units, rows and jobs read. */
  readonly hot: {
    readonly searched: boolean;
    readonly queryPages: number;
    readonly readCapacityUnits: number;
    readonly rows: number;
    readonly jobsRead: number;
  };
  /**
   * What the search could not look into, each naming the object and why: a month whose parts have
   * no index (with its repair, `jobarchive reindex`), a damaged index or block, a missing part, a
   * part past the retention horizon. Empty when everything was searched.
   */
  readonly warnings: readonly string[];
}

export interface FindDocumentResult {
  /** Newest completion first (running jobs before all). */
  readonly jobs: readonly DocumentJob[];
  readonly provenance: FindDocumentProvenance;
}

const checkMonth = (field: string, v: string | undefined): string | undefined => {
  if (v === undefined) return undefined;
  try {
    return validateMonth(v);
  } catch {
    throw new InvalidInputError(field, `expected yyyy-mm, got ${JSON.stringify(v)}`);
  }
};

export const resolveFindDocument = (q: FindDocumentQuery) => {
  const shopId = validateShopId(q.shopId);
  if (typeof q.docId !== 'string' || q.docId.length === 0)
    throw new InvalidInputError('docId', 'must be a non-empty string');
  const from = checkMonth('from', q.from);
  const to = checkMonth('to', q.to);
  if (from && to && from > to) throw new InvalidInputError('from', `${from} is after to ${to}`);
  return { shopId, docId: q.docId, from, to };
};

type Resolved = ReturnType<typeof resolveFindDocument>;

const inRange = (q: Resolved, month: string | null): boolean =>
  month === null || ((!q.from || month >= q.from) && (!q.to || month <= q.to));

class Found {
  private readonly byKey = new Map<string, DocumentJob>();

  add(j: DocumentJob): void {
    const key = `${j.jobId} ${j.completedAt ?? ''}`;
    const seen = this.byKey.get(key);
    if (!seen) {
      this.byKey.set(key, j);
      return;
    }
    const listings = [...seen.listings];
    for (const l of j.listings)
      if (!listings.some((x) => x.kind === l.kind && x.reason === l.reason)) listings.push(l);
    this.byKey.set(key, {
      ...seen,
      listings,
      sources: [...new Set([...seen.sources, ...j.sources])].sort(),
      month: seen.month ?? j.month,
      partKey: seen.partKey ?? j.partKey,
    });
  }

  newestFirst(): DocumentJob[] {
    const t = (j: DocumentJob) => j.completedAt ?? '\uffff';
    return [...this.byKey.values()].sort((a, b) =>
      t(a) !== t(b) ? (t(a) < t(b) ? 1 : -1) : a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0,
    );
  }
}

const listingsOf = (ls: readonly { kind: DetailKind; reason: string; doc_id: string }[], docId: string) =>
  ls.filter((l) => l.doc_id === docId).map(({ kind, reason }) => ({ kind, reason }));

export interface ArchiveSearchStats {
  monthsSearched: number;
  partsFiltered: number;
  partsNotSearched: string[];
  blocksFiltered: number;
  blocksRead: number;
  falsePositiveBlocks: number;
}

/** Reads one block of a part and adds the jobs in it that list the document; false: none did. */
const searchBlock = async (
  ctx: ReadContext,
  q: Resolved,
  found: Found,
  at: { shopId: string; month: string; part: string; key: string },
  block: { offset: number; length: number },
): Promise<boolean> => {
  const where = `${at.key} bytes ${block.offset}-${block.offset + block.length - 1}`;
  let got: Awaited<ReturnType<typeof fetchObject>>;
  try {
    got = await fetchObject(ctx, at.key, block);
  } catch (err) {
    if (statusOf(err) === 416)
      throw new CorruptObjectError(where, 'range lies outside the part', { cause: err });
    throw err;
  }
  if (!got) throw new CorruptObjectError(at.key, 'committed part is missing');
  if (got.bytes.length !== block.length)
    throw new CorruptObjectError(where, `expected ${block.length} bytes, got ${got.bytes.length}`);
  ctx.ledger.partRead(at.key);
  const inflated = inflateBlock(got.bytes, where);
  // A shared part's block may hold other shops' lines too (shared-blocks.ts): only this shop's count.
  const text = (parseSharedPartKey(at.key) ? shopLines(inflated, at.shopId) : inflated).toString('utf8');
  let hit = false;
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    const rec = parsePartRecord(JSON.parse(line) as unknown, where, q.shopId);
    if (rec.type !== 'job') continue;
    const ls = listingsOf(flattenDocuments(rec, at), q.docId);
    if (ls.length === 0) continue;
    hit = true;
    found.add({
      jobId: rec.job_id,
      completedAt: rec.job.completed_at,
      status: rec.job.status,
      listings: ls,
      sources: ['archive'],
      month: at.month,
      partKey: at.key,
    });
  }
  return hit;
};

/**
 * The archive side: one List of the shop's index prefix (its months), then per month its candidate
 * blocks (monthParts then partCandidates: the index's first read, 1 ranged GET of each part's filters member) and
 * 1 ranged GET per candidate block. Parts in Flexible Retrieval / Deep Archive are named in
 * `partsNotSearched`: their filters need a restore (`jobarchive search` says so; nothing is restored).
 */
const searchArchive = async (
  ctx: ReadContext,
  q: Resolved,
  found: Found,
  warnings: string[],
): Promise<ArchiveSearchStats> => {
  const stats: ArchiveSearchStats = {
    monthsSearched: 0,
    partsFiltered: 0,
    partsNotSearched: [],
    blocksFiltered: 0,
    blocksRead: 0,
    falsePositiveBlocks: 0,
  };
  const months: string[] = [];
  const pending = new Set<string>();
  for await (const o of listAll(ctx.s3, ctx.bucket, shopIndexPrefix(q.shopId))) {
    const idx = parseMonthIndexKey(o.key);
    if (idx) {
      if (inRange(q, idx.month)) months.push(idx.month);
    } else if (/\/pending\/[^/]+\.json$/.test(o.key)) pending.add(o.key);
  }
  // Months the shop has no index of its own but the month a shared one: it may be packed there
  // (docs/archive-format.md, "Shared parts"): its view is read straight from the shared index.
  const own = new Set(months);
  const packed = new Set<string>();
  const withShared = new Set<string>();
  const sharedStaged = new Set<string>();
  for await (const o of listAll(ctx.s3, ctx.bucket, SHARED_INDEX_PREFIX)) {
    const month = parseSharedIndexKey(o.key);
    if (month) withShared.add(month);
    if (month && !own.has(month) && inRange(q, month)) packed.add(month);
    const intent = /^job-details-index\/_shared\/(\d{4}-\d{2})\/pending\/([^/]+)\.json$/.exec(o.key);
    if (intent) sharedStaged.add(`${intent[1]}/${intent[2]}`);
  }
  // Shared parts of months without a shared index (1 List per 1,000): a lost shared index hides the
  // jobs of every shop packed there, this one perhaps among them — named, never silently skipped.
  const sharedLost = new Map<string, number>();
  for await (const o of listAll(ctx.s3, ctx.bucket, `${COLD_PREFIX}${SHARED}/`)) {
    const p = parseSharedPartKey(o.key);
    if (!p || withShared.has(p.month) || !inRange(q, p.month) || sharedStaged.has(`${p.month}/${p.partName}`))
      continue;
    sharedLost.set(p.month, (sharedLost.get(p.month) ?? 0) + 1);
  }
  for (const [month, n] of [...sharedLost].sort().reverse()) {
    warnings.push(
      `${SHARED_INDEX_PREFIX}${month}/shared.json: shared index is missing while ${n} committed shared part(s) of the month exist: jobs of shops packed there were not searched; no command rebuilds a shared index yet`,
    );
  }
  months.push(...packed);
  // The shop's own parts (1 List per 1,000): a month with committed parts and no index of its own
  // lost its index — its jobs cannot be searched until it is rebuilt, which the result says.
  const committedByMonth = new Map<string, number>();
  for await (const o of listAll(ctx.s3, ctx.bucket, `${COLD_PREFIX}${q.shopId}/`)) {
    const p = parsePartKey(o.key);
    if (!p || p.shopId !== q.shopId || own.has(p.month) || !inRange(q, p.month)) continue;
    if (pending.has(`${shopIndexPrefix(q.shopId)}${p.month}/pending/${p.partName}.json`)) continue;
    committedByMonth.set(p.month, (committedByMonth.get(p.month) ?? 0) + 1);
  }
  for (const [month, n] of [...committedByMonth].sort().reverse()) {
    warnings.push(
      `${shopIndexPrefix(q.shopId)}${month}/index.json: month index is missing while ${n} committed part(s) of the month exist: they were not searched; rebuild it with \`${reindexRepair(q.shopId, month)}\``,
    );
  }
  for (const month of months.sort().reverse()) {
    stats.monthsSearched++;
    let index: Awaited<ReturnType<typeof monthParts>>;
    try {
      index = await monthParts(ctx, q.shopId, month, packed.has(month));
      // Listed, then gone when read (removed meanwhile, and no view in the shared index): its
      // committed parts, if any remain, are named as a month listed without an index is.
      if (!index && own.has(month)) await checkNoCommittedParts(ctx, q.shopId, month);
    } catch (err) {
      if (!(err instanceof CorruptObjectError)) throw err;
      warnings.push(`month ${month} not searched: ${err.message}`);
      continue;
    }
    for (const part of index?.parts ?? []) {
      const at = { shopId: q.shopId, month, part: part.name, key: part.key };
      // Past the retention horizon a part is expired (served by no reader), even before the rule ran:
      // no GET of its filters.
      const expired = expiredPart(ctx, part.key);
      if (expired) {
        warnings.push(`part not searched: ${expired.message}`);
        continue;
      }
      // One part that cannot be read is named; the month's other parts are searched still.
      let p: Awaited<ReturnType<typeof partCandidates>>;
      try {
        p = await partCandidates(ctx, q.shopId, part, q.docId);
      } catch (err) {
        if (!(err instanceof CorruptObjectError)) throw err;
        warnings.push(`part not searched: ${err.message}`);
        continue;
      }
      if (p.filters === 'cold') {
        stats.partsNotSearched.push(p.key);
        continue;
      }
      try {
        stats.partsFiltered++;
        stats.blocksFiltered += p.blocksFiltered;
        for (const block of p.blocks) {
          stats.blocksRead++;
          if (!(await searchBlock(ctx, q, found, at, block))) stats.falsePositiveBlocks++;
        }
      } catch (err) {
        if (!(err instanceof CorruptObjectError || err instanceof ArchiveExpiredError)) throw err;
        warnings.push(`part not searched (whole or in part): ${err.message}`);
      }
    }
  }
  return stats;
};

/** The hot side: the shop's rows (one Query partition), then each in-range job's hot objects. */
const searchHot = async (
  ctx: ReadContext,
  q: Resolved,
  jobs: { ddb: DynamoDBDocumentClient; table: string },
  found: Found,
): Promise<FindDocumentProvenance['hot']> => {
  const out = { searched: true, queryPages: 0, readCapacityUnits: 0, rows: 0, jobsRead: 0 };
  const store = new JobDetailsStore(ctx.s3, ctx.bucket, { readConcurrency: ctx.settings.readConcurrency });
  let start: Record<string, unknown> | undefined;
  do {
    const page = await jobs.ddb.send(
      new QueryCommand({
        TableName: jobs.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': jobPk(q.shopId) },
        ProjectionExpression: 'job_id, job_status, completed_at, created_at',
        ReturnConsumedCapacity: 'TOTAL',
        ExclusiveStartKey: start,
      }),
    );
    out.queryPages++;
    out.readCapacityUnits += page.ConsumedCapacity?.CapacityUnits ?? 0;
    for (const row of page.Items ?? []) {
      out.rows++;
      const jobId = String(row.job_id);
      const completedAt = typeof row.completed_at === 'string' ? row.completed_at : null;
      const when = completedAt ?? (typeof row.created_at === 'string' ? row.created_at : null);
      if (!inRange(q, when ? when.slice(0, 7) : null)) continue;
      out.jobsRead++;
      const ls = listingsOf(
        documentListings(await store.readAllDetails(jobId)).map((l) => ({ ...l })),
        q.docId,
      );
      if (ls.length === 0) continue;
      found.add({
        jobId,
        completedAt,
        status: String(row.job_status ?? ''),
        listings: ls,
        sources: ['hot'],
        month: null,
        partKey: null,
      });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
};

export const findDocument = async (
  ctx: ReadContext,
  query: FindDocumentQuery,
  jobs?: { ddb: DynamoDBDocumentClient; table: string },
): Promise<FindDocumentResult> => {
  const q = resolveFindDocument(query);
  const found = new Found();
  // Hot before archive: a job whose hot objects are gone by the time they are read was committed
  // before their delete, hence before the index reads that follow — it cannot fall between the two.
  const hot = jobs
    ? await searchHot(ctx, q, jobs, found)
    : { searched: false, queryPages: 0, readCapacityUnits: 0, rows: 0, jobsRead: 0 };
  const warnings: string[] = [];
  const archive = await searchArchive(ctx, q, found, warnings);
  return {
    jobs: found.newestFirst(),
    provenance: {
      requests: ctx.ledger.requests,
      bytes: ctx.ledger.provenance('none').bytes,
      ...archive,
      hot,
      warnings,
    },
  };
};
