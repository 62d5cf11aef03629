import { errorParts, truncate } from '../../../text';
import { CAPS } from '../caps';
import type { PreparedDelete } from '../delete/delete-sources';
import type { ArchiveResult, GroupFailed, GroupResult, PlannedGroup } from '../types';

/** A group's stages, in order: the names `BatchHooks` uses. */
export type GroupStage = 'archive' | 'verify' | 'commit' | 'delete';

/** A group archived, verified and committed, with the hot objects its delete may remove. */
export interface Prepared {
  readonly group: PlannedGroup;
  readonly ref: GroupResult['group'];
  readonly archive: ArchiveResult;
  readonly del: PreparedDelete;
}

/** The injection point packed groups honour (batch-steps.ts BatchHooks.before). */
export interface StageHooks {
  readonly before?: (stage: GroupStage, at: { group: PlannedGroup }) => Promise<void>;
}

const failure = (err: unknown): { error: string; cause: string } => {
  const { name, message } = errorParts(err);
  return { error: truncate(name, 100), cause: truncate(message, CAPS.reason * 2) };
};

export const fail = (ref: GroupResult['group'], err: unknown): GroupFailed => ({
  group: ref,
  failed: true,
  ...failure(err),
});
