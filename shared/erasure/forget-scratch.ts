import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { reportKey, runPrefix } from '../archive/format';
import type { StepDeps } from '../archive/steps/context';
import { isNotFound, type ListedObject, listAllArray, putJson } from '../s3/objects';
import { erasureMarkerKey, findNamed, listRunScratch, scrubNamed } from './run-scratch';
import { ShopMatcher } from './scrub';

/**
 * Forget's scratch stage (docs/erasure.md "Run scratch"): the shop leaves every run's scratch under
 * `job-details-runs/` (one LIST of it, bounded by its 30-day lifecycle; a GET per object but planned
 * jobs). A run has ended when it wrote its report, or when its first object is older than the state
 * machine's timeout (Step Functions stopped it): forget scrubs it. A run still going may yet write
 * scratch naming the shop, so forget leaves a marker in it first (the request id, no shop) and then
 * looks for its report: a report already there means forget scrubs the run itself; none means the
 * run's own Report, which lists the markers after it writes the report (own-run.ts), will — S3's
 * read-after-write order makes one of the two see the other.
 */
export const RUN_MARKER_FORMAT = 'job-details-archive/run-erasure@1';

export interface ScratchInput {
  readonly shopId: string;
  readonly requestId: string;
  /** The state machine's execution timeout: a run older than this has ended. */
  readonly runTimeoutMs: number;
}

export interface ScratchFound {
  /** Scratch objects that name the shop (rewritten without it, or deleted when their key names it). */
  readonly scratchObjects: number;
  /** Runs still going: their own Report scrubs them (forget left its marker in each). */
  readonly scratchRunsDeferred: number;
}

const exists = async (deps: StepDeps, key: string): Promise<boolean> => {
  try {
    await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key }));
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
};

/**
 * Scrubs every ended run's scratch of the shop, calling `found` with what it found before it
 * writes; returns that and its LIST count.
 */
export const forgetScratch = async (
  deps: StepDeps,
  input: ScratchInput,
  found: (n: ScratchFound) => Promise<void>,
): Promise<ScratchFound & { readonly lists: number }> => {
  const m = new ShopMatcher([input.shopId]);
  const runs = await listRunScratch(deps);
  const total = [...runs.values()].reduce((n, objects) => n + objects.length, 0);
  let lists = Math.max(1, Math.ceil(total / 1000));
  const now = deps.clock().getTime();
  const ended: ListedObject[] = [];
  let deferred = 0;
  for (const [runId, objects] of runs) {
    const started = objects.reduce((t, o) => Math.min(t, o.lastModified?.getTime() ?? now), now);
    if (now - started >= input.runTimeoutMs) {
      ended.push(...objects);
      continue;
    }
    await putJson(deps, erasureMarkerKey(runId, input.requestId), {
      format: RUN_MARKER_FORMAT,
      requestId: input.requestId,
    });
    if (await exists(deps, reportKey(runId))) {
      // Ended after the listing, perhaps: its objects as they are now.
      ended.push(...(await listAllArray(deps.s3, deps.bucket, runPrefix(runId))));
      lists++;
    } else deferred++;
  }
  const named = await findNamed(deps, ended, m);
  const counts = { scratchObjects: named.length, scratchRunsDeferred: deferred };
  await found(counts);
  await scrubNamed(deps, named, m);
  return { ...counts, lists };
};
