import { deleteBatchSources } from '../shared/archive/steps/batch-steps';
import { parseBatchState } from '../shared/archive/steps/events';
import type { BatchResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `DeleteSources` Task (a batch's last step): the batch state → the child's output `{results, overhead}`. */
export const handler = withBoundedErrors(
  async (event): Promise<BatchResult> => deleteBatchSources(getDeps(), parseBatchState(event)),
);
