import { commitPartStep } from '../shared/archive/steps/commit-part';
import { parseCommitEvent } from '../shared/archive/steps/events';
import type { CommitResult } from '../shared/archive/steps/types';
import { getDeps } from './deps';

/** `CommitPart` Task: `{run, group, archive, verify}` → `$.commit`; a lost index race throws ConcurrentModificationError. */
export const handler = async (event: unknown): Promise<CommitResult> =>
  commitPartStep(getDeps(), parseCommitEvent(event));
