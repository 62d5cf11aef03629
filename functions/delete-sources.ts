import { deleteSources } from '../shared/archive/steps/delete-sources';
import { parseDeleteEvent } from '../shared/archive/steps/events';
import type { DeleteResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `DeleteSources` Task: the item state `{run, group, archive, verify?, commit?}` → `$.delete`. */
export const handler = withBoundedErrors(
  async (event): Promise<DeleteResult> => deleteSources(getDeps(), parseDeleteEvent(event)),
);
