import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobRecord } from '../archive/format';
import { INLINE_PLATFORM_DATA, type InlineDetails, parseInlineDetails } from '../details/inline';
import { ArchiveExpiredError, CorruptObjectError, InvalidInputError } from '../errors';
import { itemToJson } from '../jobs/row-json';
import { lostSharedIndexes, type MonthRead, readIndexes, readMembers, searchIndexes } from './archive-reads';
import { choosePlatformData, combineDetails, combineSources } from './combine';
import { type ArchiveEntry, hotPlan, latestWithPlatformData, orderEntries } from './entries';
import { type FindDocumentQuery, type FindDocumentResult, findDocument } from './find-document';
import { type HotRead, readHot, readHotPlatformData } from './hot-reads';
import { type ReaderSettings, type ResolvedQuery, readerSettings, resolveQuery } from './query';
import type { WantedMember } from './ranges';
import { newReadContext, type ReadContext } from './s3-context';
import type {
  DetailsResult,
  JobDetailsReaderOptions,
  JobLookup,
  JobQuery,
  PlatformDataResult,
} from './types';
import { checkJobMember, checkPlatformMember } from './verify';

/**
 * Reads a job's details wherever they are: hot objects under `job-details/{job_id}/`, archive parts
 * found through the month indexes, or both merged. Needs S3 only (no DynamoDB), so it works after
 * the job row has expired.
 *
 * Cost, in S3 requests (each result's `provenance.requests` is the exact count):
 * - hot side, always first: 1 List of the job's prefix + 1 GET per object listed (none for a job
 *   whose hot objects were deleted). Read before the indexes because the archiver commits before it
 *   deletes: an object gone by the time we read it is in the indexes we read next, and an object
 *   written after the job's archival (a late flush) is read, never skipped.
 * - month known (`completedAt` or `months`): 1 GET per month index + 1 ranged GET per archival of
 *   the job — 3 requests in all for the usual archived job. A month with no index costs 1 more List
 *   (its part prefix: parts there mean the index was lost).
 * - month unknown: a bounded search — 1 List per 1,000 keys under `job-details-index/{shop}/`, the
 *   shared index prefix and `job-details-cold/{shop}/`, then at most `searchMonths` (default 24)
 *   index GETs, newest month first, collecting every archival of the job (a retried job can be
 *   archived in several months). Archivals in older months are not found; pass `months` to reach them.
 * - platform data: hot `platform-data.json` first (1 GET; when present it is the newest), else the
 *   newest archival's platform-data member (index GETs + 1 ranged GET).
 *
 * Readers never hide: an archival whose part is damaged, missing or past the retention horizon
 * (`retentionMonths`: not served even while the lifecycle rule has not removed it yet), and a month
 * whose index is damaged or lost, are left out with a message in `provenance.warnings` (a lost
 * index names its repair, `jobarchive reindex`) while anything else answers — other archivals, hot
 * objects, the row's inline details. With nothing else left the first such error is thrown
 * (CorruptObjectError, ArchiveExpiredError).
 *
 * Every member read is checked against its index entry (sha256, shop, job): CorruptObjectError
 * otherwise. A part in Glacier Flexible Retrieval / Deep Archive gets a RestoreObject and the read
 * throws ArchiveNotRestoredError (retry once the restore is done). Parts not committed to a month
 * index do not exist for the reader.
 */
