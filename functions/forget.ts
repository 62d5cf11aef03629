import type { StepDeps } from '../shared/archive/steps/context';
import { runIdFromExecution } from '../shared/archive/steps/run-context';
import { type ForgetResult, forgetShop, parseForgetEvent } from '../shared/erasure/forget';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import type { ObservabilitySink } from './sink';

/** `Forget` Task: `{forget: {shopId, requestId?, receivedAt?}, execution}` → the erasure's receipt (docs/erasure.md). */
export const forgetHandler = (deps: () => StepDeps, sink: ObservabilitySink) =>
  withBoundedErrors(
    sink,
    async (event): Promise<ForgetResult> => forgetShop(deps(), parseForgetEvent(event, runIdFromExecution)),
  );

export const handler = forgetHandler(lambdaDeps, lambdaSink);
