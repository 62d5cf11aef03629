import { addCounts } from '../../../metrics';
import { ExactQueryCommand } from '../../../jobs/exact-commands';
import { JOBS_TABLE, TERMINAL_STATUSES } from '../../../jobs/schema';
import type { StepDeps } from '../context';
import { decodeCursor, encodeCursor, type PlanCursor } from './cursor';
import { classifyPlanRow, keyConditionBound, PlanPage, startKeyOf } from './plan-rows';
import { layoutPlanFiles } from './plan-files';
import { putBytes } from '../../../s3/objects';
import { mapResultsPrefix } from '../../format/keys';
import { writePlanFindings } from '../report/findings';
import { buildRun, zeroTotals } from '../run';
import type { PageState, PlanResult, RunInput } from '../types';

/** Items asked of one Query call (DynamoDB also stops at 1 MB). */
const QUERY_LIMIT = 1000;

export type PlanCall =
  | {
      readonly kind: 'first';
      readonly input: RunInput;
      readonly execution: string;
      readonly startTime: string;
    }
  | { readonly kind: 'next'; readonly state: PageState };

const after = (statusIndex: number): PlanCursor | null =>
  statusIndex + 1 < TERMINAL_STATUSES.length ? { statusIndex: statusIndex + 1, startKey: null } : null;

/**
 * Plans one page: terminal jobs completed before the cutoff, read from GSI_JobsByStatus_v2 one
 * status at a time, grouped by shop × UTC month of completion. Stops at `planPageJobs` items or before
 * the item that would open group `planPageGroups + 1`, and returns an item-level cursor; each group's
 * job list (and the page's quarantined rows) go to S3 so the state stays small whatever the page holds.
 */
export const plan = async (deps: StepDeps, call: PlanCall): Promise<PlanResult> => {
  const { settings } = deps;
  const run =
    call.kind === 'first' ? buildRun(call.input, call.execution, call.startTime, settings) : call.state.run;
  const pageNo = call.kind === 'first' ? 0 : call.state.page;
  const before = call.kind === 'first' ? zeroTotals() : call.state.totals;
  const start: PlanCursor =
    call.kind === 'first'
      ? { statusIndex: 0, startKey: null }
      : decodeCursor(call.state.cursor ?? '', 'state.cursor');

  const { value, requests } = await deps.meter.measure(async () => {
    const page = new PlanPage(settings.planPageGroups);
    let consumed = 0;
    let next: PlanCursor | null = start;
    scan: while (next !== null) {
      const here: PlanCursor = next;
      const status = TERMINAL_STATUSES[here.statusIndex] as string;
      const out = await deps.ddb.send(
        new ExactQueryCommand({
          TableName: deps.table,
          IndexName: JOBS_TABLE.gsiJobsByStatus.name,
          // A superset of the due jobs (see keyConditionBound); classifyPlanRow applies the exact rule.
          KeyConditionExpression: 'job_status = :s AND status_created_at < :bound',
          ExpressionAttributeValues: { ':s': status, ':bound': keyConditionBound(run.cutoff) },
          ...(here.startKey ? { ExclusiveStartKey: { ...here.startKey } } : {}),
          Limit: Math.min(settings.planPageJobs - consumed, QUERY_LIMIT),
        }),
      );
      const items = out.Items ?? [];
      let last = here.startKey;
      for (const [i, item] of items.entries()) {
        const verdict = classifyPlanRow(item, status, run.cutoff);
        if (!page.fits(verdict)) {
          next = { statusIndex: here.statusIndex, startKey: last };
          break scan;
        }
        page.add(verdict);
        consumed++;
        last = startKeyOf(item);
        if (consumed >= settings.planPageJobs) {
          const exhausted = i === items.length - 1 && out.LastEvaluatedKey === undefined;
          next = exhausted ? after(here.statusIndex) : { statusIndex: here.statusIndex, startKey: last };
          break scan;
        }
      }
      next = out.LastEvaluatedKey
        ? { statusIndex: here.statusIndex, startKey: startKeyOf(out.LastEvaluatedKey) }
        : after(here.statusIndex);
    }

    const groups = page.result();
    const files = layoutPlanFiles(run.runId, pageNo, groups, settings);
    await writePlanFindings(deps, run.runId, pageNo, page.quarantined);
    if (files.batches.length > 0) {
      // The jobs first: a batches file only ever names ranges that exist.
      await putBytes(deps, files.jobsKey, files.jobsBody, 'application/x-ndjson');
      await putBytes(deps, files.batchesKey, files.batchesBody, 'application/x-ndjson');
    }
    return { page, next, files, groupCount: groups.length };
  });

  const { page, next, files, groupCount } = value;
  return {
    run,
    page: pageNo,
    cursor: next === null ? null : encodeCursor(next),
    batches: files.batches.length,
    groups: groupCount,
    batchesKey: files.batchesKey,
    resultsPrefix: mapResultsPrefix(run.runId, pageNo),
    planQuarantined: page.quarantined.length,
    totals: {
      ...before,
      jobsPlanned: before.jobsPlanned + page.jobsPlanned,
      jobsQuarantined: before.jobsQuarantined + page.quarantined.length,
      requests: addCounts(before.requests, requests),
    },
  };
};
