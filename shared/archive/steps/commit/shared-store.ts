import { ConcurrentModificationError } from '../../../errors';
import { getObjectBytes, putConditional } from '../../../s3/objects';
import {
  emptySharedIndex,
  MONTH_INDEX_HEADERS,
  parseSharedIndex,
  type SharedIndex,
  serializeSharedIndex,
  sharedIndexKey,
} from '../../format';
import type { StepDeps } from '../context';
import { INDEX_WRITE_ATTEMPTS } from './index-store';

/** Reads and conditionally rewrites a month's shared index (docs/archive-format.md, "Shared parts"). */

export interface LoadedShared {
  readonly index: SharedIndex;
  /** null: no shared index yet (an empty one is returned). */
  readonly etag: string | null;
}

export const loadSharedIndex = async (
  deps: Pick<StepDeps, 's3' | 'bucket' | 'clock'>,
  month: string,
): Promise<LoadedShared> => {
  const key = sharedIndexKey(month);
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) return { index: emptySharedIndex(month, deps.clock().toISOString()), etag: null };
  return { index: parseSharedIndex(got.bytes, key), etag: got.etag };
};

/**
 * Attempts before ConcurrentModificationError fails the batch's packed groups (a later run archives
 * them): more than a month index's, as all the Map's concurrent batches of a month share this object.
 */
export const SHARED_WRITE_ATTEMPTS = 3 * INDEX_WRITE_ATTEMPTS;

const backoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(2_000, 50 * 2 ** attempt)));

/**
 * Read-modify-write with If-Match (If-None-Match for a new one), as updateMonthIndex: `change` must be
 * a pure function of the index it is given (re-applied after a 412); null writes nothing. `known`
 * saves the first GET (the conditional PUT still fails if anyone wrote since).
 */
export const updateSharedIndex = async (
  deps: Pick<StepDeps, 's3' | 'bucket' | 'clock'>,
  month: string,
  change: (current: SharedIndex) => SharedIndex | null,
  known?: LoadedShared,
): Promise<LoadedShared> => {
  const key = sharedIndexKey(month);
  let lastError: ConcurrentModificationError | undefined;
  for (let attempt = 1; attempt <= SHARED_WRITE_ATTEMPTS; attempt++) {
    // Every batch of the month writes here (a month index has one writer at a time): back off with
    // full jitter between attempts so concurrent batches spread out instead of colliding again.
    if (attempt > 1) await backoff(attempt);
    const current = attempt === 1 && known ? known : await loadSharedIndex(deps, month);
    const next = change(current.index);
    if (next === null) return current;
    try {
      const etag = await putConditional(
        deps.s3,
        { Bucket: deps.bucket, Key: key, Body: serializeSharedIndex(next), ...MONTH_INDEX_HEADERS },
        current.etag,
      );
      return { index: next, etag };
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
      lastError = err;
    }
  }
  throw lastError ?? new ConcurrentModificationError(key);
};
