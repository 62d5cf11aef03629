import { archiveGroup } from '../shared/archive/steps/archive-group';
import { parseGroupEvent } from '../shared/archive/steps/events';
import type { ArchiveResult } from '../shared/archive/steps/types';
import { getDeps } from './deps';

/** `ArchiveGroup` Task (Map item): `{run, group}` → `$.archive`. */
export const handler = async (event: unknown): Promise<ArchiveResult> =>
  archiveGroup(getDeps(), parseGroupEvent(event));
