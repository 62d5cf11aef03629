import { addCounts } from '../../metrics';
import { pageResultsKey } from '../keys';
import type { StepDeps } from './context';
import { putJson } from '../../s3/objects';
import { addResults } from './totals';
import type { GroupResult, PageState, TallyEvent } from './types';

export const PAGE_RESULTS_FORMAT = 'job-details-archive/page-results@2';

export interface PageResultsDoc {
  readonly format: typeof PAGE_RESULTS_FORMAT;
  readonly run_id: string;
  readonly page: number;
  /** Plan-time quarantines of the page (listed in its findings document when > 0). */
  readonly plan_quarantined: number;
  readonly results: GroupResult[];
}

/** Tally: keeps the page's group results (Report reads them) and folds them into the run's totals. */
export const tally = async (deps: StepDeps, event: TallyEvent): Promise<PageState> => {
  const { run, page, cursor, results, planQuarantined } = event;
  const { requests } = await deps.meter.measure(async () => {
    const doc: PageResultsDoc = {
      format: PAGE_RESULTS_FORMAT,
      run_id: run.runId,
      page,
      plan_quarantined: planQuarantined,
      results,
    };
    await putJson(deps, pageResultsKey(run.runId, page), doc);
  });
  const totals = addResults(event.totals, results);
  return {
    run,
    page: page + 1,
    cursor,
    totals: { ...totals, requests: addCounts(totals.requests, requests) },
  };
};
