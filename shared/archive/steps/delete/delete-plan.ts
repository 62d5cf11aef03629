import type { JobObject } from '../../../details';
import { normalizeEtag } from '../../../s3/objects';
import { type IndexedJob, latestEntry, type MonthIndex, settlePart } from '../../format';
import type { DeletedEarlier, PlannedJob } from '../types';

/**
 * Pure decisions of the delete step. Only hot objects that are byte-for-byte (key, size, ETag) what a
 * committed, verified archive entry recorded are ever deleted.
 */
export interface EligibleJob {
  readonly jobId: string;
  readonly entry: IndexedJob;
}

/**
 * Planned jobs whose latest index entry is not deleted yet, is of the planned completion (not an older
 * archival of a job retried since) and was committed at least `graceHours` before `asOfMs`.
 */
export const eligibleForDelete = (
  index: MonthIndex,
  planned: readonly PlannedJob[],
  asOfMs: number,
  graceHours: number,
): EligibleJob[] => {
  const latestCommit = asOfMs - graceHours * 3_600_000;
  const out: EligibleJob[] = [];
  for (const job of planned) {
    const entry = latestEntry(index, job.job_id);
    if (!entry || entry.deleted_at !== null || entry.completed_at !== job.completed_at) continue;
    const committed = Date.parse(entry.committed_at);
    if (Number.isNaN(committed) || committed > latestCommit) continue;
    out.push({ jobId: job.job_id, entry });
  }
  return out.sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
};

/**
 * Jobs committed for their planned completion, not deleted, whose grace period has not passed: a
 * later run must come back for their sources (the plan watermark will not plan them again).
 */
export const waitingForGrace = (
  index: MonthIndex,
  planned: readonly PlannedJob[],
  asOfMs: number,
  graceHours: number,
): number => {
  const latestCommit = asOfMs - graceHours * 3_600_000;
  return planned.filter((job) => {
    const entry = latestEntry(index, job.job_id);
    return (
      entry !== undefined &&
      entry.deleted_at === null &&
      entry.completed_at === job.completed_at &&
      !(Date.parse(entry.committed_at) <= latestCommit)
    );
  }).length;
};

/**
 * Listed objects split into those the entry archived (to delete) and everything else (kept).
 * `changed`: kept objects under a key the manifest names (rewritten since): once the removals are
 * done, the entry's sources less these are gone — what the report counts as deleted.
 */
export const matchSources = (
  entry: IndexedJob,
  listed: readonly Pick<JobObject, 'key' | 'size' | 'etag'>[],
): { remove: Array<{ key: string; etag: string }>; kept: number; changed: number } => {
  const archived = new Map(entry.sources.map((s) => [s.key, s]));
  const remove: Array<{ key: string; etag: string }> = [];
  let kept = 0;
  let changed = 0;
  for (const o of listed) {
    const s = archived.get(o.key);
    const etag = normalizeEtag(o.etag);
    if (s && s.size === o.size && s.etag === etag && etag !== '') remove.push({ key: o.key, etag });
    else {
      kept++;
      if (s) changed++;
    }
  }
  return { remove, kept, changed };
};

/**
 * What a run reports as deleted for its planned jobs: the entries IT marked deleted (in this attempt
 * or an earlier one of the same run), each with the count recorded when marked. The index write is
 * conditional, so each entry is marked by exactly one run: counted once per effect, across retries.
 */
export const deletedByRun = (
  index: MonthIndex,
  planned: readonly Pick<PlannedJob, 'job_id' | 'completed_at'>[],
  runId: string,
): { jobs: number; objects: number } => {
  let jobs = 0;
  let objects = 0;
  for (const job of planned) {
    const e = latestEntry(index, job.job_id);
    if (!e || e.completed_at !== job.completed_at || e.deleted_by !== runId) continue;
    jobs++;
    objects += e.objects_deleted ?? 0;
  }
  return { jobs, objects };
};

/**
 * The parts this run's delete settled, and their jobs (each part's `job_count`). Their entries left the
 * index with the per-job object counts: when an earlier attempt of the run settled them (its index
 * write landed, then it died), the objects it deleted are known only as that attempt's
 * (DeleteSummary.deletedEarlier; the index names the parts), never as a count of 0.
 */
export const settledByRun = (index: MonthIndex, runId: string): DeletedEarlier => {
  const mine = index.parts.filter((p) => p.settled?.deleted_by === runId);
  return { jobs: mine.reduce((n, p) => n + p.job_count, 0), parts: mine.length };
};

/**
 * The index with each named part settled (settlePart): those the delete just marked. A part that does
 * not meet the condition (an entry undeleted, a source kept, records out of id order) keeps its entries.
 */
export const settleParts = (index: MonthIndex, parts: ReadonlySet<string>): MonthIndex => {
  let out = index;
  for (const name of parts) out = settlePart(out, name);
  return out;
};

/** DeleteObjects takes at most 1,000 keys. */
export const chunks = <T>(items: readonly T[], size = 1000): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};
