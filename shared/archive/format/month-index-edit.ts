import { type IndexedJob, type IndexedPart, jobEntries, type MonthIndex } from './month-index';

/** Adds a verified part and its job entries. Idempotent: committing the same part twice changes nothing. */
export const commitPart = (
  index: MonthIndex,
  part: IndexedPart,
  jobs: Readonly<Record<string, IndexedJob>>,
  at: string,
): MonthIndex => {
  if (index.parts.some((p) => p.name === part.name)) return index;
  const merged: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  for (const [jobId, entry] of Object.entries(jobs)) merged[jobId] = [...jobEntries(merged, jobId), entry];
  return { ...index, updated_at: at, parts: [...index.parts, part], jobs: merged };
};

/**
 * Marks the given entries (by part) of each job as deleted by `runId`, with the number of its sources
 * now gone, and drops their source manifests. Entries already marked keep their mark.
 */
export const markDeleted = (
  index: MonthIndex,
  done: ReadonlyArray<{ jobId: string; part: string; objects?: number }>,
  at: string,
  runId?: string,
): MonthIndex => {
  if (done.length === 0) return index;
  const jobs: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  for (const { jobId, part, objects } of done) {
    const target = jobEntries(jobs, jobId).find((e) => e.part === part);
    jobs[jobId] = jobEntries(jobs, jobId).map((e) =>
      e.part !== part &&
      e.deleted_at === null &&
      e.rearchive !== undefined &&
      e.completed_at === target?.completed_at
        ? // An entry this one archived again: its objects were in the re-archive, now gone too.
          {
            ...e,
            deleted_at: at,
            sources: [],
            ...(runId !== undefined ? { deleted_by: runId } : {}),
            objects_deleted: 0,
          }
        : e.part === part && e.deleted_at === null
          ? {
              ...e,
              deleted_at: at,
              sources: [],
              ...(runId !== undefined ? { deleted_by: runId } : {}),
              ...(objects !== undefined ? { objects_deleted: objects } : {}),
            }
          : e,
    );
  }
  return { ...index, updated_at: at, jobs };
};

/**
 * Marks the latest entry of each job (when still in `part` and undeleted) `rearchive`: its hot prefix
 * holds objects that entry does not cover, so nothing of the job was deleted and the next archive of
 * the group archives it again (classify.ts).
 */
export const markRearchive = (
  index: MonthIndex,
  jobs: ReadonlyArray<{ jobId: string; part: string }>,
  at: string,
): MonthIndex | null => {
  const next: Record<string, readonly IndexedJob[]> = { ...index.jobs };
  let changed = false;
  for (const { jobId, part } of jobs) {
    const entries = jobEntries(next, jobId);
    const last = entries[entries.length - 1];
    if (!last || last.part !== part || last.deleted_at !== null || last.rearchive !== undefined) continue;
    next[jobId] = [...entries.slice(0, -1), { ...last, rearchive: at }];
    changed = true;
  }
  return changed ? { ...index, updated_at: at, jobs: next } : null;
};
