import type { RunReport } from '../../shared/archive/steps/types';
import { formatBytes } from './output';

/** How a run ended, wherever it ran. */
export interface RunOutcome {
  readonly status: string;
  /** The execution output: the RunReport when it succeeded. */
  readonly output: unknown;
  readonly error?: string;
  readonly cause?: string;
  readonly executionArn?: string;
}

/** The short human summary of a run report (the execution output). Pure. */

const LIST_LIMIT = 10;

/** Tiny jobs can come out larger (every record is its own gzip member); say which way it went. */
const ratio = (bytesIn: number, bytesOut: number): string => {
  if (bytesIn <= 0 || bytesOut <= 0) return '';
  return bytesIn >= bytesOut
    ? ` (${(bytesIn / bytesOut).toFixed(1)}× smaller)`
    : ` (${(bytesOut / bytesIn).toFixed(1)}× larger)`;
};

/** Quarantine reasons grouped, most frequent first: `unsafe job id ×3`. */
export const reasonCounts = (items: readonly { reason: string }[]): [string, number][] => {
  const counts = new Map<string, number>();
  for (const q of items) {
    // Reasons may end in per-job detail after a colon; group by the part before it.
    const head = q.reason.split(': ')[0] ?? q.reason;
    counts.set(head, (counts.get(head) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
};

export const summarizeRunReport = (r: RunReport, where?: string): string[] => {
  const lines: string[] = [];
  lines.push(`run ${r.runId}${r.dryRun ? ' (DRY RUN: nothing written or deleted)' : ''}`);
  lines.push(`  now ${r.now}, archiving jobs completed before ${r.cutoff}; ${r.pages} plan page(s)`);
  // A dry run reports what a real run would do: say so on every figure it only predicts.
  const would = r.dryRun ? 'would be ' : '';
  lines.push(
    `  jobs:     ${r.jobsPlanned} planned: ${r.jobsArchived} ${would}archived, ${r.jobsSkipped} skipped, ${r.jobsQuarantinedCount} quarantined`,
  );
  lines.push(
    r.dryRun
      ? `  parts:    ${r.partsWritten} would be written, ${formatBytes(r.bytesIn)} of hot objects listed`
      : `  parts:    ${r.partsWritten} written, ${formatBytes(r.bytesIn)} in → ${formatBytes(r.bytesOut)} out${ratio(r.bytesIn, r.bytesOut)}`,
  );
  lines.push(
    `  deletes:  ${r.objectsDeleted} hot objects ${would}deleted (${r.jobsDeleted} jobs fully), ${r.objectsKept} ${r.dryRun ? 'would be ' : ''}kept, ${r.deleteErrors} errors`,
  );
  // Objects a retried attempt found deleted by the attempt before it (their parts settled): not counted.
  for (const e of (r.deletedEarlier ?? []).slice(0, LIST_LIMIT))
    lines.push(
      `            ${e.shopId} ${e.month}: ${e.jobs} jobs' objects deleted by an earlier attempt of this run, not counted (${e.parts} part(s) it settled)`,
    );
  const listed = r.deletedEarlier?.length ?? 0;
  const earlier = r.deletedEarlierCount ?? listed;
  if (earlier > LIST_LIMIT) {
    // The report's list is capped too (100): say how many of the rest it holds when not all.
    const inReport = Math.max(0, listed - LIST_LIMIT);
    const where = listed >= earlier ? 'the report lists them' : `the report lists ${inReport} of them`;
    lines.push(`            … ${earlier - LIST_LIMIT} more groups (${where})`);
  }
  lines.push(`  groups:   ${r.groupsOk} ok, ${r.groupsFailedCount} failed`);
  lines.push(`  requests: S3 ${r.requests.s3}, DynamoDB ${r.requests.dynamodb}`);
  const types = Object.entries(r.requests.byType ?? {});
  if (types.length > 0) lines.push(`            ${types.map(([t, n]) => `${t} ${n}`).join(', ')}`);
  if (r.jobsQuarantinedCount > 0) {
    lines.push(`  quarantined (${r.jobsQuarantinedCount}):`);
    for (const [reason, n] of reasonCounts(r.jobsQuarantined)) lines.push(`    ${n} × ${reason}`);
    for (const q of r.jobsQuarantined.slice(0, LIST_LIMIT))
      lines.push(`    ${q.shopId} ${q.jobId}: ${q.reason}`);
    if (r.jobsQuarantinedCount > LIST_LIMIT) lines.push(`    … ${r.jobsQuarantinedCount - LIST_LIMIT} more`);
  }
  if (r.groupsFailedCount > 0) {
    lines.push(`  failed groups (${r.groupsFailedCount}):`);
    for (const g of r.groupsFailed.slice(0, LIST_LIMIT)) {
      lines.push(`    ${g.shopId} ${g.month}: ${g.error}${g.cause ? ` — ${g.cause.split('\n')[0]}` : ''}`);
    }
    if (r.groupsFailedCount > LIST_LIMIT) lines.push(`    … ${r.groupsFailedCount - LIST_LIMIT} more`);
  }
  lines.push(
    r.reportKey === null
      ? '  report:   none filed (nothing planned: this summary is the whole report)'
      : `  report:   ${where ? `${where}/` : ''}${r.reportKey}`,
  );
  return lines;
};

/** Whether a value looks like a RunReport (the execution output), before trusting its fields. */
export const isRunReport = (v: unknown): v is RunReport => {
  const o = v as Partial<RunReport> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o.runId === 'string' &&
    typeof o.jobsPlanned === 'number' &&
    typeof o.jobsArchived === 'number' &&
    Array.isArray(o.jobsQuarantined) &&
    Array.isArray(o.groupsFailed) &&
    typeof o.requests === 'object'
  );
};
