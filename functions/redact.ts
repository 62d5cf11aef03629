import type { StepDeps } from '../shared/archive/steps/context';
import { runIdFromExecution } from '../shared/archive/steps/run-context';
import { config } from '../shared/config';
import { parseRedactEvent, type RedactTaskResult, runRedactEvent } from '../shared/redact/requests';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/**
 * `Redact` Task: `{redact: {shopId, docId, requestId?, receivedAt?} | {pending: true}, execution}` →
 * counts per request (docs/operations.md#redacting-a-document). A request waiting for a Glacier
 * restore is not a failure: `pending` says how many, and a later `{"redact": {"pending": true}}` run
 * finishes them.
 */
export const redactHandler = (deps: () => StepDeps) =>
  withBoundedErrors(async (event): Promise<RedactTaskResult> => {
    const d = deps();
    const cfg = config();
    return runRedactEvent(
      { ...d, restoreTier: cfg.restoreTier, restoreDays: cfg.restoreDays },
      parseRedactEvent(event, runIdFromExecution),
    );
  });

export const handler = redactHandler(getDeps);
