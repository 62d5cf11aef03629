import { ExactQueryCommand } from '../../../jobs/exact-commands';
import { JOBS_TABLE, TERMINAL_STATUSES } from '../../../jobs/schema';
import type { StepDeps } from '../context';
import type { ScanState } from '../types';
import { SWEEP_EVERY_MS } from './orphans';
import { classifyPlanRow, type RowVerdict } from './plan-rows';
import { windowStart } from './watermark';

/**
 * Rows that entered the GSI below the watermark (docs/steady-state.md, "Late rows"): a Python-indexer
 * job keyed at IN_PROGRESS that ran longer than the lateness window, a completion written back-dated,
 * a row restored after the runs passed its key. No Query from the watermark sees them, and nothing
 * says which rows they are — but their jobs still have hot objects, which an archived job has not.
 *
 * So the orphan sweep, which walks the whole hot prefix anyway (plan/orphans.ts: at most
 * SWEEP_EVERY_MS apart, usually in the walk of the run that archives a month), hands over the ids of
 * every hot job this page does not plan; each terminal status is read below its watermark (DynamoDB
 * only: no S3 request) and a due row whose job is among them is planned as usual, with its row.
 * Skipped: rows in the lateness window the main Query plans itself (not due at the previous cutoff),
 * and rows not due yet (a later sweep takes them). A job archived and waiting for its grace period
 * has hot objects too: planned again, it is found committed and waits as before (archive-group.ts).
 */
/**
 * The bound (docs/steady-state.md, "Late rows"): a terminal job with hot objects is archived with its
 * row, and its hot copies deleted, within this many days of the later of its due date and its row's
 * arrival in the GSI (plus the grace period): the next sweep (SWEEP_EVERY_MS apart at most) and the
 * daily schedule (1 day) plan it; the run after its grace deletes its hot copies (1 day).
 */
export const LATE_ROW_BOUND_DAYS = SWEEP_EVERY_MS / 86_400_000 + 2;

export const findLateRows = async (
  deps: StepDeps,
  cutoff: string,
  from: ScanState['from'],
  hotIds: ReadonlySet<string>,
): Promise<RowVerdict[]> => {
  // A run without a watermark reads the GSI from the beginning: nothing is below it.
  if (from === null || hotIds.size === 0) return [];
  const found: RowVerdict[] = [];
  for (const status of TERMINAL_STATUSES) {
    const watermark = from.keys[status];
    if (watermark === undefined) continue;
    const window = windowStart(from, status);
    let start: Record<string, unknown> | undefined;
    do {
      const out = await deps.ddb.send(
        new ExactQueryCommand({
          TableName: deps.table,
          IndexName: JOBS_TABLE.gsiJobsByStatus.name,
          KeyConditionExpression: 'job_status = :s AND status_created_at < :w',
          ExpressionAttributeValues: { ':s': status, ':w': watermark },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of out.Items ?? []) {
        const jobId = typeof item.sk === 'string' && item.sk.startsWith('JOB#') ? item.sk.slice(4) : null;
        if (jobId === null || !hotIds.has(jobId)) continue;
        const v = classifyPlanRow(item, status, cutoff);
        if (v.kind === 'later' || v.kind === 'seen') continue;
        // In the lateness window, a row not due at the previous cutoff is the main Query's to plan.
        const key = String(item.status_created_at);
        if (v.kind === 'plan' && window !== null && key >= window && v.job.completed_at >= from.cutoff)
          continue;
        found.push(v);
      }
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return found;
};
