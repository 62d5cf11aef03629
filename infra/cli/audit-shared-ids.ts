import type { AuditRow, HotPrefix } from './audit-model';

/**
 * Job ids are unique per shop only (docs/wire-format.md), and the hot layout `job-details/{job_id}/`
 * has no shop in it: a job id with rows in several shops and a hot prefix may hold several shops'
 * objects there. Nothing is lost by that (readers and the archiver go by each object's `shop-id`
 * metadata), but a flush key or `platform-data.json` written by both shops was overwritten at write
 * time, so audit names them. Pure, from what audit already read: no request of its own.
 */
export interface SharedJobId {
  readonly jobId: string;
  /** Shops with a row for the id, sorted. */
  readonly shops: readonly string[];
  /** Objects under the shared hot prefix. */
  readonly hotObjects: number;
}

export const sharedJobIds = (
  rows: readonly Pick<AuditRow, 'shopId' | 'jobId'>[],
  hot: ReadonlyMap<string, Pick<HotPrefix, 'objects'>>,
): SharedJobId[] => {
  const shops = new Map<string, Set<string>>();
  for (const r of rows) {
    if (!hot.has(r.jobId)) continue;
    let s = shops.get(r.jobId);
    if (!s) {
      s = new Set();
      shops.set(r.jobId, s);
    }
    s.add(r.shopId);
  }
  return [...shops]
    .filter(([, s]) => s.size > 1)
    .map(([jobId, s]) => ({ jobId, shops: [...s].sort(), hotObjects: hot.get(jobId)?.objects.size ?? 0 }))
    .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
};
