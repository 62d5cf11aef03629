import { plan } from '../shared/archive/steps/plan';
import { parsePlanEvent } from '../shared/archive/steps/events';
import type { PlanResult } from '../shared/archive/steps/types';
import { getDeps } from './deps';

/** `Plan` Task: `{state, execution, startTime}` → `{run, page, cursor, groups, totals}`. */
export const handler = async (event: unknown): Promise<PlanResult> => plan(getDeps(), parsePlanEvent(event));