export class JobDetailsReader {
  private readonly settings: ReaderSettings;

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    opts: JobDetailsReaderOptions = {},
  ) {
    if (typeof bucket !== 'string' || bucket.trim() === '') {
      throw new InvalidInputError('bucket', 'must be a non-empty bucket name');
    }
    this.settings = readerSettings(opts);
  }

  /**
   * Every job of a shop whose details list a document, newest first, with provenance: archived ones
   * through the per-block document filters (shared/reader/find-document.ts), hot ones through the
   * shop's partition of the jobs table when `jobs` is given (the reader itself needs S3 only).
   */
  async findDocument(
    q: FindDocumentQuery,
    jobs?: { ddb: DynamoDBDocumentClient; table: string },
  ): Promise<FindDocumentResult> {
    return findDocument(newReadContext(this.s3, this.bucket, this.settings), q, jobs);
  }

  /** All details of the job, hot and archived, merged and deduplicated. */
  async readAllDetails(q: JobQuery): Promise<DetailsResult> {
    const rq = resolveQuery(q, this.settings.searchMonths);
    const inline = inlineOf(q);
    const ctx = newReadContext(this.s3, this.bucket, this.settings);
    const gathered = await this.gather(ctx, rq, false);
    const { records, hot } = await this.readArchived(ctx, rq, gathered, undefined, inline);
    const { details, source } = combineDetails(
      records,
      hot.flushes.map((f) => f.payload),
      inline.details,
    );
    return { details, provenance: ctx.ledger.provenance(source, detailAttributes(inline)) };
  }

  /** The job's platform data: hot platform-data.json when present, else the newest archived one. */
  async readPlatformData(q: JobQuery): Promise<PlatformDataResult> {
    const rq = resolveQuery(q, this.settings.searchMonths);
    const inline = inlineOf(q);
    const ctx = newReadContext(this.s3, this.bucket, this.settings);
    // The dual-read prefers the row: a pre-migration row's platform_data costs no request.
    if (inline.platformData !== null) {
      return { data: inline.platformData, provenance: ctx.ledger.provenance('row', [INLINE_PLATFORM_DATA]) };
    }
    // Hot first: it is the newest, and reading it before the indexes means an archival committed
    // meanwhile (which precedes any delete) is in the indexes we read next.
    const hot = await readHotPlatformData(ctx, rq);
    if (hot !== null) return { data: hot, provenance: ctx.ledger.provenance('hot') };
    const { reads, failed } =
      rq.months !== null ? await readIndexes(ctx, rq, rq.months) : await searchIndexes(ctx, rq);
    const latest = latestWithPlatformData(entriesOf(reads));
    const damage: unknown[] = [...failed.map((f) => f.error), ...reads.flatMap((r) => r.left ?? [])];
    damage.push(...(await lostShared(ctx, rq, reads, latest !== undefined || damage.length > 0)));
    if (!latest) {
      if (damage.length > 0) throw damage[0];
      return { data: null, provenance: ctx.ledger.provenance('none') };
    }
    // With its job record: an entry leaves the platform data's ref to the record (usually the
    // same block, fetched once).
    // Nothing hot to fall back on here: damage to the platform data itself is the read's error.
    const { platformData } = await this.readMembers(ctx, rq, [latest], latest, damage);
    if (platformData === null && damage.length > 0) throw damage[0];
    for (const err of distinct(damage)) ctx.ledger.warn(warning(err));
    return { data: platformData, provenance: ctx.ledger.provenance('archive') };
  }

  /**
   * Details and platform data with shared index reads, plus what the archive knows about the job
   * (every archival, the row as archived). For forensic lookups (the CLI).
   */
  async lookup(q: JobQuery): Promise<JobLookup> {
    const rq = resolveQuery(q, this.settings.searchMonths);
    const inline = inlineOf(q);
    const ctx = newReadContext(this.s3, this.bucket, this.settings);
    const gathered = await this.gather(ctx, rq, true);
    const { entries } = gathered;
    const platformEntry =
      gathered.hot.platformData || inline.platformData !== null ? undefined : latestWithPlatformData(entries);
    const { records, byEntry, platformData, hot } = await this.readArchived(
      ctx,
      rq,
      gathered,
      platformEntry,
      inline,
    );
    const details = combineDetails(
      records,
      hot.flushes.map((f) => f.payload),
      inline.details,
    );
    const pd = choosePlatformData(hot.platformData, platformData, inline.platformData);
    const newest = records[records.length - 1];
    return {
      details: details.details,
      platformData: pd.data,
      archivedJob: newest?.job ?? null,
      archivedRow: newest?.row ?? null,
      archivals: entries.map((e, i) => ({
        month: e.month,
        partKey: e.partKey,
        entry: e.entry,
        status: byEntry[i]?.job.status ?? null,
      })),
      hotKeys: hot.keys,
      detailsSource: details.source,
      platformDataSource: pd.source,
      provenance: ctx.ledger.provenance(combineSources(details.source, pd.source), inline.attributes),
    };
  }

  /**
   * The job's hot objects, then its archive entries (oldest first) — in that order, so an archival
   * committed while we read cannot hide what it deleted (the archiver commits before it deletes).
   * Months whose index is damaged or lost are returned as `damage`, not thrown.
   */
  private async gather(ctx: ReadContext, rq: ResolvedQuery, withPlatformData: boolean): Promise<Gathered> {
    const hot = await readHot(ctx, rq, withPlatformData);
    const { reads, failed } =
      rq.months !== null ? await readIndexes(ctx, rq, rq.months) : await searchIndexes(ctx, rq);
    const entries = entriesOf(reads);
    const late = lateHotObjects(rq, entries, hot);
    if (late) ctx.ledger.warn(late);
    const damage: unknown[] = [...failed.map((f) => f.error), ...reads.flatMap((r) => r.left ?? [])];
    if (!hasAnything(hot))
      damage.push(...(await lostShared(ctx, rq, reads, entries.length > 0 || damage.length > 0)));
    return { entries, hot, damage };
  }

  /**
   * The entries' records, verified (see `readMembers`). An archival that cannot be read (damaged,
   * missing, expired) and a month whose index cannot be read are left out with a warning as long as
   * anything else answers: the other archivals, the hot objects, the row's inline details. With
   * nothing left, the first such error is thrown.
   */
  private async readArchived(
    ctx: ReadContext,
    rq: ResolvedQuery,
    gathered: Gathered,
    platformEntry: ArchiveEntry | undefined,
    inline: InlineDetails,
  ): Promise<{
    records: JobRecord[];
    byEntry: ReadonlyArray<JobRecord | null>;
    platformData: unknown | null;
    hot: HotRead;
  }> {
    const damage: unknown[] = [...gathered.damage];
    const read = await this.readMembers(ctx, rq, gathered.entries, platformEntry, damage);
    const out = { ...read, hot: gathered.hot };
    if (damage.length === 0) return out;
    const answered =
      read.records.length > 0 ||
      read.platformData !== null ||
      hasAnything(gathered.hot) ||
      inline.details !== null ||
      inline.platformData !== null;
    if (!answered) throw damage[0];
    for (const err of distinct(damage)) ctx.ledger.warn(warning(err));
    return out;
  }

  /** Ranged GETs of the entries' job records (and one platform-data member), verified. */
  private async readMembers(
    ctx: ReadContext,
    rq: ResolvedQuery,
    entries: readonly ArchiveEntry[],
    platformEntry: ArchiveEntry | undefined,
    damage: unknown[],
  ): Promise<{
    records: JobRecord[];
    byEntry: ReadonlyArray<JobRecord | null>;
    platformData: unknown | null;
  }> {
    const wanted: WantedMember[] = entries.map((e, i) => ({
      id: `job:${i}`,
      key: e.partKey,
      offset: e.entry.offset,
      length: e.entry.length,
    }));
    const pd = platformEntry?.entry.platform_data;
    if (pd) wanted.push({ id: 'platform', key: platformEntry.partKey, offset: pd.offset, length: pd.length });
    if (wanted.length === 0) return { records: [], byEntry: [], platformData: null };

    const { bytes, failed } = await readMembers(ctx, wanted);
    const member = (id: string): Uint8Array => bytes.get(id) ?? new Uint8Array(0);
    const checked = entries.map((e, i) => {
      const unread = failed.get(`job:${i}`);
      if (unread) {
        damage.push(unread);
        return null;
      }
      try {
        return checkJobMember(member(`job:${i}`), e, rq.shopId, rq.jobId);
      } catch (err) {
        if (!(err instanceof CorruptObjectError)) throw err;
        damage.push(err);
        return null;
      }
    });
    // An entry names no platform ref: the job record of the same entry does.
    const jobRef = platformEntry
      ? (checked[entries.indexOf(platformEntry)]?.platform_data_ref ?? null)
      : null;
    let platformData: unknown | null = null;
    const pdUnread = failed.get('platform');
    if (pdUnread) damage.push(pdUnread);
    else if (platformEntry && pd) {
      try {
        platformData = checkPlatformMember(member('platform'), platformEntry, jobRef, rq.shopId);
      } catch (err) {
        if (!(err instanceof CorruptObjectError)) throw err;
        damage.push(err);
      }
    }
    return { records: checked.filter((r): r is JobRecord => r !== null), byEntry: checked, platformData };
  }
}

