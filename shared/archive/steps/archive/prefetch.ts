import { InvalidInputError } from '../../../errors';

type Outcome<R> = { ok: true; value: R } | { ok: false; err: unknown };

/**
 * Runs `fn` over `items` ahead of the consumer and yields the results IN INPUT ORDER. At most `window`
 * results are started but not yet consumed, and no new item starts while finished-but-unconsumed
 * results hold `maxBytes` or more (by `sizeOf`), so memory stays bounded while reads overlap.
 *
 * The first failure is thrown when the consumer reaches it; whenever the generator ends (done, thrown,
 * or the consumer stopped early) it first waits for everything it started, so no read outlives it.
 */
export async function* orderedPrefetch<T, R>(
  items: readonly T[],
  fn: (item: T) => Promise<R>,
  opts: { window: number; maxBytes: number; sizeOf: (r: R) => number },
): AsyncGenerator<R> {
  if (!Number.isInteger(opts.window) || opts.window < 1) {
    throw new InvalidInputError('window', `expected a whole number ≥ 1, got ${opts.window}`);
  }
  // Started and not yet consumed, by index. A consumed promise is dropped at once: a settled promise
  // holds its value, so keeping them all would keep every result of the month in memory.
  const started = new Map<number, Promise<Outcome<R>>>();
  let startedCount = 0;
  const sizes = new Map<number, number>();
  let buffered = 0;
  let consumed = 0;
  let stop = false;
  const fill = (): void => {
    while (
      !stop &&
      startedCount < items.length &&
      startedCount - consumed < opts.window &&
      buffered < opts.maxBytes
    ) {
      const i = startedCount++;
      started.set(
        i,
        fn(items[i] as T).then(
          (value): Outcome<R> => {
            const size = opts.sizeOf(value);
            sizes.set(i, size);
            buffered += size;
            return { ok: true, value };
          },
          (err: unknown): Outcome<R> => {
            stop = true;
            return { ok: false, err };
          },
        ),
      );
    }
  };
  try {
    fill();
    while (consumed < items.length) {
      // fill() always leaves the next unconsumed item started (the window and budget count only
      // items ahead of it), so this index exists.
      const outcome = await (started.get(consumed) as Promise<Outcome<R>>);
      started.delete(consumed);
      if (!outcome.ok) throw outcome.err;
      buffered -= sizes.get(consumed) ?? 0;
      sizes.delete(consumed);
      consumed++;
      fill();
      yield outcome.value;
    }
  } finally {
    stop = true;
    await Promise.all(started.values());
  }
}
