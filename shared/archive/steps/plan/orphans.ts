import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { classifyJobKey, type JobObject, META_JOB_ID, META_SHOP_ID } from '../../../details';
import { validateJobId, validateShopId } from '../../../ids';
import { listAll } from '../../../s3/objects';
import { HOT_PREFIX } from '../../format';
import { readJobRows } from '../archive/job-rows';
import { reasonOf, reportableId } from '../caps';
import type { StepDeps } from '../context';
import type { PlannedJob, QuarantinedJob } from '../types';
import { plannedJob } from './plan-rows';

/**
 * The orphan sweep (docs/steady-state.md): hot objects of jobs whose row is gone — expired by TTL
 * before the job was archived — would stay hot forever, since nothing plans a job without a row.
 * A sweep walks the whole hot prefix once (that walk is also the page's listing) and plans, as
 * orphans, jobs whose newest object is older than `jobTtlDays` and whose row is missing. That age is
 * safe: a row expires `jobTtlDays` after completion, and a job's objects are written before it
 * completes, so an object younger than that may belong to a job whose row still exists or is still to
 * be written (the writer writes S3 first).
 *
 * When: the first page that walks the prefix for its planned jobs anyway sweeps in that walk once the
 * last sweep is SWEEP_WITH_WALK_MS old: the run that archives a month (its jobs are spread over the
 * whole prefix) sweeps for no extra LIST. A run sweeps on its own, idle or not, only when the last
 * sweep is SWEEP_EVERY_MS old (a bucket with no month coming due). An orphan is at least
 * `jobTtlDays` old when it becomes one; it waits at most a month more.
 */
export const SWEEP_WITH_WALK_MS = 7 * 86_400_000;
export const SWEEP_EVERY_MS = 31 * 86_400_000;

/** Status an orphan is archived under: its row (and so its status) expired before archival. */
export const ORPHAN_STATUS = 'ROW_EXPIRED';

export interface Orphan {
  readonly shopId: string;
  readonly month: string;
  readonly job: PlannedJob;
}

export interface HotSweep {
  /** Hot objects of the wanted jobs and of the orphans. */
  readonly listing: Map<string, JobObject[]>;
  readonly orphans: Orphan[];
  /** Old jobs without a row whose objects do not say their shop: kept and reported. */
  readonly unattributed: QuarantinedJob[];
  /** Every other hot job the walk saw (not wanted, no orphan): late rows are looked for among them (late-rows.ts). */
  readonly others: Set<string>;
}

const toJobObject = (jobId: string, o: { key: string; size: number; etag: string; lastModified?: Date }) => ({
  key: o.key,
  size: o.size,
  etag: o.etag,
  lastModified: o.lastModified,
  kind: classifyJobKey(jobId, o.key),
});

const invalidIdReason = (
  jobId: string,
  key: string,
): { key: string; reason: string; objects: number } | null => {
  try {
    validateJobId(jobId);
    return null;
  } catch (err) {
    return { key, reason: reasonOf(err), objects: 0 };
  }
};

export const sweepHot = async (deps: StepDeps, wanted: ReadonlySet<string>): Promise<HotSweep> => {
  const listing = new Map<string, JobObject[]>();
  const oldBefore = deps.clock().getTime() - deps.settings.jobTtlDays * 86_400_000;
  const candidates: Array<{ jobId: string; objects: JobObject[]; newest: number }> = [];
  const others = new Set<string>();
  // A job's keys are contiguous in key order: decide each job as the walk leaves it.
  const state: { current: { jobId: string; objects: JobObject[] } | null } = { current: null };
  const unattributed: QuarantinedJob[] = [];
  // A prefix whose segment is no valid job id (not written by this library's writer: a non-ASCII id,
  // one past 64 characters): no key may be built from it, so it is never archived. It is kept and
  // reported at every sweep (the run's report, `audit`'s orphans), never a halt.
  const invalid = new Map<string, { key: string; reason: string; objects: number }>();
  const close = () => {
    if (!state.current) return;
    const { jobId, objects } = state.current;
    if (wanted.has(jobId)) listing.set(jobId, objects);
    else {
      others.add(jobId);
      const newest = Math.max(...objects.map((o) => o.lastModified?.getTime() ?? Number.POSITIVE_INFINITY));
      if (newest < oldBefore) candidates.push({ jobId, objects, newest });
    }
    state.current = null;
  };
  for await (const o of listAll(deps.s3, deps.bucket, HOT_PREFIX)) {
    const jobId = o.key.slice(HOT_PREFIX.length).split('/')[0] ?? '';
    const bad = invalid.get(jobId) ?? invalidIdReason(jobId, o.key);
    if (bad) {
      invalid.set(jobId, { ...bad, objects: bad.objects + 1 });
      continue;
    }
    if (state.current?.jobId !== jobId) {
      close();
      state.current = { jobId, objects: [] };
    }
    state.current.objects.push(toJobObject(jobId, o));
  }
  close();
  for (const [jobId, bad] of invalid) {
    unattributed.push({
      shopId: '(none)',
      jobId: reportableId(jobId),
      reason: `hot prefix is not a valid job id (${bad.reason}): ${bad.objects} object(s) from ${reportableId(bad.key)} kept, never archived`,
    });
  }

  // Attribute each candidate to its shop (the writer's `shop-id` metadata), then ask for its row.
  const byShop = new Map<string, typeof candidates>();
  for (const c of candidates) {
    const first = c.objects[0];
    const head = first
      ? await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: first.key }))
      : undefined;
    const meta = head?.Metadata ?? {};
    let shopId: string | null = null;
    try {
      shopId = meta[META_JOB_ID] === c.jobId ? validateShopId(meta[META_SHOP_ID]) : null;
    } catch {
      shopId = null;
    }
    if (shopId === null) {
      unattributed.push({
        shopId: reportableId(meta[META_SHOP_ID] ?? '(none)'),
        jobId: reportableId(c.jobId),
        reason:
          'hot objects older than jobTtlDays without a row, and without shop-id/job-id metadata naming this job',
      });
      continue;
    }
    byShop.set(shopId, [...(byShop.get(shopId) ?? []), c]);
  }
  const orphans: Orphan[] = [];
  for (const [shopId, list] of byShop) {
    const rows = await readJobRows(
      deps,
      shopId,
      list.map((c) => c.jobId),
    );
    for (const c of list) {
      if (rows.has(c.jobId)) continue;
      // The newest object is the last thing known of the job: its archive month.
      const at = new Date(c.newest).toISOString();
      listing.set(c.jobId, c.objects);
      others.delete(c.jobId);
      orphans.push({
        shopId,
        month: at.slice(0, 7),
        job: plannedJob(c.jobId, ORPHAN_STATUS, at),
      });
    }
  }
  return { listing, orphans, unattributed, others };
};
