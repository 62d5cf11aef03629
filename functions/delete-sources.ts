import { deleteSources } from '../shared/archive/steps/delete-sources';
import { parseDeleteEvent } from '../shared/archive/steps/events';
import type { DeleteSummary } from '../shared/archive/steps/types';
import { getDeps } from './deps';

/** `DeleteSources` Task: the item state `{run, group, archive, verify?, commit?}` → `$.delete`. */
export const handler = async (event: unknown): Promise<DeleteSummary> =>
  deleteSources(getDeps(), parseDeleteEvent(event));
