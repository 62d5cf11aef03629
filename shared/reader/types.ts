import type { ArchivedJobMeta, IndexedJob } from '../archive/format';
import type { RestoreTier } from '../config';
import type { JobDetails, JsonObject } from '../details';

/**
 * Where a result came from in S3: hot objects, archive parts, both (merged), or nowhere; `row` when
 * only the job row's inline attributes (pre-migration rows) supplied it. `provenance.inline` names
 * the inline attributes used, whatever the S3 source.
 */
export type ReadSource = 'hot' | 'archive' | 'both' | 'row' | 'none';

/** What one read cost and touched; every S3 call of the read is counted, misses (404) included. */
export interface Provenance {
  readonly source: ReadSource;
  /** Archive part keys a member was read from, sorted. */
  readonly parts: readonly string[];
  /** S3 API calls made (List, Get, RestoreObject). SDK-internal retries of one call are not counted. */
  readonly requests: number;
  /** Object bytes downloaded (GET bodies; listing XML is not counted). */
  readonly bytes: number;
  /** Inline attributes of the row passed in `JobQuery.row` that the result used (see details/inline.ts). */
  readonly inline: readonly string[];
  /**
   * Damage the read went around instead of failing: a month index or archive member that is corrupt
   * while intact hot objects answered (each message names the object and what is wrong). Empty
   * when nothing was damaged. When nothing readable is left, the read throws the damage's error.
   */
  readonly warnings: readonly string[];
}

/**
 * Which job to read, and what the caller knows about when it completed. The month(s) to look in:
 * - `months` given → exactly those (`[]` = the job cannot be archived: read hot objects only);
 * - else `completedAt` given → the months from `createdAt` (when given) through `completedAt`;
 * - else → a bounded search of the shop's month indexes (see `JobDetailsReader`).
 * `completedAt` also lets the reader skip the hot listing for a job fully archived since that
 * completion (see `hotPlan`).
 */
export interface JobQuery {
  readonly shopId: string;
  readonly jobId: string;
  /** The job row's `completed_at` (ISO). */
  readonly completedAt?: string;
  /**
   * The job row's `created_at` (ISO). A job retried after archival may have been archived in an
   * earlier month than its latest completion; every archival lies between creation and completion.
   */
  readonly createdAt?: string;
  /** `yyyy-mm` months to look in, overriding the above. */
  readonly months?: readonly string[];
  /**
   * The job's DynamoDB row, when the caller has it (as the document client returns it). Rows from
   * before the S3 offload carry their details inline (`failed_items_details`, …, `platform_data`):
   * the design's dual-read prefers those and merges the S3 objects in.
   */
  readonly row?: Readonly<Record<string, unknown>>;
}

export interface JobDetailsReaderOptions {
  /** Tier of the RestoreObject issued when a part is in Glacier Flexible Retrieval / Deep Archive. */
  readonly restoreTier?: RestoreTier;
  /** Days a restored copy stays readable. */
  readonly restoreDays?: number;
  /** At most this many month indexes are read for one job (newest first). */
  readonly searchMonths?: number;
  /** Parallel GETs per read. */
  readonly readConcurrency?: number;
  /**
   * The deployment's `retentionMonths` (0: forever). A part its index names that is missing and
   * older than the horizon was expired by the lifecycle rule (its index outlives it by a month):
   * ArchiveExpiredError, not CorruptObjectError.
   */
  readonly retentionMonths?: number;
  /** Time source for the retention horizon (default: the system clock). */
  readonly clock?: () => Date;
}

export interface DetailsResult {
  readonly details: JobDetails | null;
  readonly provenance: Provenance;
}

export interface PlatformDataResult {
  readonly data: unknown | null;
  readonly provenance: Provenance;
}

/** One archival of the job, as the month index records it, with the status its record archived. */
export interface ArchivalSummary {
  readonly month: string;
  readonly partKey: string;
  readonly entry: IndexedJob;
  /** The record's status (the index keeps none); null when the record could not be read (a warning names it). */
  readonly status: string | null;
}

/** Everything known about a job (the CLI's forensic lookup). */
export interface JobLookup {
  readonly details: JobDetails | null;
  readonly platformData: unknown | null;
  /** The job row as the newest archival saw it (useful once the DynamoDB row has expired). */
  readonly archivedJob: ArchivedJobMeta | null;
  /**
   * The newest archival's copy of the whole row, every attribute under its own name (null when
   * that archival predates whole-row records or the row had already expired).
   */
  readonly archivedRow: JsonObject | null;
  /** Every archival of the job found, oldest first. */
  readonly archivals: readonly ArchivalSummary[];
  /** Hot objects read (flushes and platform-data.json). */
  readonly hotKeys: readonly string[];
  readonly detailsSource: ReadSource;
  readonly platformDataSource: ReadSource;
  /** For the whole lookup; `source` is where anything returned came from. */
  readonly provenance: Provenance;
}
