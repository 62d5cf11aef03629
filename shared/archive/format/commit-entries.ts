import { type IndexedJob, latestEntry, type MonthIndex, partByName } from './month-index';
import { commitPart } from './month-index-edit';
import type { VerifiedPart } from './staging';

/**
 * Pure: the index after committing a verified part. Idempotent (a part already in the index changes
 * nothing) and a job is in the index at most once per archival: a job whose latest entry already has
 * this completed_at (committed by a concurrent or earlier run) gets no second entry — its record in
 * this part is then simply never pointed at. A job whose newest archival is a settled part's record
 * (no entry left: `settled`, the completion that record holds, read by the caller) is compared with
 * that record the same way; one with no such record read (a part in a restore class) gets one more
 * entry, a second archival of it that readers merge.
 */
export const applyCommit = (
  index: MonthIndex,
  verified: VerifiedPart,
  at: string,
  /**
   * Jobs the part archives again (classify.ts `rearchive`) → the part of the entry it follows: added
   * only while that entry is still the job's latest (a concurrent run's re-archive wins once).
   */
  rearchived?: ReadonlyMap<string, string>,
  /** Job → a settled part's record of it (that part's name, the completion it holds). */
  settled?: ReadonlyMap<string, { readonly part: string; readonly completed_at: string }>,
): { index: MonthIndex | null; added: number } => {
  if (partByName(index, verified.part.name)) {
    return { index: null, added: entriesOf(index, verified.part.name) };
  }
  const entries: Record<string, IndexedJob> = {};
  for (const [jobId, e] of Object.entries(verified.jobs)) {
    const latest = latestEntry(index, jobId);
    const follows = rearchived?.get(jobId);
    // The newest archival: the settled record when its part was committed after the latest entry's.
    const s = settled?.get(jobId);
    const order = (name: string) => index.parts.findIndex((p) => p.name === name);
    const archived =
      s !== undefined && (latest === undefined || order(s.part) > order(latest.part))
        ? s.completed_at
        : latest?.completed_at;
    if (follows !== undefined ? latest?.part !== follows : archived === e.completed_at) continue;
    entries[jobId] = { ...e, committed_at: at, deleted_at: null };
  }
  const next = commitPart(index, { ...verified.part, committed_at: at }, entries, at);
  return { index: next, added: Object.keys(entries).length };
};

/**
 * Entries pointing at a part (what an earlier, successful commit of it added); a settled part, whose
 * entries left the index, counts its `job_count` (it settles only when every record had its entry).
 */
export const entriesOf = (index: MonthIndex, part: string): number => {
  const p = partByName(index, part);
  if (p?.settled) return p.job_count;
  return Object.values(index.jobs).reduce((n, list) => n + list.filter((e) => e.part === part).length, 0);
};
