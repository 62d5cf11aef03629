import type { ObservabilitySink } from '../../functions/sink';
import { stepHandlers, synthesizedDefinition } from '../../infra/local/runner';
import { parseSharedIndex, sharedIndexKey } from '../../shared/archive/format';
import type { ForgetResult } from '../../shared/erasure/forget';
import {
  archiverEnv,
  daysAgo,
  getBytes,
  listKeys,
  runLocal,
  type SeededJob,
  seedTerminalJob,
  sharedLineShops,
} from '../support/archiver-fixtures';
import { lookups, whereNamed } from '../support/erasure-fixtures';

/**
 * Forget a shop whose small shop-months were packed with other shops' into shared parts
 * (docs/archive-format.md, "Shared parts"): the part is rewritten without the shop's segment, the
 * month's shared index switched to it, the old part deleted — the other shops' lookups byte for byte.
 */
jest.setTimeout(300_000);

test('a packed shop is cut out of its shared part; the shops beside it read as before', async () => {
  // Packing on (the machine's default deps keep it off, like most tests): the handlers over env.deps.
  const env = await archiverEnv({ packBelowKb: 128 });
  const handlers = (sink: ObservabilitySink) => stepHandlers(() => env.deps, sink);
  const definition = synthesizedDefinition();
  const at = daysAgo(45);
  const month = at.toISOString().slice(0, 7);
  const jobs: SeededJob[] = [];
  for (const shopId of ['pk-gone.myshopify.com', 'pk-b.myshopify.com', 'pk-c.myshopify.com'])
    for (const n of [0, 1])
      jobs.push(await seedTerminalJob(env, { shopId, completedAt: new Date(at.getTime() + n * 60_000) }));
  const run = await runLocal(env, { definition, input: { olderThanDays: 30, graceHours: 0 }, handlers });
  expect(run.output).toMatchObject({ jobsArchived: 6, groupsFailedCount: 0 });
  const sharedBefore = parseSharedIndex(await getBytes(env.s3, env.bucket, sharedIndexKey(month)), 'shared');
  expect([...sharedBefore.views.keys()].sort()).toEqual([
    'pk-b.myshopify.com',
    'pk-c.myshopify.com',
    'pk-gone.myshopify.com',
  ]);
  const lineShops = (m: Record<string, string[]>) =>
    Object.fromEntries(Object.entries(m).map(([shop, ids]) => [shop, ids.sort()]));
  const linesBefore = lineShops(await sharedLineShops(env));
  expect(Object.keys(linesBefore).sort()).toEqual([...sharedBefore.views.keys()].sort());
  const others = jobs.filter((j) => j.shopId !== 'pk-gone.myshopify.com');
  const before = await lookups(env, others);

  const forgot = await runLocal(env, {
    definition,
    input: { forget: { shopId: 'pk-gone.myshopify.com' } },
    handlers,
  });
  expect(forgot.status).toBe('SUCCEEDED');
  expect((forgot.output as ForgetResult).counts).toMatchObject({ sharedParts: 1, jobRows: 2 });

  expect(await whereNamed(env, 'pk-gone')).toEqual([]);
  // The answers are byte for byte; only their provenance names the new part (and the bytes read:
  // the shared index is smaller), as any rewrite of a shared part must.
  const answers = (l: string[]) =>
    l.map((x) => {
      const v = JSON.parse(x) as { job: string; d: { details: unknown }; p: { data: unknown } };
      return JSON.stringify([v.job, v.d.details, v.p.data]);
    });
  expect(answers(await lookups(env, others))).toEqual(answers(before));
  const sharedAfter = parseSharedIndex(await getBytes(env.s3, env.bucket, sharedIndexKey(month)), 'shared');
  expect([...sharedAfter.views.keys()].sort()).toEqual(['pk-b.myshopify.com', 'pk-c.myshopify.com']);
  // The forgotten shop's lines are gone with the shop_id they named; the others keep theirs.
  const { 'pk-gone.myshopify.com': gone, ...kept } = linesBefore;
  expect(gone).toHaveLength(2);
  expect(lineShops(await sharedLineShops(env))).toEqual(kept);
  // One shared part, the new one; no intent or journal left.
  const parts = await listKeys(env.s3, env.bucket, 'job-details-cold/_shared/');
  expect(parts).toHaveLength(1);
  expect(parts[0]).toContain(sharedAfter.parts[0]?.name);
  expect(sharedAfter.parts[0]?.name).not.toBe(sharedBefore.parts[0]?.name);
  expect(
    (await listKeys(env.s3, env.bucket, 'job-details-index/_shared/')).filter((k) => k.includes('/pending/')),
  ).toEqual([]);
  expect(await listKeys(env.s3, env.bucket, 'job-details-erasure/rewrites/')).toEqual([]);
});
