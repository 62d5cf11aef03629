import { commitPartStep } from '../shared/archive/steps/commit-part';
import { parseCommitEvent } from '../shared/archive/steps/events';
import type { CommitResult } from '../shared/archive/steps/types';
import { withBoundedErrors } from './bounded-errors';
import { getDeps } from './deps';

/** `CommitPart` Task: `{run, group, archive, verify}` → `$.commit`; a lost index race throws ConcurrentModificationError. */
export const handler = withBoundedErrors(
  async (event): Promise<CommitResult> => commitPartStep(getDeps(), parseCommitEvent(event)),
);
