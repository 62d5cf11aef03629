import type { StepDeps } from '../shared/archive/steps/context';
import { parsePlanEvent } from '../shared/archive/steps/events';
import { plan } from '../shared/archive/steps/plan/plan';
import type { PlanResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `Plan` Task: `{state, execution, startTime}` → `{run, page, cursor, groups, totals}`. */
export const planHandler = (deps: () => StepDeps) =>
  withBoundedErrors(async (event): Promise<PlanResult> => plan(deps(), parsePlanEvent(event)));

export const handler = planHandler(getDeps);
