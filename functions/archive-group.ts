import { archiveGroup } from '../shared/archive/steps/archive-group';
import { parseGroupEvent } from '../shared/archive/steps/events';
import type { ArchiveResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `ArchiveGroup` Task (Map item): `{run, group}` → `$.archive`. */
export const handler = withBoundedErrors(
  async (event): Promise<ArchiveResult> => archiveGroup(getDeps(), parseGroupEvent(event)),
);
