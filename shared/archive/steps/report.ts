import { CorruptObjectError } from '../../errors';
import { addCounts } from '../../metrics';
import { getObjectBytes } from '../../s3/objects';
import { pageResultsKey, reportKey } from '../keys';
import type { StepDeps } from './context';
import { CAPS } from './run';
import { isObj } from './shape';
import { putJson } from './staged';
import { PAGE_RESULTS_FORMAT } from './tally';
import { failuresOf, quarantinesOf } from './totals';
import type { GroupResult, PageState, QuarantinedJob, RunReport } from './types';

export const REPORT_FORMAT = 'job-details-archive/report@1';

const readPage = async (deps: StepDeps, runId: string, page: number): Promise<GroupResult[]> => {
  const key = pageResultsKey(runId, page);
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) throw new CorruptObjectError(key, 'page results are missing');
  let v: unknown;
  try {
    v = JSON.parse(got.bytes.toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'page results are not JSON', { cause: err });
  }
  if (!isObj(v) || v.format !== PAGE_RESULTS_FORMAT || v.run_id !== runId || !Array.isArray(v.results)) {
    throw new CorruptObjectError(key, `not this run's ${PAGE_RESULTS_FORMAT} document`);
  }
  return v.results as GroupResult[];
};

/**
 * Report: reads every page's results, writes the full report (every quarantined job and failed group
 * the pages recorded) to `reportKey(runId)` and returns the execution output (lists capped at 100).
 * Both count the report's own reads; the output's `requests` also count the report's write.
 */
export const report = async (deps: StepDeps, state: PageState): Promise<RunReport> => {
  const { run, totals } = state;
  const key = reportKey(run.runId);
  const { value: found, requests: reads } = await deps.meter.measure(async () => {
    const quarantined: QuarantinedJob[] = [...totals.planQuarantined];
    const failed: RunReport['groupsFailed'] = [];
    for (let page = 0; page < state.page; page++) {
      const results = await readPage(deps, run.runId, page);
      quarantined.push(...quarantinesOf(results));
      failed.push(...failuresOf(results));
    }
    return { quarantined, failed };
  });
  const summary: RunReport = {
    runId: run.runId,
    now: run.now,
    cutoff: run.cutoff,
    dryRun: run.dryRun,
    jobsPlanned: totals.jobsPlanned,
    jobsArchived: totals.jobsArchived,
    jobsSkipped: totals.jobsSkipped,
    jobsQuarantined: found.quarantined.slice(0, CAPS.report),
    jobsQuarantinedCount: totals.jobsQuarantined,
    partsWritten: totals.partsWritten,
    bytesIn: totals.bytesIn,
    bytesOut: totals.bytesOut,
    objectsDeleted: totals.objectsDeleted,
    objectsKept: totals.objectsKept,
    deleteErrors: totals.deleteErrors,
    jobsDeleted: totals.jobsDeleted,
    groupsOk: totals.groupsOk,
    groupsFailed: found.failed.slice(0, CAPS.report),
    groupsFailedCount: totals.groupsFailed,
    pages: state.page,
    requests: addCounts(totals.requests, reads),
    reportKey: key,
  };
  const { requests: write } = await deps.meter.measure(() =>
    putJson(deps, key, {
      format: REPORT_FORMAT,
      ...summary,
      run,
      // The full lists (the pages cap each group's quarantines at 50).
      jobsQuarantined: found.quarantined,
      groupsFailed: found.failed,
      pageResults: Array.from({ length: state.page }, (_, p) => pageResultsKey(run.runId, p)),
    }),
  );
  return { ...summary, requests: addCounts(summary.requests, write) };
};
