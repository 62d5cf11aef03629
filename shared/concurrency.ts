import { InvalidInputError } from './errors';

/**
 * Runs `fn` over `items` with at most `limit` calls in flight and returns the results in input order.
 *
 * On the first rejection no further items are started; the call then waits for the ones already in
 * flight to settle and rejects with that first error (later errors are dropped). Waiting matters for
 * callers that act on failure — e.g. the archiver must not report "failed, nothing deleted" while a
 * DeleteObject it started is still running.
 */
export const mapLimit = async <T, R>(
  items: Iterable<T>,
  limit: number,
  fn: (item: T, index: number) => Promise<R> | R,
): Promise<R[]> => {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new InvalidInputError('limit', `expected a whole number ≥ 1, got ${String(limit)}`);
  }
  const list = Array.from(items);
  const results = new Array<R>(list.length);
  let next = 0;
  let failed = false;
  let firstError: unknown;

  const worker = async (): Promise<void> => {
    while (!failed && next < list.length) {
      const index = next++;
      try {
        // `as T`: index < list.length, so the slot exists (noUncheckedIndexedAccess cannot see that).
        results[index] = await fn(list[index] as T, index);
      } catch (err) {
        if (!failed) {
          failed = true;
          firstError = err;
        }
      }
    }
  };

  await Promise.all(Array.from({ length: Math.min(limit, list.length) }, worker));
  if (failed) throw firstError;
  return results;
};

/** Waits `ms` (retry backoff between attempts; never used to wait for another party's work). */
export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A counting semaphore: at most `size` tasks inside `run` at once, FIFO. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new InvalidInputError('size', `expected a whole number ≥ 1, got ${size}`);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
