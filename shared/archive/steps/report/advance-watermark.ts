import { forgottenAtOf } from '../../../erasure/summary';
import { readWatermarkWithSummary } from '../../../erasure/summary-store';
import { CorruptObjectError } from '../../../errors';
import { validateJobId, validateShopId } from '../../../ids';
import { TERMINAL_STATUSES } from '../../../jobs/schema';
import { getObjectBytes } from '../../../s3/objects';
import { planBatchesKey } from '../../format';
import type { StepDeps } from '../context';
import { parseBatch } from '../events';
import { type RetryJob, readCarried, uniqueRetry, WATERMARK_FORMAT, writeWatermark } from '../plan/watermark';
import { readBatchJobs } from '../run-files/planned-jobs';
import type { PageState, PlannedGroup, QuarantinedJob } from '../types';

/** A failed group, or an interrupted batch (all its groups), and the page that planned it. */
export type FailedGroupAt =
  | {
      readonly page: number;
      readonly shopId: string;
      readonly month: string;
      /** Its jobs are committed; their sources wait for the grace period (or a failed delete). */
      readonly graceOnly?: boolean;
    }
  | { readonly page: number; readonly batch: number };

const validRetry = (shopId: string, jobId: string): RetryJob | null => {
  try {
    return { shopId: validateShopId(shopId), jobId: validateJobId(jobId) };
  } catch {
    // An id that fails validation never will (keys are immutable): reported each time it is read, not retried.
    return null;
  }
};

/**
 * The jobs of the run's failed groups and interrupted batches, from the pages' plan files (read only
 * then). They are retried once what their attempts may have left (an abandoned part, its staging
 * docs) is old enough to collect (pending-gc.ts), which the archive step of their group then does.
 */
const failedJobs = async (
  deps: StepDeps,
  state: PageState,
  failed: readonly FailedGroupAt[],
): Promise<RetryJob[]> => {
  const out: RetryJob[] = [];
  const now = deps.clock().getTime();
  // Sources are deleted once the grace period after their commit (a moment ago) has passed: the
  // planning run measures it with its own graceHours.
  const graceFrom = new Date(now).toISOString();
  const pages = [...new Set(failed.map((f) => f.page))];
  for (const page of pages) {
    const key = planBatchesKey(state.run.runId, page);
    const got = await getObjectBytes(deps.s3, deps.bucket, key);
    if (!got) throw new CorruptObjectError(key, 'the plan of a page with failed groups is missing');
    const here = failed.filter((f) => f.page === page);
    const groups = new Map<string, boolean>();
    for (const f of here) if ('shopId' in f) groups.set(`${f.shopId}\u0000${f.month}`, f.graceOnly === true);
    const batches = new Set(here.flatMap((f) => ('batch' in f ? [f.batch] : [])));
    const lines = got.bytes
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '');
    const wanted: { group: PlannedGroup; graceOnly: boolean }[] = [];
    for (const line of lines) {
      const b = parseBatch(JSON.parse(line), state.run);
      for (const g of b.groups) {
        const key = `${g.shopId}\u0000${g.month}`;
        if (!batches.has(b.batch) && !groups.has(key)) continue;
        wanted.push({ group: g, graceOnly: !batches.has(b.batch) && groups.get(key) === true });
      }
    }
    // Their planned jobs in one ranged GET of the page's file (its groups' lines are contiguous).
    const jobs = await readBatchJobs(
      deps,
      state.run,
      wanted.map((w) => w.group),
    );
    for (const { group: g, graceOnly } of wanted) {
      // Failed or interrupted: retried by the next run, and once more when its leftovers are
      // collectable (RetryJob.revisit). Waiting for the grace period: once, after it.
      for (const j of jobs.get(g))
        out.push(
          graceOnly
            ? { shopId: g.shopId, jobId: j.job_id, graceFrom, completedAt: j.completed_at, status: j.status }
            : { shopId: g.shopId, jobId: j.job_id, revisit: true },
        );
    }
  }
  return out;
};

/**
 * Report's last act: the watermark moves to where this run's Plan left it, and what the run could not
 * finish — quarantined jobs and the jobs of failed groups — becomes the retry list the next run reads
 * by key. Conditional on the document Plan read (two overlapping runs merge); not written when
 * nothing changed, and never in a dry run.
 */
export const advanceWatermark = async (
  deps: StepDeps,
  state: PageState,
  quarantined: readonly QuarantinedJob[],
  failed: readonly FailedGroupAt[],
): Promise<'unchanged' | 'written' | 'merged' | 'dry-run' | undefined> => {
  const { run, scan } = state;
  if (!scan) return undefined;
  if (run.dryRun) return 'dry-run';
  const retry = uniqueRetry([
    ...quarantined.map((q) => validRetry(q.shopId, q.jobId)).filter((r): r is RetryJob => r !== null),
    ...(await failedJobs(deps, state, failed)),
    ...(scan.carried > 0 ? await readCarried(deps, run.runId) : []),
  ]);
  const idle =
    scan.from !== null &&
    scan.from.cutoff === run.cutoff &&
    scan.retried === 0 &&
    scan.carried === 0 &&
    scan.orphans === 0 &&
    scan.sweptAt === (scan.from.sweptAt ?? null) &&
    retry.length === 0 &&
    TERMINAL_STATUSES.every((s) => scan.from?.keys[s] === scan.next[s]);
  if (idle) return 'unchanged';
  // No retry of a forgotten shop (docs/erasure.md): a run that overlapped its forget must not write
  // the shop back into the watermark (the stored summary says which shops are forgotten).
  return writeWatermark(
    deps,
    scan.etag,
    {
      format: WATERMARK_FORMAT,
      cutoff: run.cutoff,
      keys: scan.next,
      retry,
      runId: run.runId,
      ...(scan.sweptAt !== null ? { sweptAt: scan.sweptAt } : {}),
    },
    (r, erasure) => forgottenAtOf(erasure, r.shopId) !== undefined,
    // A lost watermark's summary rebuilt from the tombstones and the ledger, never dropped.
    readWatermarkWithSummary,
  );
};
