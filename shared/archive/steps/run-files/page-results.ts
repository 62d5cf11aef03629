import { gunzipSync, gzipSync } from 'node:zlib';
import { CorruptObjectError } from '../../../errors';
import { getObjectBytes, putBytes } from '../../../s3/objects';
import { pageResultsKey } from '../../format';
import type { StepDeps } from '../context';
import type { GroupResult } from '../types';

/** A page's group results (`pages/{page}.json.gz`, one JSON document, gzip): Tally writes them, or Plan for a page without batches that quarantined jobs (a page with nothing has none: ScanState.quietPages); Report reads them. */

export const PAGE_RESULTS_FORMAT = 'job-details-archive/page-results@2';

export interface PageResultsDoc {
  readonly format: typeof PAGE_RESULTS_FORMAT;
  readonly run_id: string;
  readonly page: number;
  /** Plan-time quarantines of the page (listed in its findings document when > 0). */
  readonly plan_quarantined: number;
  readonly results: GroupResult[];
  /** Batches of the page with an attempt that did not finish (absent: none). */
  readonly interrupted_batches?: number[];
}

/** A page's results, the document Report reads (Tally's; Plan's own for a page without batches). */
export const writePageResults = async (
  deps: StepDeps,
  runId: string,
  page: number,
  planQuarantined: number,
  results: GroupResult[],
  interrupted: number[] = [],
): Promise<void> => {
  const doc: PageResultsDoc = {
    format: PAGE_RESULTS_FORMAT,
    run_id: runId,
    page,
    plan_quarantined: planQuarantined,
    results,
    ...(interrupted.length > 0 ? { interrupted_batches: interrupted } : {}),
  };
  await putBytes(
    deps,
    pageResultsKey(runId, page),
    gzipSync(Buffer.from(JSON.stringify(doc), 'utf8')),
    'application/gzip',
  );
};

/** A page's results document as JSON (null when there is none; Report checks what it holds). */
export const readPageResults = async (deps: StepDeps, runId: string, page: number): Promise<unknown> => {
  const key = pageResultsKey(runId, page);
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) return null;
  try {
    return JSON.parse(gunzipSync(got.bytes).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'page results are not gzip JSON', { cause: err });
  }
};
