import { InvalidInputError, VerificationError } from '../../../errors';
import { applyCommit, type VerifiedPart } from '../../format';
import type { StepDeps } from '../context';
import type { CommitInput, CommitResult } from '../types';
import { stagedKeys } from '../verify/verify-part';
import { type LoadedIndex, updateMonthIndex } from './index-store';

/**
 * What the verify stage handed over: the VerifiedPart (it read the whole part back a moment ago, so
 * the part is not HEADed again) and the index the archive stage read (its ETag guards the write).
 */
export interface CommitHandoff {
  readonly verified: VerifiedPart;
  readonly index: LoadedIndex;
  /** Jobs the part archives again → the part of the entry each follows (applyCommit). */
  readonly rearchived?: ReadonlyMap<string, string>;
  /** Runs just before the index write and may refuse it (a shop forgotten meanwhile: docs/erasure.md). */
  readonly guard?: () => Promise<void>;
}

/**
 * A group's commit stage: adds the verified part to the month index with a conditional
 * read-modify-write (the part becomes visible to readers here). Its intent doc is returned in
 * `staging` for the caller to delete with the rest of its batch.
 */
export const commitPartStep = async (
  deps: StepDeps,
  event: CommitInput,
  known: CommitHandoff,
): Promise<{ result: CommitResult; index: LoadedIndex; staging: string[] }> => {
  const { run, group } = event;
  if (run.dryRun) throw new InvalidInputError('run.dryRun', 'a dry run commits nothing');
  const keys = stagedKeys(event);
  let after: LoadedIndex | undefined;
  const { value: jobs, requests } = await deps.meter.measure(async () => {
    const { verified } = known;
    if (
      verified.part.name !== keys.name ||
      verified.part.key !== keys.part ||
      verified.part.run_id !== run.runId
    ) {
      throw new VerificationError(keys.part, 'verified manifest describes another part or run');
    }
    await known.guard?.();
    const at = deps.clock().toISOString();
    const written = await updateMonthIndex(
      deps,
      group.shopId,
      group.month,
      (current) => {
        const c = applyCommit(current, verified, at, known?.rearchived);
        return { index: c.index, result: c.added };
      },
      undefined,
      known.index,
    );
    after = { index: written.index, etag: written.etag };
    return written.result;
  });
  if (!after) throw new VerificationError(keys.part, 'the month index was not read');
  return {
    result: { committed: true, part: keys.name, jobs, requests },
    index: after,
    staging: [keys.pending],
  };
};
