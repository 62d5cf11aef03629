import type { StepDeps } from '../shared/archive/steps/context';
import { runIdFromExecution } from '../shared/archive/steps/run-context';
import { parseRedactEvent, type RedactTaskResult, runRedactEvent } from '../shared/redact/requests';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import type { ObservabilitySink } from './sink';

/**
 * `Redact` Task: `{redact: {shopId, docId, requestId?, receivedAt?} | {pending: true}, execution}` →
 * counts per request (docs/operations.md#redacting-a-document). A request waiting for a Glacier
 * restore is not a failure: `pending` says how many, and a later `{"redact": {"pending": true}}` run
 * finishes them. Restores use the deployment's restoreTier and restoreDays (settings).
 */
export const redactHandler = (deps: () => StepDeps, sink: ObservabilitySink) =>
  withBoundedErrors(sink, async (event): Promise<RedactTaskResult> => {
    const d = deps();
    return runRedactEvent(
      { ...d, restoreTier: d.settings.restoreTier, restoreDays: d.settings.restoreDays },
      parseRedactEvent(event, runIdFromExecution),
    );
  });

export const handler = redactHandler(lambdaDeps, lambdaSink);
