import type { OverdueRequest } from '../../erasure/summary';
import type { RequestCounts } from '../../metrics';
import type { RunSettingName, SettingFields } from '../../settings';

/**
 * Event and result shapes of the archiver's state machine, one per Task. The CDK definition and the
 * local runner pass exactly these; handlers validate them (events.ts) before any I/O.
 */

/** Execution input (first Plan call). Unknown fields are rejected: a typo'd `dryrun` must not run for real. */
/** A run's input: the settings a run may set (shared/settings.ts RUN_SETTINGS) over the deployed ones, and the run's own fields. */
export interface RunInput extends SettingFields<RunSettingName> {
  /** ISO-8601; defaults to the execution's start time. */
  readonly now?: string;
  readonly dryRun?: boolean;
  /** Plan from the beginning of the status GSI, ignoring the watermark (docs/steady-state.md). */
  readonly replan?: boolean;
}

/** Fixed for the whole run; built by the first Plan call and carried through every state. */
export interface RunContext {
  readonly runId: string;
  /** The run's logical time (ISO). */
  readonly now: string;
  /**
   * `now − olderThanDays`, rounded down to its month's start with `wholeMonths`: jobs completed
   * strictly before this are archived.
   */
  readonly cutoff: string;
  readonly olderThanDays: number;
  readonly graceHours: number;
  readonly dryRun: boolean;
  /** The execution's start time (ISO). */
  readonly startedAt: string;
  /** The run's own largest source (MB), when its input set one: ArchiveBatch uses it over its setting. */
  readonly maxSourceMb?: number;
}

/** A job left alone, with why (its sources are kept). */
export interface QuarantinedJob {
  readonly shopId: string;
  readonly jobId: string;
  readonly reason: string;
}

/** Running totals of a run, carried between pages: counts only (lists go to findings documents). */
export interface RunTotals {
  jobsPlanned: number;
  jobsArchived: number;
  jobsSkipped: number;
  /** Plan-time (unsafe ids, bad rows) + archive-time quarantines. */
  jobsQuarantined: number;
  partsWritten: number;
  bytesIn: number;
  bytesOut: number;
  objectsDeleted: number;
  objectsKept: number;
  deleteErrors: number;
  /** Jobs whose hot objects are all gone (marked deleted in their month index). */
  jobsDeleted: number;
  groupsOk: number;
  groupsFailed: number;
  requests: RequestCounts;
}

/**
 * What the run read of the plan watermark and where it may move it (plan/watermark.ts): Plan sets it
 * on the first page and narrows `next` on every page; Report writes it (never in a dry run).
 */
export interface ScanState {
  /** ETag of the watermark document read at the start (null: there was none). */
  readonly etag: string | null;
  /** The watermark read at the start (null: none, the run read every status from the beginning). */
  readonly from: {
    readonly cutoff: string;
    readonly keys: Readonly<Record<string, string>>;
    readonly sweptAt?: string;
  } | null;
  /** Terminal status → the key the watermark may advance to. */
  readonly next: Readonly<Record<string, string>>;
  /** Retry entries planned at the start (what became of them is in this run's findings). */
  readonly retried: number;
  /** Retry entries not due yet, kept in the run's scratch (plan/watermark.ts `carriedKey`) for Report. */
  readonly carried: number;
  /** When the hot prefix was last swept for orphans (plan/orphans.ts); null until this run's sweep. */
  readonly sweptAt: string | null;
  /** The first page that walks the hot prefix for its planned jobs sweeps in that walk (orphans.ts). */
  readonly sweepWithWalk?: true;
  /** Orphans this run's sweep planned. */
  readonly orphans: number;
  /** Jobs whose row entered the GSI below the watermark, planned with this run's sweep (plan/late-rows.ts). Absent: none. */
  readonly lateRows?: number;
  /**
   * Months starting at or after this are archived for the first time by this run, so their small
   * shop-months may be packed ('': every month, the bucket holds no index yet; null or absent: none).
   */
  readonly packFrom?: string | null;
  /**
   * Pages with nothing to report (no batches, nothing quarantined): Plan writes no results for them
   * and Report reads none, so an idle run is the watermark GET and the report PUT. Absent: none.
   */
  readonly quietPages?: readonly number[];
  /**
   * Erasure requests as the watermark's summary had them when the run started (shared/erasure/
   * summary.ts): past their deadline (the number, and the oldest CAPS.report), and redactions waiting
   * for a restore, which the run resumes after Report. Absent: none.
   */
  readonly erasure?: {
    readonly overdueCount: number;
    readonly overdue: readonly OverdueRequest[];
    readonly pendingRedactions: number;
  };
}

