import type { StepDeps } from '../shared/archive/steps/context';
import { parsePlanEvent } from '../shared/archive/steps/events';
import { plan } from '../shared/archive/steps/plan/plan';
import type { PlanResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import type { ObservabilitySink } from './sink';

/** `Plan` Task: `{state, execution, startTime}` → `{run, page, cursor, groups, totals}`. */
export const planHandler = (deps: () => StepDeps, sink: ObservabilitySink) =>
  withBoundedErrors(sink, async (event): Promise<PlanResult> => plan(deps(), parsePlanEvent(event)));

export const handler = planHandler(lambdaDeps, lambdaSink);
