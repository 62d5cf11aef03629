import { addCounts, type RequestCounts, zeroCounts } from '../../../metrics';
import { failedAttemptsPrefix, pageResultsKey } from '../../format/keys';
import type { StepDeps } from '../context';
import { getJson, listAllArray, putJson } from '../../../s3/objects';
import { readPageMapResults } from '../batch/map-results';
import { addResults } from './totals';
import type { GroupResult, PageState, TallyEvent } from '../types';

export const PAGE_RESULTS_FORMAT = 'job-details-archive/page-results@2';

export interface PageResultsDoc {
  readonly format: typeof PAGE_RESULTS_FORMAT;
  readonly run_id: string;
  readonly page: number;
  /** Plan-time quarantines of the page (listed in its findings document when > 0). */
  readonly plan_quarantined: number;
  readonly results: GroupResult[];
}

/**
 * Tally: reads the page's Map run results (ResultWriter), keeps them as the page's group results
 * (Report reads those) and folds them into the run's totals.
 */
export const tally = async (deps: StepDeps, event: TallyEvent): Promise<PageState> => {
  const { run, page, cursor, planQuarantined } = event;
  const { value: found, requests } = await deps.meter.measure(async () => {
    const found = await readPageMapResults(deps, event);
    // Requests of ArchiveBatch attempts that threw and were retried: sent, so counted.
    let failedAttempts = zeroCounts();
    for (const o of await listAllArray(deps.s3, deps.bucket, failedAttemptsPrefix(run.runId, page))) {
      const doc = ((await getJson(deps, o.key, 'failed attempt record')) ?? {}) as {
        requests?: RequestCounts;
      };
      if (doc.requests) failedAttempts = addCounts(failedAttempts, doc.requests);
    }
    await writePageResults(deps, run.runId, page, planQuarantined, found.results);
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

/** A page's results, the document Report reads (Tally's; Plan's own for a page without batches). */
export const writePageResults = async (
  deps: StepDeps,
  runId: string,
  page: number,
  planQuarantined: number,
  results: GroupResult[],
): Promise<void> => {
  const doc: PageResultsDoc = {
    format: PAGE_RESULTS_FORMAT,
    run_id: runId,
    page,
    plan_quarantined: planQuarantined,
    results,
  };
  await putJson(deps, pageResultsKey(runId, page), doc);
};
