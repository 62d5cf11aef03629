import { commitParts } from '../shared/archive/steps/batch-steps';
import { parseBatchState } from '../shared/archive/steps/events';
import type { BatchState } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';
import { logGroups } from './observability';

/** `CommitParts` Task: the batch state → the same, each verified part committed to its month index. */
export const handler = withBoundedErrors(
  async (event, logger): Promise<BatchState> => {
    const out = await commitParts(getDeps(), parseBatchState(event));
    logGroups(logger, 'CommitParts', out.slots);
    return out;
  },
);