/** State between pages: Tally's output, Plan's later input, Report's input. */
export interface PageState {
  readonly run: RunContext;
  /** The page Plan builds next (0-based). */
  readonly page: number;
  /** Opaque; null when the GSI is exhausted. */
  readonly cursor: string | null;
  readonly totals: RunTotals;
  /** Absent only in states written before the watermark existed (then nothing is written). */
  readonly scan?: ScanState;
}

/** One shop × month of a page. */
export interface PlannedGroup {
  readonly shopId: string;
  readonly month: string;
  /** The page's planned jobs, `plannedJobsKey(runId, page)`. */
  readonly jobsKey: string;
  /** Byte range `[start, end)` of this group's lines in `jobsKey`. */
  readonly jobsRange: readonly [number, number];
  readonly jobCount: number;
  /**
   * Small and archived for the first time: packed into the batch's shared part of its month
   * (docs/archive-format.md, "Shared parts"). 'if-packed': a month archived before — packed only when
   * its shop already is (in the month's shared index). Absent: its own part.
   */
  readonly pack?: true | 'if-packed';
}

/**
 * One line of the page's plan (`planBatchesKey`), one Distributed Map item: shop-months one child
 * execution archives together. Plan packs them by jobs (`batchJobs`) and count (`batchGroups`): the
 * cost of a shop-month is its jobs, which only Plan knows (an ItemBatcher cuts by items and bytes).
 */
export interface PlannedBatch {
  readonly page: number;
  readonly batch: number;
  readonly groups: PlannedGroup[];
  /**
   * Months whose shared staging this batch collects (pack-month.ts collectAbandonedShared: 1 LIST of
   * the month's shared `pending/`): the page's first batch with a group of the month that may pack.
   * The page's other batches leave it (absent: none), so a month's shared staging is listed once a
   * page, not once a batch; what it collects is the whole month's, whichever batch staged it.
   */
  readonly collectShared?: readonly string[];
}

/**
 * Plan's output. With batches, `page` is the page planned (Tally moves it on); without, Plan wrote the
 * page's results itself and `page` is the next one, so the state machine goes straight to MorePages.
 */
export interface PlanResult extends PageState {
  /** Batches on this page (0: the Map and Tally are skipped). */
  readonly batches: number;
  /** Shop-months on this page. */
  readonly groups: number;
  /** The page's plan file (ItemReader) and where its Map run writes results (ResultWriter). */
  readonly batchesKey: string;
  readonly resultsPrefix: string;
  /** Plan-time quarantines of this page; when > 0 they are listed at `planFindingsKey(runId, page)`. */
  readonly planQuarantined: number;
}

/** One planned job as Plan saw it in GSI_JobsByStatus_v2 (projected attributes; absent → null). */
export interface PlannedJob {
  readonly job_id: string;
  readonly status: string;
  readonly completed_at: string;
  readonly created_at: string | null;
  readonly started_at: string | null;
  readonly job_type: string | null;
  readonly platform: string | null;
  readonly error_message: string | null;
  readonly retry_count: number | null;
  readonly is_internal: boolean | null;
  readonly initiator_user_id: string | null;
  readonly estimated_time_minutes: number | null;
  readonly ttl: number | null;
}

/**
 * A hot object of a planned job as Plan listed it (one walk per page, shared by every batch:
 * docs/steady-state.md). A planned-jobs line is a PlannedJob with `objects`.
 */
export interface PlannedObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string | null;
  readonly lastModified: string | null;
}

/** What each stage of a group works on (in ArchiveBatch's memory: no Task passes it). */
export interface GroupItem {
  readonly run: RunContext;
  readonly group: PlannedGroup;
}

/** What Tally sums of a group's archive stage: counts only, so the Map's results stay small. */
export interface ArchiveSummary {
  /** Jobs written to the part (in a dry run: jobs that would be). */
  readonly archived: number;
  /** Already committed with the same completed_at, or changed since Plan (a later run archives those). */
  readonly skipped: number;
  /** When > 0, every one is listed at `groupFindingsKey(…, 'quarantined')`. */
  readonly quarantinedCount: number;
  /** Bytes of hot objects read (dry run: listed). */
  readonly bytesIn: number;
  /** Bytes of the part written. */
  readonly bytesOut: number;
  /** The part's name when one was written (null: nothing to archive, or dry run). */
  readonly partName: string | null;
  readonly requests: RequestCounts;
}

