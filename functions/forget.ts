import type { StepDeps } from '../shared/archive/steps/context';
import { runIdFromExecution } from '../shared/archive/steps/run-context';
import { type ForgetResult, forgetShop, parseForgetEvent } from '../shared/erasure/forget';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `Forget` Task: `{forget: {shopId, requestId?, receivedAt?}, execution}` → the erasure's receipt (docs/erasure.md). */
export const forgetHandler = (deps: () => StepDeps) =>
  withBoundedErrors(
    async (event): Promise<ForgetResult> => forgetShop(deps(), parseForgetEvent(event, runIdFromExecution)),
  );

export const handler = forgetHandler(getDeps);
