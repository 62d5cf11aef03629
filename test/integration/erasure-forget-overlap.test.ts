import { gunzipSync, gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { ObservabilitySink } from '../../functions/sink';
import { stepHandlers } from '../../infra/local/runner';
import { WATERMARK_KEY } from '../../shared/archive/format';
import type { RunReport } from '../../shared/archive/steps/types';
import type { ForgetResult } from '../../shared/erasure/forget';
import {
  DAY,
  getBytes,
  inMonth,
  runLocal,
  type SeededJob,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';
import { deferred } from '../support/deferred';
import { lookups, whereNamed } from '../support/erasure-fixtures';
import { type Call, FaultLayer } from '../support/faults';

/**
 * Forget beside a running archival (two executions of the synthesized state machine at once): the
 * archival is held at one of its two reads of the watermark's erasure summary — before it archives the
 * batch (the first read), and just before the groups' commits (every later read) — while the forget
 * runs to completion; then it goes on. Either way the shop's data does not come back, the other shop
 * of the batch is archived as usual, and the archival's own Report scrubs its scratch of the shop
 * (forget left it a marker).
 */
jest.setTimeout(300_000);

const runs = setUpMachineRuns();
const layer = new FaultLayer();
const ARCHIVE = { olderThanDays: 30, graceHours: 0 };

const holdAt = (nth: number) => {
  const reached = deferred<void>();
  const release = deferred<void>();
  let seen = 0;
  layer.fault = {
    at: 'call',
    fired: 0,
    async handle(c: Call, send) {
      if (c.step === 'archive-batch' && c.command === 'GetObjectCommand' && c.input.Key === WATERMARK_KEY) {
        seen++;
        // The first read alone; or every commit check (each group's, in any order).
        if (nth === 1 ? seen === 1 : seen >= nth) {
          this.fired++;
          reached.resolve();
          await release.promise;
        }
      }
      return send();
    },
  };
  return { reached: reached.promise, release: () => release.resolve() };
};

const seedShops = async (shopId: string, other: string) => {
  const { env } = runs;
  const jobs: SeededJob[] = [];
  for (const s of [shopId, other])
    for (const day of [4, 8])
      jobs.push(await seedTerminalJob(env, { shopId: s, completedAt: inMonth(2, day) }));
  return jobs;
};

test.each([
  ['before the batch archives (its first check)', 1, 'SUCCEEDED'],
  ['between the part and its commit (the check before the index write)', 2, 'FAILED'],
])('held %s: the forgotten shop does not come back', async (_name, nth, archivalStatus) => {
  const { env, definition } = runs;
  layer.install(env.machineDeps);
  const handlers = (sink: ObservabilitySink) => layer.wrap(stepHandlers(() => env.machineDeps, sink));
  const shopId = `ov${nth}-shop.myshopify.com`;
  const other = `ov${nth}-other.myshopify.com`;
  const jobs = await seedShops(shopId, other);
  const hold = holdAt(nth);
  const archival = runLocal(env, { definition, input: ARCHIVE, handlers });
  await hold.reached;
  const forgot = await runLocal(env, { definition, input: { forget: { shopId } }, handlers });
  hold.release();
  const a = await archival;
  layer.fault = null;

  expect(forgot.status).toBe('SUCCEEDED');
  expect((forgot.output as ForgetResult).counts.jobRows).toBe(2);
  // The archival still going: forget left its scratch to the run's own Report (docs/erasure.md).
  expect((forgot.output as ForgetResult).counts.scratchRunsDeferred).toBe(1);
  expect(a.status).toBe(archivalStatus);
  if (archivalStatus === 'FAILED') {
    // The part built before the forget is removed, never committed; the run says so.
    expect(a.error).toMatchObject({ error: 'ArchiveRunIncomplete' });
    expect(String((a.error as { cause?: string }).cause)).toContain('ShopForgottenError');
  } else {
    expect(a.output as RunReport).toMatchObject({ jobsArchived: 2, groupsFailedCount: 0 });
  }
  expect(await whereNamed(env, shopId)).toEqual([]);
  // The other shop of the same batch: archived, read back from the archive.
  const theirs = jobs.filter((j) => j.shopId === other);
  expect((await lookups(env, theirs)).every((l) => l.includes('"source":"archive"'))).toBe(true);
  // A later archival run converges and brings nothing back.
  const later = await runLocal(env, { definition, input: ARCHIVE });
  expect(later.status).toBe('SUCCEEDED');
  expect(await whereNamed(env, shopId)).toEqual([]);
});

test('a run rewriting its scratch while forget scrubs it: the If-Match fails (412), forget reads it again and scrubs that', async () => {
  const { env, definition } = runs;
  layer.install(env.machineDeps);
  const handlers = (sink: ObservabilitySink) => layer.wrap(stepHandlers(() => env.machineDeps, sink));
  const shopId = 'ov-race-shop.myshopify.com';
  await seedShops(shopId, 'ov-race-other.myshopify.com');
  const archived = await runLocal(env, { definition, input: ARCHIVE });
  const pageKey = `job-details-runs/${(archived.output as RunReport).runId}/pages/0.json.gz`;
  // Just before forget's conditional PUT of the page results, the run writes them again (still
  // naming the shop, with a change of its own): the real s3rver (If-Match patched) answers 412.
  layer.fault = {
    at: 'call',
    fired: 0,
    async handle(c: Call, send) {
      if (
        c.step === 'forget' &&
        c.command === 'PutObjectCommand' &&
        c.input.Key === pageKey &&
        this.fired === 0
      ) {
        this.fired++;
        const doc = JSON.parse(
          gunzipSync(await getBytes(env.s3, env.bucket, pageKey)).toString('utf8'),
        ) as object;
        await env.s3.send(
          new PutObjectCommand({
            Bucket: env.bucket,
            Key: pageKey,
            Body: gzipSync(JSON.stringify({ ...doc, interrupted_batches: [7], note: `${shopId} again` })),
          }),
        );
      }
      return send();
    },
  };
  env.advance(DAY); // past the run timeout: the archival has ended
  const forgot = await runLocal(env, { definition, input: { forget: { shopId } }, handlers }).finally(() =>
    env.advance(-DAY),
  );
  const fired = layer.fault.fired;
  layer.fault = null;
  expect(fired).toBe(1);
  expect(forgot.status).toBe('SUCCEEDED');
  expect(await whereNamed(env, shopId)).toEqual([]);
  // The run's own change survived the scrub: forget rewrote what it read the second time.
  const page = JSON.parse(gunzipSync(await getBytes(env.s3, env.bucket, pageKey)).toString('utf8')) as Record<
    string,
    unknown
  >;
  expect(page.interrupted_batches).toEqual([7]);
  expect(page.note).toMatch(/^forgotten-shop:[0-9a-f]{12} again$/);
});
