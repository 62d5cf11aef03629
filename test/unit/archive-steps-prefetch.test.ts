import { orderedPrefetch } from '../../shared/archive/steps/archive/prefetch';
import { Semaphore } from '../../shared/concurrency';
import { deferred } from '../support/deferred';

const flush = () => new Promise((resolve) => setImmediate(resolve));

test('results come in input order even when later items finish first', async () => {
  const tasks = [deferred<number>(), deferred<number>(), deferred<number>()];
  const gen = orderedPrefetch([0, 1, 2], (i) => (tasks[i] as ReturnType<typeof deferred<number>>).promise, {
    window: 3,
    maxBytes: Number.POSITIVE_INFINITY,
    sizeOf: () => 0,
  });
  const first = gen.next();
  tasks[2]?.resolve(2);
  tasks[1]?.resolve(1);
  await flush();
  tasks[0]?.resolve(0);
  expect((await first).value).toBe(0);
  expect((await gen.next()).value).toBe(1);
  expect((await gen.next()).value).toBe(2);
  expect((await gen.next()).done).toBe(true);
});

test('never more than `window` items started ahead of the consumer', async () => {
  const started: number[] = [];
  const tasks = Array.from({ length: 6 }, () => deferred<number>());
  const gen = orderedPrefetch(
    [0, 1, 2, 3, 4, 5],
    (i) => {
      started.push(i);
      return (tasks[i] as ReturnType<typeof deferred<number>>).promise;
    },
    { window: 2, maxBytes: Number.POSITIVE_INFINITY, sizeOf: () => 0 },
  );
  const first = gen.next();
  await flush();
  expect(started).toEqual([0, 1]);
  for (const t of tasks) t.resolve(0);
  await first;
  await flush();
  expect(started).toEqual([0, 1, 2]);
  await gen.return(undefined);
});

test('finished-but-unconsumed bytes over the budget stop new starts', async () => {
  const started: number[] = [];
  const tasks = Array.from({ length: 4 }, () => deferred<number>());
  const gen = orderedPrefetch(
    [0, 1, 2, 3],
    (i) => {
      started.push(i);
      return (tasks[i] as ReturnType<typeof deferred<number>>).promise;
    },
    { window: 2, maxBytes: 10, sizeOf: () => 10 },
  );
  const first = gen.next();
  tasks[1]?.resolve(1);
  await flush();
  tasks[0]?.resolve(0);
  expect((await first).value).toBe(0);
  await flush();
  // The window would allow item 2, but finished item 1 holds the whole budget.
  expect(started).toEqual([0, 1]);
  expect((await gen.next()).value).toBe(1);
  await flush();
  // Budget free again: the window (2 ahead) fills.
  expect(started).toEqual([0, 1, 2, 3]);
  for (const t of tasks) t.resolve(0);
  await gen.return(undefined);
});

test('the first failure is thrown in order, and in-flight work settles before the generator ends', async () => {
  const slow = deferred<number>();
  let slowSettled = false;
  const gen = orderedPrefetch(
    [0, 1, 2],
    async (i) => {
      if (i === 0) return 0;
      if (i === 1) throw new Error('boom');
      const v = await slow.promise;
      slowSettled = true;
      return v;
    },
    { window: 3, maxBytes: Number.POSITIVE_INFINITY, sizeOf: () => 0 },
  );
  expect((await gen.next()).value).toBe(0);
  const failing = gen.next();
  let rejected = false;
  failing.catch(() => {
    rejected = true;
  });
  await flush();
  expect(rejected).toBe(false); // still waiting for item 2 to settle
  slow.resolve(2);
  await expect(failing).rejects.toThrow('boom');
  expect(slowSettled).toBe(true);
});

test('Semaphore admits at most `size` at once, in order', async () => {
  const sem = new Semaphore(2);
  let active = 0;
  let peak = 0;
  const order: number[] = [];
  await Promise.all(
    [0, 1, 2, 3, 4].map((i) =>
      sem.run(async () => {
        active++;
        peak = Math.max(peak, active);
        await flush();
        order.push(i);
        active--;
      }),
    ),
  );
  expect(peak).toBe(2);
  expect(order).toEqual([0, 1, 2, 3, 4]);
  expect(() => new Semaphore(0)).toThrow(/size/);
});
