import { latestEntry, type MonthIndex } from '../month-index';
import type { ArchivedJobMeta } from '../records';
import type { JobRowSnapshot } from './job-rows';
import type { PlannedJob } from './types';

/**
 * Pure decisions of the archive step. A job is `skip` when its latest index entry has the planned
 * completed_at: that archival is committed and the sources have not changed since (a retry changes
 * completed_at, and a retried job gets a new entry).
 */
export const classifyPlanned = (job: PlannedJob, index: MonthIndex): 'skip' | 'archive' =>
  latestEntry(index, job.job_id)?.completed_at === job.completed_at ? 'skip' : 'archive';

/**
 * The row moved on since Plan read the GSI (retried: IN_PROGRESS now, or completed again). Its hot
 * objects may be changing under us, so it waits for a later run, which plans its new completion. A
 * row that is gone (TTL) has not changed: it is archived from the planned attributes.
 */
export const changedSincePlan = (job: PlannedJob, row: JobRowSnapshot | undefined): boolean =>
  row !== undefined && (row.job_status !== job.status || row.completed_at !== job.completed_at);

/** The job as archived: planned (GSI) attributes plus the row's counters (null when the row is gone). */
export const archivedMeta = (job: PlannedJob, row: JobRowSnapshot | undefined): ArchivedJobMeta => ({
  status: job.status,
  created_at: row?.created_at ?? job.created_at,
  started_at: row?.started_at ?? job.started_at,
  completed_at: job.completed_at,
  job_type: job.job_type,
  platform: job.platform,
  total_items: row?.total_items ?? null,
  processed_items: row?.processed_items ?? null,
  failed_items: row?.failed_items ?? null,
  skipped_items: row?.skipped_items ?? null,
  conflict_items: row?.conflict_items ?? null,
  retry_count: job.retry_count,
  error_message: job.error_message,
});
