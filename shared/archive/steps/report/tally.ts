import { addCounts, type RequestCounts, zeroCounts } from '../../../metrics';
import { getJson, listAllArray } from '../../../s3/objects';
import { failedAttemptsPrefix } from '../../format';
import type { StepDeps } from '../context';
import { readPageMapResults } from '../run-files/map-results';
import { writePageResults } from '../run-files/page-results';
import type { PageState, TallyEvent } from '../types';
import { addResults } from './totals';

/**
 * Tally: reads the page's Map run results (ResultWriter), keeps them as the page's group results
 * (Report reads those) and folds them into the run's totals.
 */
export const tally = async (deps: StepDeps, event: TallyEvent): Promise<PageState> => {
  const { run, page, cursor, planQuarantined } = event;
  const { value: found, requests } = await deps.meter.measure(async () => {
    const found = await readPageMapResults(deps, event);
    // Requests of ArchiveBatch attempts that threw and were retried: sent, so counted.
    // Every record left is an attempt that did not finish (it threw, or was killed): its batch's
    // groups are revisited by a later run (Report puts them on the retry list).
    let failedAttempts = zeroCounts();
    const prefix = failedAttemptsPrefix(run.runId, page);
    const interrupted = new Set<number>();
    for (const o of await listAllArray(deps.s3, deps.bucket, prefix)) {
      const doc = ((await getJson(deps, o.key, 'failed attempt record')) ?? {}) as {
        requests?: RequestCounts;
      };
      if (doc.requests) failedAttempts = addCounts(failedAttempts, doc.requests);
      const batch = /^(\d+)-/.exec(o.key.slice(prefix.length))?.[1];
      if (batch !== undefined) interrupted.add(Number(batch));
    }
    await writePageResults(deps, run.runId, page, planQuarantined, found.results, [...interrupted].sort());
    return { ...found, overhead: addCounts(found.overhead, failedAttempts) };
  });
  const totals = addResults(event.totals, found.results);
  return {
    run,
    page: page + 1,
    cursor,
    totals: { ...totals, requests: addCounts(addCounts(totals.requests, found.overhead), requests) },
    ...(event.scan ? { scan: event.scan } : {}),
  };
};
