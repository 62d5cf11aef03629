import { type JobDetails, type JsonObject, mergeAllJobDetails } from '../../../details';
import { type InlineDetails, parseInlineDetails } from '../../../details/inline';
import { type ArchivableRow, archivableRow, itemToJson } from '../../../jobs/row-json';
import { normalizedOrAsIs } from '../../../time';
import { type ArchivedJobMeta, latestEntry, type MonthIndex, partByName } from '../../format';
import { reasonOf } from '../caps';
import { plannedJob } from '../plan/plan-rows';
import type { PlannedJob } from '../types';
import type { JobRowSnapshot } from './job-rows';
import type { SettledArchival } from './settled-archivals';

/**
 * A settled archival that is the job's newest (settled-archivals.ts): its part was committed after
 * the part of the job's latest entry, or the job has no entry. A job retried between its archival and
 * that part's delete keeps the older entry (undeleted, never settled) while its newer part settles:
 * then the settled record, not the older entry, is the archival to compare the plan with.
 */
const newerSettled = (
  index: MonthIndex,
  latest: { readonly part: string } | undefined,
  s: SettledArchival | undefined,
): SettledArchival | undefined => {
  if (s === undefined || latest === undefined) return s;
  const at = (name: string) => index.parts.findIndex((p) => p.name === name);
  return at(s.part) > at(latest.part) ? s : undefined;
};

/**
 * Pure decisions of the archive step. A job is `skip` when its latest index entry has the planned
 * completed_at: that archival is committed (a retry changes completed_at, and a retried job gets a new
 * entry) — unless its hot prefix holds what that archival does not: the delete step marked the entry
 * `rearchive` (an object rewritten or added after the commit; it deleted nothing of the job), or the
 * entry's objects are deleted yet the prefix holds objects again (written after the delete). Those are
 * `rearchive`: archived again, as a new entry of the same completion that readers merge with the old.
 * `hot`: the listing of the planned jobs' prefixes, when the caller has it.
 *
 * A job with no entry whose month has settled parts (their entries left the index): `settled` says
 * what their records hold (settled-archivals.ts). A record of the planned completion decides as a
 * deleted entry would (skip, or `rearchive` when the prefix holds objects again); a part that could
 * not be read without a restore gives `archive` — a second archival of the same completion, which
 * readers merge: a job is never skipped on its directory's word alone.
 */
export const classifyPlanned = (
  job: PlannedJob,
  index: MonthIndex,
  hot?: ReadonlyMap<string, readonly unknown[]>,
  settled?: ReadonlyMap<string, SettledArchival>,
): 'skip' | 'archive' | 'rearchive' => {
  const latest = latestEntry(index, job.job_id);
  const s = newerSettled(index, latest, settled?.get(job.job_id));
  if (s?.kind === 'record') {
    if (s.completed_at !== job.completed_at) return 'archive';
    return (hot?.get(job.job_id)?.length ?? 0) > 0 ? 'rearchive' : 'skip';
  }
  if (latest === undefined) return 'archive';
  if (latest.completed_at !== job.completed_at) return 'archive';
  if (latest.rearchive !== undefined) return 'rearchive';
  if (latest.deleted_at !== null && (hot?.get(job.job_id)?.length ?? 0) > 0) return 'rearchive';
  return 'skip';
};

/**
 * Planned jobs whose latest archival (of the planned completion) is in a part committed by `runId`:
 * an earlier attempt of the same run archived them, so the run reports them archived, not skipped.
 * A job of a part that settled since (no entry) counts by its record (`settled`).
 */
export const archivedByRun = (
  index: MonthIndex,
  planned: readonly PlannedJob[],
  runId: string,
  settled?: ReadonlyMap<string, SettledArchival>,
): number =>
  planned.filter((j) => {
    const e = latestEntry(index, j.job_id);
    const s = newerSettled(index, e, settled?.get(j.job_id));
    if (s?.kind === 'record') return s.completed_at === j.completed_at && s.run_id === runId;
    if (e === undefined) return false;
    return e.completed_at === j.completed_at && partByName(index, e.part)?.run_id === runId;
  }).length;