/**
 * Result of a group's archive stage. `partKey` absent → nothing to verify or commit. Only `summary`
 * leaves the batch (in its results).
 */
export interface ArchiveResult {
  readonly partKey?: string;
  readonly partName?: string;
  readonly pendingKey?: string;
  readonly summary: ArchiveSummary;
  readonly planned: number;
  /** Of `skipped`: the row's status/completed_at no longer match the plan (retried). */
  readonly changedSincePlan: number;
  /** Abandoned pending parts of other runs removed from this group. */
  readonly abandonedPartsRemoved: number;
  /** The first CAPS.inline quarantined jobs (all of them: the findings document). */
  readonly quarantined: Array<{ jobId: string; reason: string }>;
}

/** What the later stages of a group take of the archive stage's result. */
export type ArchiveStaged = Pick<ArchiveResult, 'partKey' | 'partName' | 'pendingKey' | 'summary'>;

/** The verify stage's input. */
export interface VerifyInput extends GroupItem {
  readonly archive: ArchiveStaged;
}

export interface VerifyResult {
  readonly verified: true;
  readonly jobs: number;
  readonly requests: RequestCounts;
}

/** The commit stage's input. */
export interface CommitInput extends VerifyInput {
  readonly verify: VerifyResult;
}

export interface CommitResult {
  readonly committed: true;
  /** Part name. */
  readonly part: string;
  /** Index entries added (jobs already committed by someone else are not added twice). */
  readonly jobs: number;
  readonly requests: RequestCounts;
}

/** The delete stage's input; verify/commit absent when nothing was archived. */
export interface DeleteInput extends GroupItem {
  readonly archive: ArchiveStaged;
  readonly verify?: VerifyResult;
  readonly commit?: CommitResult;
}

/** What Tally sums of a group's delete stage: counts only. */
export interface DeleteSummary {
  /** Hot objects deleted (dry run: that would be). */
  readonly objectsDeleted: number;
  /** Hot objects left because they are not what was archived (new or changed since). */
  readonly objectsKept: number;
  /** Keys that could not be deleted after retries; when > 0 listed at `groupFindingsKey(…, 'delete-errors')`. */
  readonly deleteErrorCount: number;
  /** Jobs marked deleted in the index (dry run: that would be). */
  readonly jobsCompleted: number;
  /** Jobs committed whose sources wait for the grace period (a later run revisits them); absent: 0. */
  readonly jobsWaiting?: number;
  /**
   * Parts an earlier attempt of this run's delete settled (its index write landed, then the attempt
   * died) and their jobs: those jobs are in `jobsCompleted`; their hot objects went in that attempt and
   * are not in `objectsDeleted` (a settled part keeps no per-job counts). The month index names the
   * parts (`settled.deleted_by` is the run id); counts only here, for the state's size.
   */
  readonly deletedEarlier?: DeletedEarlier;
  /** This stage's requests plus the verify and commit stages': the rest of the group. */
  readonly requests: RequestCounts;
}

/** What an earlier attempt of the run deleted and no longer counts (DeleteSummary.deletedEarlier). */
export interface DeletedEarlier {
  readonly jobs: number;
  readonly parts: number;
}

/** Result of a group's delete stage; only `summary` leaves the group. */
export interface DeleteResult {
  readonly summary: DeleteSummary;
  /** Planned jobs whose latest index entry is committed, undeleted, same completed_at, past grace. */
  readonly eligible: number;
  /** The first CAPS.inline delete errors (all of them: the findings document). */
  readonly deleteErrors: Array<{ key: string; code: string }>;
}

/** A group as its result names it (shop and month only). */
export interface GroupRef {
  readonly shopId: string;
  readonly month: string;
}

/**
 * What a done group's result keeps of a stage's summary: its counts. Its requests are added to its
 * batch's `overhead` instead, so a result's size does not grow with the request types a group sent
 * (the worst-case state at BATCH_GROUPS_MAX, test/infra/state-size.test.ts).
 */
export type ArchiveCounts = Omit<ArchiveSummary, 'requests'>;
export type DeleteCounts = Omit<DeleteSummary, 'requests'>;

/** A group done: its archive and delete summaries (counts only), in its batch's output. */
export interface GroupDone {
  readonly group: GroupRef;
  readonly archive: ArchiveCounts;
  readonly delete: DeleteCounts;
}

/** A group that failed in one of its stages (ArchiveBatch caught it; the batch goes on). */
export interface GroupFailed {
  readonly group: GroupRef;
  readonly failed: true;
  readonly error: string;
  readonly cause: string;
}

