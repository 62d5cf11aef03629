import { verifyParts } from '../shared/archive/steps/batch-steps';
import { parseBatchState } from '../shared/archive/steps/events';
import type { BatchState } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';
import { logGroups } from './observability';

/** `VerifyParts` Task: the batch state → the same, each staged part verified. */
export const handler = withBoundedErrors(
  async (event, logger): Promise<BatchState> => {
    const out = await verifyParts(getDeps(), parseBatchState(event));
    logGroups(logger, 'VerifyParts', out.slots);
    return out;
  },
);