interface Gathered {
  readonly entries: readonly ArchiveEntry[];
  readonly hot: HotRead;
  /** Months whose index is damaged or lost. */
  readonly damage: readonly unknown[];
}

const warning = (err: unknown): string =>
  err instanceof ArchiveExpiredError
    ? `archival left out: ${err.message}`
    : `archive damaged, left out: ${err instanceof Error ? err.message : String(err)}`;

/** One warning per error (members of one part share its read's error). */
const distinct = (errs: readonly unknown[]): unknown[] => [...new Set(errs)];

/**
 * Months whose shared index is lost while committed shared parts remain (lostSharedIndexes): a packed
 * shop's only record of its archivals there, so a read that found nothing hot must name them, never
 * answer without them. With the months known, each month that had neither index is checked (a List
 * each); with them unknown, the whole shared prefix is walked, only when nothing else was `found`.
 */
const lostShared = (
  ctx: ReadContext,
  rq: ResolvedQuery,
  reads: readonly MonthRead[],
  found: boolean,
): Promise<unknown[]> => {
  if (rq.months !== null) {
    const months = reads.filter((r) => r.noSharedIndex).map((r) => r.month);
    return months.length > 0 ? lostSharedIndexes(ctx, months, rq.searchFrom) : Promise.resolve([]);
  }
  return found ? Promise.resolve([]) : lostSharedIndexes(ctx, null, rq.searchFrom);
};

