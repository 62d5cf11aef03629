import { mapLimit } from '../../../concurrency';
import { scrubOwnRun } from '../../../erasure/own-run';
import { CorruptObjectError } from '../../../errors';
import { addCounts } from '../../../metrics';
import { putJson } from '../../../s3/objects';
import { findingsPrefix, groupFindingsKey, pageResultsKey, planFindingsKey, reportKey } from '../../format';
import { CAPS } from '../caps';
import type { StepDeps } from '../context';
import {
  type DeleteErrorItem,
  type FindingsKind,
  type QuarantineItem,
  readFindings,
} from '../run-files/findings';
import { PAGE_RESULTS_FORMAT, readPageResults } from '../run-files/page-results';
import { isObj } from '../shape';
import type { GroupResult, PageState, QuarantinedJob, RunReport } from '../types';
import { advanceWatermark, type FailedGroupAt } from './advance-watermark';
import { failuresOf, isDone } from './totals';

export const REPORT_FORMAT = 'job-details-archive/report@2';

/**
 * Entries per list in report.json. A systemic fault (every job of every group quarantined) must not
 * make the report outgrow the function's memory; the findings documents keep everything and the
 * counts stay exact.
 */
export const REPORT_FILE_LIST_MAX = 100_000;

interface PageDoc {
  readonly planQuarantined: number;
  readonly results: GroupResult[];
  readonly interrupted: number[];
}

const readPage = async (deps: StepDeps, runId: string, page: number): Promise<PageDoc> => {
  const key = pageResultsKey(runId, page);
  const v = await readPageResults(deps, runId, page);
  if (v === null) throw new CorruptObjectError(key, 'page results are missing');
  if (
    !isObj(v) ||
    v.format !== PAGE_RESULTS_FORMAT ||
    v.run_id !== runId ||
    typeof v.plan_quarantined !== 'number' ||
    !Array.isArray(v.results)
  ) {
    throw new CorruptObjectError(key, `not this run's ${PAGE_RESULTS_FORMAT} document`);
  }
  const interrupted = Array.isArray(v.interrupted_batches)
    ? v.interrupted_batches.filter((b): b is number => Number.isInteger(b))
    : [];
  return { planQuarantined: v.plan_quarantined, results: v.results as GroupResult[], interrupted };
};

export type DeleteErrorEntry = { shopId: string; month: string } & DeleteErrorItem;

/** A list that stops growing at REPORT_FILE_LIST_MAX (and says so). */
class ReportList<T> {
  readonly items: T[] = [];
  truncated = false;
  get full(): boolean {
    return this.items.length >= REPORT_FILE_LIST_MAX;
  }
  add(more: readonly T[]): void {
    const room = REPORT_FILE_LIST_MAX - this.items.length;
    if (more.length > room) this.truncated = true;
    this.items.push(...more.slice(0, Math.max(0, room)));
  }
}

/** One findings document to read: which list it feeds and how its items become report entries. */
interface Wanted {
  readonly key: string;
  readonly kind: FindingsKind;
  readonly into: (items: unknown[]) => void;
}

/** Nothing planned, quarantined, carried over or resulted: the run has no scratch to file a report beside. */
const nothingToFile = (state: PageState): boolean =>
  state.totals.jobsPlanned === 0 &&
  state.totals.jobsQuarantined === 0 &&
  (state.scan?.carried ?? 0) === 0 &&
  resultPages(state).length === 0;

/** The pages with a results document: all but those Plan found nothing on (ScanState.quietPages). */
const resultPages = (state: PageState): number[] =>
  Array.from({ length: state.page }, (_, p) => p).filter((p) => !state.scan?.quietPages?.includes(p));

/**
 * Report: reads every page's results and, for each count > 0 there, the findings document that lists
 * it; writes report.json (every quarantined job, delete error and failed group, up to
 * REPORT_FILE_LIST_MAX each) to `reportKey(runId)` and returns the execution output (lists capped at
 * 100, counts exact). Both count the report's own reads; the output's `requests` also count the write.
 */
