import { archiveBatch } from '../shared/archive/steps/batch/batch-steps';
import { parseBatchEvent } from '../shared/archive/steps/events';
import type { BatchResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';
import { logGroups } from './observability';

/** `ArchiveBatch` Task (a child execution of the Distributed Map): `{run, batch}` → `{results, overhead}`. */
export const handler = withBoundedErrors(async (event, logger): Promise<BatchResult> => {
  const out = await archiveBatch(getDeps(), parseBatchEvent(event));
  logGroups(logger, 'ArchiveBatch', out.results);
  return out;
});
