import type { StepDeps } from '../shared/archive/steps/context';
import { parseTallyEvent } from '../shared/archive/steps/events';
import { tally } from '../shared/archive/steps/report/tally';
import type { PageState } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import type { ObservabilitySink } from './sink';

/** `Tally` Task: `{run, page, cursor, totals, mapRun?}` → `{run, page: page + 1, cursor, totals}`. */
export const tallyHandler = (deps: () => StepDeps, sink: ObservabilitySink) =>
  withBoundedErrors(sink, async (event): Promise<PageState> => tally(deps(), parseTallyEvent(event)));

export const handler = tallyHandler(lambdaDeps, lambdaSink);