export const report = async (deps: StepDeps, state: PageState): Promise<RunReport> => {
  const { run, totals } = state;
  const key = reportKey(run.runId);
  const { value: found, requests: reads } = await deps.meter.measure(async () => {
    const quarantined = new ReportList<QuarantinedJob>();
    const deleteErrors = new ReportList<DeleteErrorEntry>();
    const failed = new ReportList<RunReport['groupsFailed'][number]>();
    const failedAt: FailedGroupAt[] = [];
    const deletedEarlier: NonNullable<RunReport['deletedEarlier']> = [];
    let deletedEarlierCount = 0;
    for (const page of resultPages(state)) {
      const doc = await readPage(deps, run.runId, page);
      const failures = failuresOf(doc.results);
      failed.add(failures);
      for (const f of failures) failedAt.push({ page, shopId: f.shopId, month: f.month });
      for (const batch of doc.interrupted) failedAt.push({ page, batch });
      // Groups whose sources wait for the grace period, or whose deletes failed: revisited later.
      for (const r of doc.results.filter(isDone)) {
        if ((r.delete.jobsWaiting ?? 0) > 0 || r.delete.deleteErrorCount > 0)
          failedAt.push({ page, shopId: r.group.shopId, month: r.group.month, graceOnly: true });
        const e = r.delete.deletedEarlier;
        if (e) {
          deletedEarlierCount += 1;
          if (deletedEarlier.length < CAPS.report) deletedEarlier.push({ ...r.group, ...e });
        }
      }
      const wanted: Wanted[] = [];
      if (doc.planQuarantined > 0 && !quarantined.full) {
        wanted.push({
          key: planFindingsKey(run.runId, page),
          kind: 'plan-quarantined',
          into: (items) => quarantined.add(items as QuarantinedJob[]),
        });
      }
      for (const r of doc.results.filter(isDone)) {
        const { shopId, month } = r.group;
        if (r.archive.quarantinedCount > 0 && !quarantined.full) {
          wanted.push({
            key: groupFindingsKey(run.runId, page, shopId, month, 'quarantined'),
            kind: 'quarantined',
            into: (items) => quarantined.add((items as QuarantineItem[]).map((q) => ({ shopId, ...q }))),
          });
        }
        if (r.delete.deleteErrorCount > 0 && !deleteErrors.full) {
          wanted.push({
            key: groupFindingsKey(run.runId, page, shopId, month, 'delete-errors'),
            kind: 'delete-errors',
            into: (items) =>
              deleteErrors.add((items as DeleteErrorItem[]).map((e) => ({ shopId, month, ...e }))),
          });
        }
      }
      // Read in parallel, added in page order: the report lists findings in a stable order.
      const read = await mapLimit(wanted, deps.settings.readConcurrency, (w) =>
        readFindings<unknown>(deps, w.key, { runId: run.runId, page, kind: w.kind }),
      );
      for (const [i, w] of wanted.entries()) w.into(read[i] ?? []);
    }
    return { quarantined, deleteErrors, failed, failedAt, deletedEarlier, deletedEarlierCount };
  });
  const erasure = state.scan?.erasure;
  const summary: RunReport = {
    runId: run.runId,
    now: run.now,
    cutoff: run.cutoff,
    dryRun: run.dryRun,
    jobsPlanned: totals.jobsPlanned,
    jobsArchived: totals.jobsArchived,
    jobsSkipped: totals.jobsSkipped,
    jobsQuarantined: found.quarantined.items.slice(0, CAPS.report),
    jobsQuarantinedCount: totals.jobsQuarantined,
    partsWritten: totals.partsWritten,
    bytesIn: totals.bytesIn,
    bytesOut: totals.bytesOut,
    objectsDeleted: totals.objectsDeleted,
    objectsKept: totals.objectsKept,
    deleteErrors: totals.deleteErrors,
    jobsDeleted: totals.jobsDeleted,
    ...(found.deletedEarlierCount > 0
      ? { deletedEarlier: found.deletedEarlier, deletedEarlierCount: found.deletedEarlierCount }
      : {}),
    groupsOk: totals.groupsOk,
    groupsFailed: found.failed.items.slice(0, CAPS.report),
    groupsFailedCount: totals.groupsFailed,
    pages: state.page,
    requests: addCounts(totals.requests, reads),
    reportKey: key,
    // Erasure requests past their deadline, and redactions waiting for a restore: from the watermark's
    // erasure summary Plan read (no request of their own; docs/erasure.md).
    erasureOverdueCount: erasure?.overdueCount ?? 0,
    erasureOverdue: [...(erasure?.overdue ?? [])],
    erasurePendingRedactions: run.dryRun ? 0 : (erasure?.pendingRedactions ?? 0),
  };
  const incomplete = !run.dryRun && totals.groupsFailed > 0 ? incompleteCause(summary) : undefined;
  const overdue = !run.dryRun && (summary.erasureOverdueCount ?? 0) > 0 ? overdueCause(summary) : undefined;
  // The watermark moves last, once everything the run did is in its report (a crash before keeps the
  // old one: the next run plans the same rows again).
  const { value: watermark, requests: moved } = await deps.meter.measure(() =>
    advanceWatermark(deps, state, found.quarantined.items, found.failedAt),
  );
  // A run that left nothing in its scratch (no plan files, findings, results or carried retries:
  // an idle day) files no report: its output is the whole report, every list empty
  // (docs/steady-state.md "Idle run"). What it wrote would only repeat the execution output.
  const filed = !nothingToFile(state);
  const { requests: write } = await deps.meter.measure(async () => {
    if (!filed) return;
    await putJson(deps, key, {
      format: REPORT_FORMAT,
      ...summary,
      run,
      // The full lists (up to REPORT_FILE_LIST_MAX each; the findings documents hold everything).
      jobsQuarantined: found.quarantined.items,
      deleteErrorList: found.deleteErrors.items,
      groupsFailed: found.failed.items,
      listsTruncated: found.quarantined.truncated || found.deleteErrors.truncated || found.failed.truncated,
      findingsPrefix: findingsPrefix(run.runId),
      pageResults: resultPages(state).map((p) => pageResultsKey(run.runId, p)),
    });
  });
  // Its own scratch, of shops forgotten while it ran (docs/erasure.md "Run scratch"): after the report.
  const { requests: scrubbed } = await deps.meter.measure(() =>
    scrubOwnRun(deps, state, summary.erasureOverdueCount ?? 0),
  );
  return {
    ...summary,
    reportKey: filed ? key : null,
    watermark,
    ...(state.scan ? { orphansPlanned: state.scan.orphans } : {}),
    ...(state.scan?.lateRows ? { lateRowsPlanned: state.scan.lateRows } : {}),
    requests: addCounts(addCounts(addCounts(summary.requests, write), moved), scrubbed),
    ...(incomplete !== undefined ? { incomplete } : {}),
    ...(overdue !== undefined ? { overdue } : {}),
  };
};

