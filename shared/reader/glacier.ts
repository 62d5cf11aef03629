import { RestoreObjectCommand } from '@aws-sdk/client-s3';
import { ArchiveNotRestoredError } from '../errors';
import type { ReadContext } from './s3-context';

/**
 * Parts move to Glacier Flexible Retrieval / Deep Archive by lifecycle; a GET of such an object
 * fails with InvalidObjectState (HTTP 403) until a restore has finished. Indexes never transition.
 */
const codeOf = (err: unknown): string | undefined => {
  const e = err as { name?: unknown; Code?: unknown } | null;
  if (typeof e?.Code === 'string') return e.Code;
  return typeof e?.name === 'string' ? e.name : undefined;
};

const statusOf = (err: unknown): number | undefined =>
  (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;

export const isInvalidObjectState = (err: unknown): boolean => codeOf(err) === 'InvalidObjectState';

const isRestoreInProgress = (err: unknown): boolean =>
  codeOf(err) === 'RestoreAlreadyInProgress' || statusOf(err) === 409;

/**
 * Asks S3 to restore `key` and returns the error the read must throw: restoreRequested true when this
 * call started (or extended) a restore, false when one is already running. Other RestoreObject
 * failures (access denied, …) propagate as they are.
 */
const requestRestore = async (ctx: ReadContext, key: string): Promise<ArchiveNotRestoredError> => {
  const { restoreTier: tier, restoreDays: days } = ctx.settings;
  try {
    await ctx.s3.send(
      new RestoreObjectCommand({
        Bucket: ctx.bucket,
        Key: key,
        RestoreRequest: { Days: days, GlacierJobParameters: { Tier: tier } },
      }),
    );
    return new ArchiveNotRestoredError(key, tier, true);
  } catch (err) {
    if (isRestoreInProgress(err)) return new ArchiveNotRestoredError(key, tier, false);
    throw err;
  }
};

/** The restore of `key`, requested at most once per read. */
export const restoreOnce = (ctx: ReadContext, key: string): Promise<ArchiveNotRestoredError> => {
  let pending = ctx.restores.get(key);
  if (!pending) {
    pending = requestRestore(ctx, key);
    ctx.restores.set(key, pending);
  }
  return pending;
};
