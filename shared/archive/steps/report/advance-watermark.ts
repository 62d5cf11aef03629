import { CorruptObjectError } from '../../../errors';
import { validateJobId, validateShopId } from '../../../ids';
import { TERMINAL_STATUSES } from '../../../jobs/schema';
import { getObjectBytes } from '../../../s3/objects';
import { planBatchesKey } from '../../format/keys';
import type { StepDeps } from '../context';
import { parseBatch } from '../events';
import { readPlannedJobs } from '../plan/planned-jobs';
import { type RetryJob, uniqueRetry, WATERMARK_FORMAT, writeWatermark } from '../plan/watermark';
import type { PageState, QuarantinedJob } from '../types';

/** A failed group and the page that planned it. */
export interface FailedGroupAt {
  readonly page: number;
  readonly shopId: string;
  readonly month: string;
}

const validRetry = (shopId: string, jobId: string): RetryJob | null => {
  try {
    return { shopId: validateShopId(shopId), jobId: validateJobId(jobId) };
  } catch {
    // An id that fails validation never will (keys are immutable): reported each time it is read, not retried.
    return null;
  }
};

/** The jobs of the run's failed groups, from the pages' plan files (read only when a group failed). */
const failedJobs = async (deps: StepDeps, state: PageState, failed: readonly FailedGroupAt[]) => {
  const out: RetryJob[] = [];
  const pages = [...new Set(failed.map((f) => f.page))];
  for (const page of pages) {
    const key = planBatchesKey(state.run.runId, page);
    const got = await getObjectBytes(deps.s3, deps.bucket, key);
    if (!got) throw new CorruptObjectError(key, 'the plan of a page with failed groups is missing');
    const wanted = new Set(failed.filter((f) => f.page === page).map((f) => `${f.shopId}\u0000${f.month}`));
    const lines = got.bytes
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '');
    for (const line of lines) {
      for (const g of parseBatch(JSON.parse(line), state.run).groups) {
        if (!wanted.has(`${g.shopId}\u0000${g.month}`)) continue;
        for (const j of await readPlannedJobs(deps, state.run, g))
          out.push({ shopId: g.shopId, jobId: j.job_id });
      }
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
  ]);
  const idle =
    scan.from !== null &&
    scan.from.cutoff === run.cutoff &&
    scan.retried === 0 &&
    retry.length === 0 &&
    TERMINAL_STATUSES.every((s) => scan.from?.keys[s] === scan.next[s]);
  if (idle) return 'unchanged';
  return writeWatermark(
    deps,
    { doc: null, etag: scan.etag },
    { format: WATERMARK_FORMAT, cutoff: run.cutoff, keys: scan.next, retry, runId: run.runId },
  );
};
