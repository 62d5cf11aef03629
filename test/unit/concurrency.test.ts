import { mapLimit } from '../../shared/concurrency';
import { InvalidInputError } from '../../shared/errors';
import { deferred } from '../support/deferred';

/** Lets every already-queued microtask run (several hops, to get through async function bodies). */
const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('mapLimit', () => {
  it('returns results in input order, whatever the completion order', async () => {
    const gates = [deferred<void>(), deferred<void>(), deferred<void>()];
    const run = mapLimit([0, 1, 2], 3, async (n) => {
      await gates[n]?.promise;
      return n * 10;
    });
    gates[2]?.resolve();
    gates[0]?.resolve();
    gates[1]?.resolve();
    await expect(run).resolves.toEqual([0, 10, 20]);
  });

  it('never has more than `limit` calls in flight and runs every item once', async () => {
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    const out = await mapLimit(
      Array.from({ length: 50 }, (_, i) => i),
      4,
      async (n, index) => {
        expect(index).toBe(n);
        inFlight++;
        peak = Math.max(peak, inFlight);
        await flush();
        seen.push(n);
        inFlight--;
        return n;
      },
    );
    expect(peak).toBe(4);
    expect(out).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect([...seen].sort((a, b) => a - b)).toEqual(out);
  });

  it('handles an empty input and a limit larger than the input', async () => {
    await expect(mapLimit([], 3, async () => 1)).resolves.toEqual([]);
    await expect(mapLimit(new Set(['a', 'b']), 100, (s) => s.toUpperCase())).resolves.toEqual(['A', 'B']);
  });

  it('on the first error starts nothing new, waits for in-flight calls, then rejects with that error', async () => {
    const slow = deferred<string>();
    const started: number[] = [];
    let slowSettled = false;
    let rejected = false;
    const run = mapLimit([0, 1, 2, 3, 4], 2, async (n) => {
      started.push(n);
      if (n === 0) {
        const v = await slow.promise;
        slowSettled = true;
        return v;
      }
      if (n === 1) throw new Error('boom 1');
      if (n === 2) throw new Error('boom 2');
      return String(n);
    });
    run.catch(() => {
      rejected = true;
    });
    await flush();
    // Item 1 failed; item 0 is still running, so the call has not rejected yet and nothing new started.
    expect(started).toEqual([0, 1]);
    expect(rejected).toBe(false);
    slow.resolve('late');
    await expect(run).rejects.toThrow('boom 1');
    expect(slowSettled).toBe(true);
    expect(started).toEqual([0, 1]);
  });

  it('treats a synchronous throw like a rejection', async () => {
    await expect(
      mapLimit([1], 1, () => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects limit %p with InvalidInputError', async (limit) => {
    const fn = jest.fn(async () => 1);
    await expect(mapLimit([1, 2], limit, fn)).rejects.toBeInstanceOf(InvalidInputError);
    expect(fn).not.toHaveBeenCalled();
  });
});
