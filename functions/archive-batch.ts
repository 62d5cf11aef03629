import { archiveBatch, type BatchHooks } from '../shared/archive/steps/batch/batch-steps';
import type { StepDeps } from '../shared/archive/steps/context';
import { parseBatchEvent } from '../shared/archive/steps/events';
import type { BatchResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { lambdaDeps, lambdaSink } from './deps';
import { logGroups, type ObservabilitySink } from './sink';

/** `ArchiveBatch` Task (a child execution of the Distributed Map): `{run, batch}` → `{results, overhead}`. */
export const archiveBatchHandler = (deps: () => StepDeps, sink: ObservabilitySink, hooks?: BatchHooks) =>
  withBoundedErrors(sink, async (event, logger): Promise<BatchResult> => {
    const out = await archiveBatch(deps(), parseBatchEvent(event), hooks);
    logGroups(logger, 'ArchiveBatch', out.results);
    return out;
  });

export const handler = archiveBatchHandler(lambdaDeps, lambdaSink);
