import type { StepDeps } from '../shared/archive/steps/context';
import { parseReportEvent } from '../shared/archive/steps/events';
import { report } from '../shared/archive/steps/report/report';
import type { RunReport } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';
import { publishRunMetrics } from './observability';

/**
 * `Report` Task: `{run, page, cursor: null, totals}` → the execution output, and the run's figures as
 * metrics (the quarantine alarm watches `JobsQuarantined`).
 */
export const reportHandler = (deps: () => StepDeps) =>
  withBoundedErrors(async (event): Promise<RunReport> => {
    const r = await report(deps(), parseReportEvent(event));
    publishRunMetrics(r);
    return r;
  });

export const handler = reportHandler(getDeps);