export type GroupResult = GroupDone | GroupFailed;

/** `Tally` event: Plan's result (its `groups` unused) with the Map's results. */
/** Child execution input (the Map's ItemSelector): the run and one batch. */
export interface BatchEvent {
  readonly run: RunContext;
  readonly batch: PlannedBatch;
}

/** The child execution's output (ArchiveBatch): what the ResultWriter keeps of the batch. */
export interface BatchResult {
  readonly results: GroupResult[];
  /** Every request of the batch: its own, and its done groups' (a failed group's are not counted). */
  readonly overhead: RequestCounts;
}

/** Where the page's Map run wrote its results (the Map's output: `{MapRunArn, ResultWriterDetails}`). */
export interface MapRunOutput {
  readonly MapRunArn: string;
  readonly ResultWriterDetails: { readonly Bucket: string; readonly Key: string };
}

/** `Tally` event: Plan's result with the Map run's output at `mapRun` (absent when the page had no batches). */
export interface TallyEvent extends PageState {
  readonly planQuarantined: number;
  readonly groups: number;
  readonly resultsPrefix: string;
  readonly mapRun?: MapRunOutput;
}

/** `Report` event = PageState. The execution's output: */
export interface RunReport {
  readonly runId: string;
  readonly now: string;
  readonly cutoff: string;
  readonly dryRun: boolean;
  readonly jobsPlanned: number;
  readonly jobsArchived: number;
  readonly jobsSkipped: number;
  /** Capped at 100; `jobsQuarantinedCount` is the full number (report.json lists them all). */
  readonly jobsQuarantined: QuarantinedJob[];
  readonly jobsQuarantinedCount: number;
  readonly partsWritten: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly objectsDeleted: number;
  readonly objectsKept: number;
  readonly deleteErrors: number;
  readonly jobsDeleted: number;
  /**
   * Groups whose hot objects an earlier attempt of this run deleted (a retried ArchiveBatch found the
   * parts it settled): those jobs are in `jobsDeleted`, their objects are not in `objectsDeleted` (the
   * count went with the entries). Capped at 100 (`deletedEarlierCount` is the full number); absent
   * when none.
   */
  readonly deletedEarlier?: Array<{ shopId: string; month: string } & DeletedEarlier>;
  /** How many groups `deletedEarlier` would list uncapped; absent when none. */
  readonly deletedEarlierCount?: number;
  readonly groupsOk: number;
  /** Capped at 100; `groupsFailedCount` is the full number. */
  readonly groupsFailed: Array<{ shopId: string; month: string; error: string; cause: string }>;
  readonly groupsFailedCount: number;
  readonly pages: number;
  readonly requests: RequestCounts;
  /**
   * Where report.json is; null when the run filed none (nothing planned, quarantined or carried over:
   * this output is then the whole report).
   */
  readonly reportKey: string | null;
  /** What Report did with the plan watermark (docs/steady-state.md). */
  readonly watermark?: 'unchanged' | 'written' | 'merged' | 'dry-run';
  /** Jobs without a row (expired before archival) this run's orphan sweep planned (in jobsPlanned too). */
  readonly orphansPlanned?: number;
  /** Jobs whose row entered the GSI below the watermark, found by this run's sweep (in jobsPlanned too). */
  readonly lateRowsPlanned?: number;
  /**
   * Erasure requests (docs/erasure.md) not complete `erasureDeadlineDays` after they were received:
   * the full number, and the oldest 100 (no document ids). Published as `ErasureRequestsOverdue`.
   */
  readonly erasureOverdueCount?: number;
  readonly erasureOverdue?: OverdueRequest[];
  /**
   * Redaction requests waiting for a Glacier restore (shared/redact/): when above 0, the state
   * machine's RunComplete sends the run on to Redact with `{"pending": true}` before it ends.
   */
  readonly erasurePendingRedactions?: number;
  /**
   * Present when groups failed in a real run: the Cause of the `ArchiveRunIncomplete` failure the
   * state machine ends with (JSON, see `incompleteCause`). A dry run never carries it.
   */
  readonly incomplete?: string;
  /**
   * Present when a real run saw erasure requests past their deadline: the Cause of the
   * `ErasureRequestsOverdue` failure the state machine ends with (after resuming pending redactions),
   * so the failed-runs rule (a free EventBridge rule on the alarm topic) reaches a person without a custom metric (`overdueCause`).
   */
  readonly overdue?: string;
}