/**
 * The row moved on since Plan read the GSI (retried: IN_PROGRESS now, or completed again). Its hot
 * objects may be changing under us, so it waits for a later run, which plans its new completion. A
 * row that is gone (TTL) has not changed: it is archived from the planned attributes.
 */
export const changedSincePlan = (job: PlannedJob, row: JobRowSnapshot | undefined): boolean =>
  row !== undefined && (row.job_status !== job.status || row.completed_at !== job.completed_at);

/**
 * The planned job with every projected attribute it lacks taken from its row: a job planned from its
 * retry entry (plan.ts committedRetry) carries none, and one archived again is archived with its row's.
 * An attribute the plan has (the GSI projects the row's own) is kept.
 */
export const withRowAttributes = (job: PlannedJob, row: JobRowSnapshot | undefined): PlannedJob => {
  if (row === undefined) return job;
  const fromRow = plannedJob(job.job_id, job.status, job.completed_at, row.item);
  const out: Record<string, unknown> = { ...job };
  for (const [k, v] of Object.entries(fromRow)) if (out[k] === null) out[k] = v;
  return out as unknown as PlannedJob;
};

/** A timestamp as archived in `job`: normalized when it parses, else as written (the row keeps it too). */
const time = normalizedOrAsIs;

/** The job as archived: planned (GSI) attributes plus the row's counters (null when the row is gone). */
export const archivedMeta = (job: PlannedJob, row: JobRowSnapshot | undefined): ArchivedJobMeta => ({
  status: job.status,
  created_at: time(row?.created_at ?? job.created_at),
  started_at: time(row?.started_at ?? job.started_at),
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

const COUNTERS = [
  'total_items',
  'processed_items',
  'failed_items',
  'skipped_items',
  'conflict_items',
] as const;

/**
 * A counter present on the row but not a whole number ≤ 2^53−1 (read exactly, 2^63−1 is a
 * RawJsonNumber): the record's counters are numbers, so the job waits in quarantine, hot copies kept,
 * with the value quoted. An absent counter is null in the record.
 */
export const counterProblem = (item: Readonly<Record<string, unknown>>): string | null => {
  for (const name of COUNTERS) {
    const v = item[name];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      const text = JSON.stringify(typeof v === 'bigint' ? v.toString() : v) ?? String(v);
      return `row counter ${name} is ${text.slice(0, 60)}, not a whole number between 0 and 2^53−1`;
    }
  }
  return null;
};

/** Everything a job record holds besides its sources, or why the job is quarantined. */
export type AssembledJob =
  | {
      readonly kind: 'ok';
      readonly meta: ArchivedJobMeta;
      readonly details: JobDetails;
      readonly platformData: JsonObject | null;
      readonly row: ArchivableRow | null;
      readonly inline: readonly string[];
    }
  | { readonly kind: 'quarantine'; readonly reason: string };

/**
 * Pure: the record of one job from its planned entry, its row (undefined when expired) and its hot
 * objects. A pre-migration row's inline details come first (the design's dual-read prefers them) and
 * the S3 objects are merged in; an inline attribute that does not parse quarantines the job, quoting
 * the value. The row is archived whole, less what is stored elsewhere in the record.
 */
export const assembleJob = (
  job: PlannedJob,
  row: JobRowSnapshot | undefined,
  hot: { details: JobDetails; platformData: JsonObject | null },
): AssembledJob => {
  const meta = archivedMeta(job, row);
  if (row === undefined) return { kind: 'ok', meta, ...hot, row: null, inline: [] };
  const counters = counterProblem(row.item);
  if (counters !== null) return { kind: 'quarantine', reason: counters };
  let inline: InlineDetails;
  try {
    inline = parseInlineDetails(itemToJson(row.item));
  } catch (err) {
    return { kind: 'quarantine', reason: reasonOf(err) };
  }
  return {
    kind: 'ok',
    meta,
    details: inline.details ? mergeAllJobDetails([inline.details, hot.details]) : hot.details,
    platformData: inline.platformData ?? hot.platformData,
    row: archivableRow(row.item, inline.attributes),
    inline: inline.attributes,
  };
};
