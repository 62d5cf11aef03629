import type { StepDeps } from '../shared/archive/steps/context';
import { parseReportEvent } from '../shared/archive/steps/events';
import { report } from '../shared/archive/steps/report/report';
import type { RunReport } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import { RUN_METRICS_ENV } from './metric-names';
import { type ObservabilitySink, publishRunMetrics, runMetrics } from './sink';

/**
 * `Report` Task: `{run, page, cursor: null, totals}` → the execution output, and (`publish`) the run's
 * figures as metrics (the opt-in alarms watch `JobsQuarantined` and `ErasureRequestsOverdue`).
 */
export const reportHandler = (deps: () => StepDeps, sink: ObservabilitySink, publish = true) =>
  withBoundedErrors(sink, async (event, logger): Promise<RunReport> => {
    const r = await report(deps(), parseReportEvent(event));
    // The run's figures on one structured log line (free to keep and query in CloudWatch Logs),
    // published as custom metrics only when asked for.
    logger.info('run figures', {
      reportKey: r.reportKey,
      ...Object.fromEntries(runMetrics(r).map((m) => [m.name, m.value])),
    });
    if (publish) publishRunMetrics(sink, r);
    return r;
  });

// Custom metrics cost $0.30 each a month: only when the construct's `runMetrics` asks for them.
export const handler = reportHandler(lambdaDeps, lambdaSink, process.env[RUN_METRICS_ENV] === 'true');
