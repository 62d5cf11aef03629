import type { StepDeps } from '../shared/archive/steps/context';
import { parseReportEvent } from '../shared/archive/steps/events';
import { report } from '../shared/archive/steps/report/report';
import type { RunReport } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import { type ObservabilitySink, publishRunMetrics } from './sink';

/**
 * `Report` Task: `{run, page, cursor: null, totals}` → the execution output, and the run's figures as
 * metrics (the quarantine alarm watches `JobsQuarantined`).
 */
export const reportHandler = (deps: () => StepDeps, sink: ObservabilitySink) =>
  withBoundedErrors(sink, async (event): Promise<RunReport> => {
    const r = await report(deps(), parseReportEvent(event));
    publishRunMetrics(sink, r);
    return r;
  });

export const handler = reportHandler(lambdaDeps, lambdaSink);
