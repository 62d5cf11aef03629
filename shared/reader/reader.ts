import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobRecord } from '../archive/format';
import { INLINE_PLATFORM_DATA, type InlineDetails, parseInlineDetails } from '../details/inline';
import { CorruptObjectError, InvalidInputError } from '../errors';
import { itemToJson } from '../jobs/row-json';
import { type MonthRead, readIndexes, readMembers, recheckIndexes, searchIndexes } from './archive-reads';
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
 * - month known (`completedAt` or `months`): 1 GET per month index + 1 ranged GET per archival of
 *   the job. A job fully archived since `completedAt` skips the hot listing: 2 requests in all for
 *   the usual job. Otherwise the hot prefix costs 1 List + 1 GET per flush, and a job not archived
 *   for this completion re-checks each index afterwards (a 304 when unchanged), so an archiver run
 *   committing and deleting meanwhile cannot hide data.
 * - month unknown: a bounded search — 1 List per 1,000 keys under `job-details-index/{shop}/`, then
 *   at most `searchMonths` (default 24) index GETs, newest month first, collecting every archival
 *   of the job (a retried job can be archived in several months). Archivals in older months are not
 *   found; pass `months` to reach them.
 * - platform data: hot `platform-data.json` first (1 GET; when present it is the newest), else the
 *   newest archival's platform-data member (index GETs + 1 ranged GET).
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
    const { records, hot } = await this.readArchived(ctx, rq, gathered, undefined, false);
    const { details, source } = combineDetails(
      records,
      hot?.flushes.map((f) => f.payload) ?? [],
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
    const reads = rq.months !== null ? await readIndexes(ctx, rq, rq.months) : await searchIndexes(ctx, rq);
    const latest = latestWithPlatformData(entriesOf(reads));
    if (!latest) return { data: null, provenance: ctx.ledger.provenance('none') };
    // With its job record: an entry leaves the platform data's ref to the record (usually the
    // same block, fetched once).
    // Nothing hot to fall back on here: damage to the platform data itself is the read's error.
    const damage: unknown[] = [];
    const { platformData } = await this.readMembers(ctx, rq, [latest], latest, damage);
    if (platformData === null && damage.length > 0) throw damage[0];
    for (const err of damage) ctx.ledger.warn(warning(err));
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
    // When the plan skipped the hot prefix (this completion's objects were deleted), platform-data.json
    // is still read (1 GET), as readPlatformData reads it: one rewritten after the delete is the
    // current one for both until the next run archives it.
    const skippedPd =
      gathered.hot === null && inline.platformData === null ? await readHotPlatformData(ctx, rq) : null;
    const platformEntry =
      gathered.hot?.platformData || skippedPd || inline.platformData !== null
        ? undefined
        : latestWithPlatformData(entries);
    const { records, platformData, hot } = await this.readArchived(ctx, rq, gathered, platformEntry, true);
    const details = combineDetails(records, hot?.flushes.map((f) => f.payload) ?? [], inline.details);
    const pd = choosePlatformData(hot?.platformData ?? skippedPd, platformData, inline.platformData);
    const newest = records[records.length - 1];
    return {
      details: details.details,
      platformData: pd.data,
      archivedJob: newest?.job ?? null,
      archivedRow: newest?.row ?? null,
      archivals: entries.map((e) => ({ month: e.month, partKey: e.partKey, entry: e.entry })),
      hotKeys: hot?.keys ?? [],
      detailsSource: details.source,
      platformDataSource: pd.source,
      provenance: ctx.ledger.provenance(combineSources(details.source, pd.source), inline.attributes),
    };
  }

  /**
   * The job's archive entries (oldest first) and its hot objects, in an order that cannot miss an
   * archival committed while we read (see `hotPlan`). `hot` is null when the plan skipped it.
   */
  private async gather(
    ctx: ReadContext,
    rq: ResolvedQuery,
    withPlatformData: boolean,
  ): Promise<{ entries: ArchiveEntry[]; hot: HotRead | null }> {
    if (rq.months !== null && rq.completedAt !== null) {
      const months = rq.months;
      let reads: MonthRead[];
      try {
        reads = await readIndexes(ctx, rq, months);
      } catch (err) {
        // A damaged index hides nothing that is still hot.
        if (!(err instanceof CorruptObjectError)) throw err;
        return { entries: [], hot: degrade(ctx, await readHot(ctx, rq, withPlatformData), err) };
      }
      const plan = hotPlan(entriesOf(reads), rq.completedAt);
      if (plan === 'skip') return { entries: entriesOf(reads), hot: null };
      const hot = await readHot(ctx, rq, withPlatformData);
      if (plan === 'read-then-recheck') {
        try {
          reads = await recheckIndexes(ctx, rq, reads);
        } catch (err) {
          return { entries: [], hot: degrade(ctx, hot, err) };
        }
      }
      return { entries: entriesOf(reads), hot };
    }
    // Nothing to decide the plan with: hot first, then the indexes, which then include any archival
    // that deleted hot objects before we got to them.
    const hot = await readHot(ctx, rq, withPlatformData);
    try {
      const reads = rq.months !== null ? await readIndexes(ctx, rq, rq.months) : await searchIndexes(ctx, rq);
      return { entries: entriesOf(reads), hot };
    } catch (err) {
      return { entries: [], hot: degrade(ctx, hot, err) };
    }
  }

  /**
   * The entries' records, verified (see `readMembers`); a damaged one is left out with a warning as
   * long as something readable remains: the other archivals, or the hot copy (read now if the plan
   * had skipped it). With nothing left, the damage's CorruptObjectError is thrown.
   */
  private async readArchived(
    ctx: ReadContext,
    rq: ResolvedQuery,
    gathered: { entries: readonly ArchiveEntry[]; hot: HotRead | null },
    platformEntry: ArchiveEntry | undefined,
    withPlatformData: boolean,
  ): Promise<{ records: JobRecord[]; platformData: unknown | null; hot: HotRead | null }> {
    const damage: unknown[] = [];
    let read: { records: JobRecord[]; platformData: unknown | null };
    try {
      read = await this.readMembers(ctx, rq, gathered.entries, platformEntry, damage);
    } catch (err) {
      if (!(err instanceof CorruptObjectError)) throw err;
      damage.push(err);
      read = { records: [], platformData: null };
    }
    if (damage.length === 0) return { ...read, hot: gathered.hot };
    const hot = gathered.hot ?? (await readHot(ctx, rq, withPlatformData));
    if (read.records.length > 0 || read.platformData !== null) {
      for (const err of damage) ctx.ledger.warn(warning(err));
      return { ...read, hot };
    }
    for (const err of damage.slice(1)) ctx.ledger.warn(warning(err));
    return { ...read, hot: degrade(ctx, hot, damage[0]) };
  }

  /** Ranged GETs of the entries' job records (and one platform-data member), verified. */
  private async readMembers(
    ctx: ReadContext,
    rq: ResolvedQuery,
    entries: readonly ArchiveEntry[],
    platformEntry: ArchiveEntry | undefined,
    damage: unknown[],
  ): Promise<{ records: JobRecord[]; platformData: unknown | null }> {
    const wanted: WantedMember[] = entries.map((e, i) => ({
      id: `job:${i}`,
      key: e.partKey,
      offset: e.entry.offset,
      length: e.entry.length,
    }));
    const pd = platformEntry?.entry.platform_data;
    if (pd) wanted.push({ id: 'platform', key: platformEntry.partKey, offset: pd.offset, length: pd.length });
    if (wanted.length === 0) return { records: [], platformData: null };

    const bytes = await readMembers(ctx, wanted);
    const member = (id: string): Uint8Array => bytes.get(id) ?? new Uint8Array(0);
    const checked = entries.map((e, i) => {
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
    if (platformEntry && pd) {
      try {
        platformData = checkPlatformMember(member('platform'), platformEntry, jobRef, rq.shopId);
      } catch (err) {
        if (!(err instanceof CorruptObjectError)) throw err;
        damage.push(err);
      }
    }
    return { records: checked.filter((r): r is JobRecord => r !== null), platformData };
  }
}

const warning = (err: unknown): string =>
  `archive damaged, left out: ${err instanceof Error ? err.message : String(err)}`;

const hasAnything = (hot: HotRead): boolean => hot.flushes.length > 0 || hot.platformData !== null;

/**
 * Readers degrade, never hide: archive damage (a CorruptObjectError) with intact hot objects gives the
 * hot copy and a warning in provenance; with nothing hot, the error stands. Other errors propagate.
 */
const degrade = (ctx: ReadContext, hot: HotRead, err: unknown): HotRead => {
  if (!(err instanceof CorruptObjectError) || !hasAnything(hot)) throw err;
  ctx.ledger.warn(warning(err));
  return hot;
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
