import { verifyParts } from '../shared/archive/steps/batch-steps';
import { parseBatchState } from '../shared/archive/steps/events';
import type { BatchState } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `VerifyParts` Task: the batch state → the same, each staged part verified. */
export const handler = withBoundedErrors(
  async (event): Promise<BatchState> => verifyParts(getDeps(), parseBatchState(event)),
);
