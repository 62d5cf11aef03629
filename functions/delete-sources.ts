import { deleteBatchSources } from '../shared/archive/steps/batch-steps';
import { parseBatchState } from '../shared/archive/steps/events';
import type { BatchResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';
import { logGroups } from './observability';

/** `DeleteSources` Task (a batch's last step): the batch state → the child's output `{results, overhead}`. */
export const handler = withBoundedErrors(
  async (event, logger): Promise<BatchResult> => {
    const out = await deleteBatchSources(getDeps(), parseBatchState(event));
    logGroups(logger, 'DeleteSources', out.results);
    return out;
  },
);
