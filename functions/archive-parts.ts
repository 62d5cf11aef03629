import { archiveParts } from '../shared/archive/steps/batch-steps';
import { parseBatchEvent } from '../shared/archive/steps/events';
import type { BatchState } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';
import { logGroups } from './observability';

/** `ArchiveParts` Task (a batch's first step): `{run, batch}` → `{run, batch, slots}`. */
export const handler = withBoundedErrors(
  async (event, logger): Promise<BatchState> => {
    const out = await archiveParts(getDeps(), parseBatchEvent(event));
    logGroups(logger, 'ArchiveParts', out.slots);
    return out;
  },
);
