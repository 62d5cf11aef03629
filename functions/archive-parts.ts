import { archiveParts } from '../shared/archive/steps/batch-steps';
import { parseBatchEvent } from '../shared/archive/steps/events';
import type { BatchState } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `ArchiveParts` Task (a batch's first step): `{run, batch}` → `{run, batch, slots}`. */
export const handler = withBoundedErrors(
  async (event): Promise<BatchState> => archiveParts(getDeps(), parseBatchEvent(event)),
);
