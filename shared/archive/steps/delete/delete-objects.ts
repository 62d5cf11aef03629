import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { pause } from '../../../concurrency';
import type { StepDeps } from '../context';
import { chunks } from './delete-plan';

/** Attempts per key before its error is reported. */
export const DELETE_ATTEMPTS = 3;

/** The object changed since it was listed: not ours to delete, and retrying cannot change that. */
const FINAL_CODES = new Set(['PreconditionFailed', 'AccessDenied']);
/**
 * Already gone (an earlier attempt, or a request of ours whose response was lost, deleted it): the
 * delete's goal holds. Not counted here: the report counts deletions per index entry (delete-sources).
 */
const GONE_CODES = new Set(['NoSuchKey', 'NotFound']);

/**
 * DeleteObjects (≤ 1,000 keys per call, Quiet) conditional on each object's ETag, so an object
 * rewritten after it was listed is not deleted (S3 answers PreconditionFailed for it). Per-key errors
 * are retried a bounded number of times; what still fails is returned with its code. `deleted` holds
 * every key no longer there (deleted now, or found gone).
 */
export const deleteMatching = async (
  deps: StepDeps,
  objects: ReadonlyArray<{ key: string; etag: string }>,
): Promise<{ deleted: string[]; errors: Array<{ key: string; code: string }> }> => {
  const deleted: string[] = [];
  const gone: string[] = [];
  const final: Array<{ key: string; code: string }> = [];
  let pending = [...objects];
  let errors: Array<{ key: string; code: string }> = [];
  for (let attempt = 1; attempt <= DELETE_ATTEMPTS && pending.length > 0; attempt++) {
    if (attempt > 1) await pause(100 * 2 ** attempt);
    errors = [];
    for (const batch of chunks(pending)) {
      const res = await deps.s3.send(
        new DeleteObjectsCommand({
          Bucket: deps.bucket,
          Delete: { Objects: batch.map((o) => ({ Key: o.key, ETag: `"${o.etag}"` })), Quiet: true },
        }),
      );
      const failed = new Map((res.Errors ?? []).map((e) => [e.Key ?? '', e.Code ?? 'Unknown']));
      for (const o of batch) {
        const code = failed.get(o.key);
        if (code === undefined) deleted.push(o.key);
        else if (GONE_CODES.has(code)) gone.push(o.key);
        else errors.push({ key: o.key, code });
      }
    }
    final.push(...errors.filter((e) => FINAL_CODES.has(e.code)));
    errors = errors.filter((e) => !FINAL_CODES.has(e.code));
    const retry = new Set(errors.map((e) => e.key));
    pending = pending.filter((o) => retry.has(o.key));
  }
  return { deleted: [...deleted, ...gone], errors: [...final, ...errors] };
};
