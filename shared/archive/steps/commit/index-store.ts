import { ConcurrentModificationError, CorruptObjectError } from '../../../errors';
import { getObjectBytes, putConditional } from '../../../s3/objects';
import {
  emptyMonthIndex,
  MONTH_INDEX_HEADERS,
  type MonthIndex,
  monthIndexKey,
  parseMonthIndex,
  serializeMonthIndex,
} from '../../format';
import type { StepDeps } from '../context';

/** Reads and conditionally rewrites a month index (the commit record). */

export interface LoadedIndex {
  readonly index: MonthIndex;
  /** null: no index yet (an empty one is returned). */
  readonly etag: string | null;
}

export const loadMonthIndex = async (
  deps: Pick<StepDeps, 's3' | 'bucket' | 'clock'>,
  shopId: string,
  month: string,
): Promise<LoadedIndex> => {
  const key = monthIndexKey(shopId, month);
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) return { index: emptyMonthIndex(shopId, month, deps.clock().toISOString()), etag: null };
  const index = parseMonthIndex(got.bytes, key);
  if (index.shop_id !== shopId || index.month !== month) {
    throw new CorruptObjectError(key, `index is of ${index.shop_id} ${index.month}`);
  }
  return { index, etag: got.etag };
};

/** Attempts of a read-modify-write before ConcurrentModificationError goes to Step Functions' Retry. */
export const INDEX_WRITE_ATTEMPTS = 5;

/**
 * Read-modify-write with If-Match (If-None-Match for a new index). `change` gets the current index and
 * returns the new one, or null for "nothing to write"; on a 412 the index is re-read and `change`
 * re-applied, so it must be a pure function of the index it is given. `known` is an index this
 * invocation read or wrote itself: the first attempt starts from it instead of a GET (the conditional
 * PUT still fails if anyone changed it since). Returns the index as written and its ETag.
 */
export const updateMonthIndex = async <T>(
  deps: Pick<StepDeps, 's3' | 'bucket' | 'clock'>,
  shopId: string,
  month: string,
  change: (current: MonthIndex) => { index: MonthIndex; result: T } | { index: null; result: T },
  attempts = INDEX_WRITE_ATTEMPTS,
  known?: LoadedIndex,
): Promise<{ result: T; written: boolean; index: MonthIndex; etag: string | null }> => {
  const key = monthIndexKey(shopId, month);
  let lastError: ConcurrentModificationError | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const { index: current, etag } =
      attempt === 1 && known ? known : await loadMonthIndex(deps, shopId, month);
    const next = change(current);
    if (next.index === null) return { result: next.result, written: false, index: current, etag };
    try {
      const written = await putConditional(
        deps.s3,
        {
          Bucket: deps.bucket,
          Key: key,
          Body: serializeMonthIndex(next.index),
          ...MONTH_INDEX_HEADERS,
        },
        etag,
      );
      return { result: next.result, written: true, index: next.index, etag: written };
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
      lastError = err;
    }
  }
  throw lastError ?? new ConcurrentModificationError(key);
};
