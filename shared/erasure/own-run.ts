import { runPrefix } from '../archive/format';
import type { StepDeps } from '../archive/steps/context';
import type { PageState } from '../archive/steps/types';
import { listAllArray } from '../s3/objects';
import { getRequest, validateRequestId } from './ledger';
import { erasureMarkersPrefix, findNamed, scrubNamed } from './run-scratch';
import { ShopMatcher } from './scrub';

/**
 * A run's Report, after it wrote the report, scrubs its own scratch of the shops forgotten while it
 * ran (docs/erasure.md "Run scratch"): forget leaves a marker (its request id) in every run it found
 * still going. Idle runs pay nothing: only a run whose scratch can name a shop at all — it planned or
 * quarantined jobs, carried retry entries, or reports overdue erasure requests — LISTs its markers
 * (one request); a marker costs a GET of its request, and the run's scratch a LIST and a GET per
 * object (planned jobs only for pages that name the shop). Returns the objects scrubbed.
 */
export const scrubOwnRun = async (
  deps: StepDeps,
  state: PageState,
  overdueRequests: number,
): Promise<number> => {
  const { run, totals } = state;
  const namesShops =
    totals.jobsPlanned +
      totals.jobsQuarantined +
      totals.groupsFailed +
      (state.scan?.carried ?? 0) +
      overdueRequests >
    0;
  if (!namesShops) return 0;
  const prefix = erasureMarkersPrefix(run.runId);
  const markers = await listAllArray(deps.s3, deps.bucket, prefix);
  const shops = new Set<string>();
  for (const marker of markers) {
    let id: string;
    try {
      id = validateRequestId(marker.key.slice(prefix.length).replace(/\.json$/, ''));
    } catch {
      continue; // not a marker forget wrote
    }
    const got = await getRequest(deps, id);
    if (got?.request.kind === 'forget-shop') shops.add(got.request.shopId);
  }
  if (shops.size === 0) return 0;
  const m = new ShopMatcher(shops);
  const named = await findNamed(deps, await listAllArray(deps.s3, deps.bucket, runPrefix(run.runId)), m);
  return scrubNamed(deps, named, m);
};