/**
 * The Cause of `ErasureRequestsOverdue`: which requests (ids, kinds, ages; never a document id) are
 * past `erasureDeadlineDays`, and where the report is. Bounded like `incompleteCause`.
 */
export const overdueCause = (r: RunReport): string =>
  JSON.stringify({
    message: `${r.erasureOverdueCount} erasure request(s) past their deadline and not complete: finish them (docs/erasure.md); the run itself did its work`,
    reportKey: r.reportKey,
    runId: r.runId,
    erasureOverdueCount: r.erasureOverdueCount,
    erasureOverdue: (r.erasureOverdue ?? []).slice(0, CAUSE_GROUPS),
    jobsArchived: r.jobsArchived,
  });

/** Failed groups named in the Cause (report.json lists them all). */
const CAUSE_GROUPS = 10;

/**
 * The Cause of `ArchiveRunIncomplete`: JSON an operator reads in the console and `jobarchive run`
 * parses — what failed, where the full report is. Bounded well under the 32 KB Cause limit.
 */
export const incompleteCause = (r: RunReport): string =>
  JSON.stringify({
    message: `${r.groupsFailedCount} of ${r.groupsFailedCount + r.groupsOk} groups failed; their hot data stays in place until a later run archives it`,
    reportKey: r.reportKey,
    runId: r.runId,
    groupsFailedCount: r.groupsFailedCount,
    groupsFailed: r.groupsFailed.slice(0, CAUSE_GROUPS).map((g) => ({
      shopId: g.shopId,
      month: g.month,
      error: g.error,
      cause: g.cause.slice(0, 300),
    })),
    jobsArchived: r.jobsArchived,
    jobsQuarantinedCount: r.jobsQuarantinedCount,
    // Overdue erasure requests too (they end the run FAILED on their own: overdueCause).
    ...((r.erasureOverdueCount ?? 0) > 0 ? { erasureOverdueCount: r.erasureOverdueCount } : {}),
  });
