import { parseReportEvent } from '../shared/archive/steps/events';
import { report } from '../shared/archive/steps/report';
import type { RunReport } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `Report` Task: `{run, page, cursor: null, totals}` → the execution output. */
export const handler = withBoundedErrors(
  async (event): Promise<RunReport> => report(getDeps(), parseReportEvent(event)),
);
