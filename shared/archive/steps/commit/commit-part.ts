import { HeadObjectCommand, type HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import { InvalidInputError, VerificationError } from '../../../errors';
import { isNotFound, normalizeEtag } from '../../../s3/objects';
import { applyCommit } from '../../format/commit-entries';
import type { StepDeps } from '../context';
import { type LoadedIndex, updateMonthIndex } from './index-store';
import type { VerifiedPart } from '../../format/staging';
import type { CommitInput, CommitResult } from '../types';
import { stagedKeys } from '../verify/verify-part';

/**
 * Fails unless `key` is stored with exactly this size and ETag. Run right before an index write (and
 * before deleting sources) so an entry never points at bytes that are not there.
 */
export const assertPartStored = async (
  deps: StepDeps,
  key: string,
  /** etag: checked when known (the verified manifest; index@1/2). index@3 keeps none: parts are written once. */
  expect: { size: number; etag?: string | undefined },
): Promise<void> => {
  let head: HeadObjectCommandOutput;
  try {
    head = await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key }));
  } catch (err) {
    if (isNotFound(err)) throw new VerificationError(key, 'part object is missing');
    throw err;
  }
  const etag = normalizeEtag(head.ETag);
  if (head.ContentLength !== expect.size || (expect.etag !== undefined && etag !== expect.etag)) {
    throw new VerificationError(
      key,
      `stored part is ${head.ContentLength} bytes / ${etag}, expected ${expect.size} / ${expect.etag ?? 'any ETag'}`,
    );
  }
};

/**
 * What the verify stage handed over: the VerifiedPart (it read the whole part back a moment ago, so
 * the part is not HEADed again) and the index the archive stage read (its ETag guards the write).
 */
export interface CommitHandoff {
  readonly verified: VerifiedPart;
  readonly index: LoadedIndex;
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
    const at = deps.clock().toISOString();
    const written = await updateMonthIndex(
      deps,
      group.shopId,
      group.month,
      (current) => {
        const c = applyCommit(current, verified, at);
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