const hasAnything = (hot: HotRead): boolean => hot.flushes.length > 0 || hot.platformData !== null;

/**
 * Hot objects of a completion that is archived with its hot copies deleted were written after that
 * archival (a late flush): merged into the result like any hot object, and named, since no archive
 * holds them until a run archives them again (`jobarchive audit` lists them as hidden-hot-object).
 */
const lateHotObjects = (rq: ResolvedQuery, entries: readonly ArchiveEntry[], hot: HotRead): string | null => {
  const newest = entries[entries.length - 1];
  if (!newest || rq.completedAt === null || hotPlan(entries, rq.completedAt) !== 'skip') return null;
  const archived = new Set(newest.entry.sources.map((src) => src.key));
  const late = hot.keys.filter((k) => !archived.has(k));
  if (late.length === 0) return null;
  return `${late.length} hot object(s) found after this completion was archived in ${newest.partKey} and its hot copies deleted (${newest.entry.deleted_at}), written after that archival: merged in; no archive holds them yet: ${late.join(', ')}`;
};

const entriesOf = (reads: readonly MonthRead[]): ArchiveEntry[] =>
  orderEntries(reads.flatMap((r) => r.entries));

const NO_INLINE: InlineDetails = { details: null, platformData: null, attributes: [] };

/** The row's inline details (checked before any I/O; InvalidInputError naming the attribute). */
const inlineOf = (q: JobQuery): InlineDetails => {
  if (q.row === undefined) return NO_INLINE;
  if (typeof q.row !== 'object' || q.row === null || Array.isArray(q.row)) {
    throw new InvalidInputError('row', 'must be the job row (an object of attributes)');
  }
  return parseInlineDetails(itemToJson(q.row));
};

const detailAttributes = (inline: InlineDetails): string[] =>
  inline.attributes.filter((a) => a !== INLINE_PLATFORM_DATA);
