import { DeleteObjectsCommand, HeadObjectCommand, type HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import { InvalidInputError, VerificationError } from '../../../errors';
import { isNotFound, normalizeEtag } from '../../../s3/objects';
import { partByName } from '../../format/month-index';
import { applyCommit, entriesOf } from '../../format/commit-entries';
import type { StepDeps } from '../context';
import { type LoadedIndex, loadMonthIndex, updateMonthIndex } from './index-store';
import type { VerifiedPart } from '../../format/staging';
import { readVerifiedPart } from '../archive/staged';
import type { CommitEvent, CommitResult } from '../types';
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
 * CommitPart: adds the verified part to the month index with a conditional read-modify-write (the
 * part becomes visible to readers here), then removes the staging docs. Idempotent: a retried commit
 * finds its part already in the index and adds nothing.
 */
export const commitPartStep = async (deps: StepDeps, event: CommitEvent): Promise<CommitResult> =>
  (await commitPartInMemory(deps, event)).result;

/**
 * What the verify step of this invocation handed over: the VerifiedPart (it read the whole part back
 * a moment ago, so the part is not HEADed again) and the index the archive step read. The staging
 * docs are left for the caller to delete with the rest of its batch.
 */
export interface CommitHandoff {
  readonly verified: VerifiedPart;
  readonly index: LoadedIndex;
  /** Jobs the part archives again → the part of the entry each follows (applyCommit). */
  readonly rearchived?: ReadonlyMap<string, string>;
}

export const commitPartInMemory = async (
  deps: StepDeps,
  event: CommitEvent,
  known?: CommitHandoff,
): Promise<{ result: CommitResult; index: LoadedIndex; staging: string[] }> => {
  const { run, group } = event;
  if (run.dryRun) throw new InvalidInputError('run.dryRun', 'a dry run commits nothing');
  const keys = stagedKeys(event);
  let after: LoadedIndex | undefined;
  const { value: jobs, requests } = await deps.meter.measure(async () => {
    const verified = known?.verified ?? (await readVerifiedPart(deps, keys.verified));
    if (!verified) {
      // A retry after a commit that got through: its cleanup removed the docs.
      const loaded = await loadMonthIndex(deps, group.shopId, group.month);
      after = loaded;
      if (partByName(loaded.index, keys.name)) return entriesOf(loaded.index, keys.name);
      throw new VerificationError(keys.part, 'no verified manifest: the part was not verified');
    }
    if (
      verified.part.name !== keys.name ||
      verified.part.key !== keys.part ||
      verified.part.run_id !== run.runId
    ) {
      throw new VerificationError(keys.part, 'verified manifest describes another part or run');
    }
    if (!known) await assertPartStored(deps, keys.part, verified.part);
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
      known?.index,
    );
    after = { index: written.index, etag: written.etag };
    if (!known) {
      await deps.s3.send(
        new DeleteObjectsCommand({
          Bucket: deps.bucket,
          Delete: { Objects: [{ Key: keys.verified }, { Key: keys.pending }], Quiet: true },
        }),
      );
    }
    return written.result;
  });
  if (!after) throw new VerificationError(keys.part, 'the month index was not read');
  return {
    result: { committed: true, part: keys.name, jobs, requests },
    index: after,
    staging: known ? [keys.pending] : [],
  };
};
