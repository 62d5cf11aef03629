import { DeleteObjectsCommand, HeadObjectCommand, type HeadObjectCommandOutput } from '@aws-sdk/client-s3';
import { InvalidInputError, VerificationError } from '../../errors';
import { isNotFound, normalizeEtag } from '../../s3/objects';
import { partByName } from '../month-index';
import { applyCommit, entriesOf } from './commit-entries';
import type { StepDeps } from './context';
import { loadMonthIndex, updateMonthIndex } from './index-store';
import { readVerifiedPart } from './staged';
import type { CommitEvent, CommitResult } from './types';
import { stagedKeys } from './verify-part';

/**
 * Fails unless `key` is stored with exactly this size and ETag. Run right before an index write (and
 * before deleting sources) so an entry never points at bytes that are not there.
 */
export const assertPartStored = async (
  deps: StepDeps,
  key: string,
  expect: { size: number; etag: string },
): Promise<void> => {
  let head: HeadObjectCommandOutput;
  try {
    head = await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key }));
  } catch (err) {
    if (isNotFound(err)) throw new VerificationError(key, 'part object is missing');
    throw err;
  }
  const etag = normalizeEtag(head.ETag);
  if (head.ContentLength !== expect.size || etag !== expect.etag) {
    throw new VerificationError(
      key,
      `stored part is ${head.ContentLength} bytes / ${etag}, expected ${expect.size} / ${expect.etag}`,
    );
  }
};

/**
 * CommitPart: adds the verified part to the month index with a conditional read-modify-write (the
 * part becomes visible to readers here), then removes the staging docs. Idempotent: a retried commit
 * finds its part already in the index and adds nothing.
 */
export const commitPartStep = async (deps: StepDeps, event: CommitEvent): Promise<CommitResult> => {
  const { run, group } = event;
  if (run.dryRun) throw new InvalidInputError('run.dryRun', 'a dry run commits nothing');
  const keys = stagedKeys(event);
  const { value: jobs, requests } = await deps.meter.measure(async () => {
    const verified = await readVerifiedPart(deps, keys.verified);
    if (!verified) {
      // A retry after a commit that got through: its cleanup removed the docs.
      const { index } = await loadMonthIndex(deps, group.shopId, group.month);
      if (partByName(index, keys.name)) return entriesOf(index, keys.name);
      throw new VerificationError(keys.part, 'no verified manifest: the part was not verified');
    }
    if (
      verified.part.name !== keys.name ||
      verified.part.key !== keys.part ||
      verified.part.run_id !== run.runId
    ) {
      throw new VerificationError(keys.part, 'verified manifest describes another part or run');
    }
    await assertPartStored(deps, keys.part, verified.part);
    const at = deps.clock().toISOString();
    const { result: added } = await updateMonthIndex(deps, group.shopId, group.month, (current) => {
      const c = applyCommit(current, verified, at);
      return { index: c.index, result: c.added };
    });
    await deps.s3.send(
      new DeleteObjectsCommand({
        Bucket: deps.bucket,
        Delete: { Objects: [{ Key: keys.verified }, { Key: keys.pending }], Quiet: true },
      }),
    );
    return added;
  });
  return { committed: true, part: keys.name, jobs, requests };
};
