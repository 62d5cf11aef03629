import { truncate } from '../../../text';
import { CAPS } from '../caps';
import { isObj } from '../shape';
import type { GroupDone, GroupFailed, GroupResult, RunTotals } from '../types';

/** Pure bookkeeping of Tally and Report. */

export const isFailed = (r: GroupResult): r is GroupFailed => (r as GroupFailed).failed === true;
export const isDone = (r: GroupResult): r is GroupDone => !isFailed(r);

/**
 * Totals after one page's group results (failed groups count only as failed: nothing of theirs was
 * committed). Requests are not in the results: each batch's `overhead` carries its groups' (Tally).
 */
export const addResults = (totals: RunTotals, results: readonly GroupResult[]): RunTotals => {
  const t: RunTotals = { ...totals, requests: { ...totals.requests } };
  // Packed groups name their batch's shared part each (one part, many segments): counted once.
  const parts = new Set<string>();
  for (const r of results) {
    if (isFailed(r)) {
      t.groupsFailed++;
      continue;
    }
    const a = r.archive;
    const d = r.delete;
    t.groupsOk++;
    t.jobsArchived += a.archived;
    t.jobsSkipped += a.skipped;
    t.jobsQuarantined += a.quarantinedCount;
    if (a.partName && !parts.has(a.partName)) {
      parts.add(a.partName);
      t.partsWritten++;
    }
    t.bytesIn += a.bytesIn;
    t.bytesOut += a.bytesOut;
    t.objectsDeleted += d.objectsDeleted;
    t.objectsKept += d.objectsKept;
    t.deleteErrors += d.deleteErrorCount;
    t.jobsDeleted += d.jobsCompleted;
  }
  return t;
};

/**
 * A Lambda error's Cause is JSON (`errorType`, `errorMessage`, `trace`); the message is what an
 * operator needs, the stack is not.
 */
export const condenseCause = (cause: string): string => {
  try {
    const v: unknown = JSON.parse(cause);
    if (isObj(v) && typeof v.errorMessage === 'string') return truncate(v.errorMessage, CAPS.reason * 2);
  } catch {
    // not JSON: keep the text
  }
  return truncate(cause, CAPS.reason * 2);
};

export const failuresOf = (results: readonly GroupResult[]) =>
  results.filter(isFailed).map((r) => ({
    shopId: r.group.shopId,
    month: r.group.month,
    error: truncate(r.error, CAPS.reason),
    cause: condenseCause(r.cause),
  }));
