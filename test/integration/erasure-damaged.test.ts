import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { memoryOutput } from '../../infra/cli/output';
import { parseRedactOptions, redactCommand } from '../../infra/cli/redact';
import {
  blockRanges,
  parseSharedIndex,
  type SharedPart,
  sharedIndexKey,
  sharedPartKey,
  shopsOfBlock,
} from '../../shared/archive/format';
import { forgetShop } from '../../shared/erasure/forget';
import { getRequest } from '../../shared/erasure/ledger';
import { ErasureIncompleteError } from '../../shared/errors';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  daysAgo,
  getBytes,
  listKeys,
  runMachine,
  type SeededJob,
  seedBigJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import { lookups, whereNamed } from '../support/erasure-fixtures';
import { bucketContents, seedDocJob } from '../support/redact-fixtures';

/**
 * Issue 31, case 10: a shared part with a block that does not inflate blocked the erasure of every
 * shop in it for good ("block at 0 does not inflate", on every rerun), with no repair. Now forget
 * drops the unreadable blocks: those of the forgotten shop alone at once (the erasure removes them
 * anyway), those that also hold other shops' records only when asked (`dropDamaged`) — both counted
 * in the receipt — and the other shops' readable records are untouched.
 */
jest.setTimeout(300_000);

const ARCHIVE = { olderThanDays: 30, graceHours: 0 };

/** The month's one shared part, after a run packed it. */
const sharedPart = async (env: ArchiverEnv, month: string): Promise<SharedPart> => {
  const index = parseSharedIndex(await getBytes(env.s3, env.bucket, sharedIndexKey(month)), 'shared');
  expect(index.parts).toHaveLength(1);
  return index.parts[0] as SharedPart;
};

/** Flips a byte in the middle of the block at `offset` (same size: a CRC-32 failure). */
const damageBlock = async (env: ArchiverEnv, month: string, part: SharedPart, offset: number) => {
  const key = sharedPartKey(month, part.name);
  const bytes = Buffer.from(await getBytes(env.s3, env.bucket, key));
  const block = blockRanges(part.blocks ?? []).find((b) => b.offset === offset);
  if (!block) throw new Error(`no block at ${offset}`);
  const at = block.offset + Math.floor(block.length / 2);
  bytes[at] = (bytes[at] as number) ^ 0xff;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: bytes }));
};

const answers = (l: string[]) =>
  l.map((x) => {
    const v = JSON.parse(x) as { job: string; d: { details: unknown }; p: { data: unknown } };
    return JSON.stringify([v.job, v.d.details, v.p.data]);
  });

test("a damaged block of the forgotten shop alone is dropped; the other shops' records are untouched", async () => {
  const env = await archiverEnv({ packBelowKb: 512 });
  const at = daysAgo(45);
  const month = at.toISOString().slice(0, 7);
  const gone = 'dm-a-gone.myshopify.com';
  // A job whose record line is longer than a block: a block of its own, in the shop's segment alone.
  const docs = Array.from({ length: 12_000 }, () => randomBytes(8).toString('hex'));
  await seedBigJob(env, gone, at, docs);
  const others: SeededJob[] = [];
  for (const shopId of ['dm-b.myshopify.com', 'dm-c.myshopify.com'])
    others.push(await seedTerminalJob(env, { shopId, completedAt: new Date(at.getTime() + 60_000) }));
  const run = await runMachine(env, { input: ARCHIVE });
  expect(run.report).toMatchObject({ jobsArchived: 3, groupsFailedCount: 0 });
  const part = await sharedPart(env, month);
  const alone = blockRanges(part.blocks ?? []).filter((b) => {
    const shops = shopsOfBlock(part, b.offset);
    return shops.length === 1 && shops[0] === gone;
  });
  expect(alone.length).toBeGreaterThan(0);
  const before = await lookups(env, others);
  await damageBlock(env, month, part, (alone[0] as { offset: number }).offset);

  const done = await forgetShop(env.deps, { shopId: gone, requestId: 'dm-1', runId: 'forget-dm-1' });
  expect(done.counts).toMatchObject({ sharedParts: 1, damagedBlocksDropped: 1, otherShopsEntriesDropped: 0 });
  expect((await getRequest(env, 'dm-1'))?.request).toMatchObject({
    state: 'complete',
    receipt: { complete: true, damagedBlocksDropped: 1, otherShopsEntriesDropped: 0 },
  });
  expect(await whereNamed(env, 'dm-a-gone')).toEqual([]);
  expect(answers(await lookups(env, others))).toEqual(answers(before));
  expect(Object.keys((await sharedPart(env, month)).segments).sort()).toEqual([
    'dm-b.myshopify.com',
    'dm-c.myshopify.com',
  ]);
});

test("a damaged block shared with other shops: forget stops naming dropDamaged; with it, the block goes and the receipt counts the others' entries", async () => {
  const env = await archiverEnv({ packBelowKb: 512 });
  const at = daysAgo(45);
  const month = at.toISOString().slice(0, 7);
  const gone = 'ds-a-gone.myshopify.com';
  for (const shopId of [gone, 'ds-b.myshopify.com'])
    for (const n of [0, 1])
      await seedTerminalJob(env, { shopId, completedAt: new Date(at.getTime() + n * 60_000) });
  const run = await runMachine(env, { input: ARCHIVE });
  expect(run.report).toMatchObject({ jobsArchived: 4, groupsFailedCount: 0 });
  const part = await sharedPart(env, month);
  // Small shop-months: one block holds both shops' lines.
  expect(shopsOfBlock(part, 0).sort()).toEqual([gone, 'ds-b.myshopify.com']);
  await damageBlock(env, month, part, 0);

  const refused = forgetShop(env.deps, { shopId: gone, requestId: 'ds-1', runId: 'forget-ds-1' });
  await expect(refused).rejects.toThrow(ErasureIncompleteError);
  await expect(refused).rejects.toThrow('--drop-damaged');
  expect((await getRequest(env, 'ds-1'))?.request.state).not.toBe('complete');

  const done = await forgetShop(env.deps, {
    shopId: gone,
    requestId: 'ds-1',
    runId: 'forget-ds-2',
    dropDamaged: true,
  });
  expect(done.counts).toMatchObject({ damagedBlocksDropped: 1, otherShopsEntriesDropped: 2 });
  expect((await getRequest(env, 'ds-1'))?.request).toMatchObject({
    state: 'complete',
    receipt: { complete: true, damagedBlocksDropped: 1, otherShopsEntriesDropped: 2 },
  });
  expect(await whereNamed(env, 'ds-a-gone')).toEqual([]);
  // Nothing of the part could be read: it is gone, and with it the other shop's view of the month.
  const index = parseSharedIndex(await getBytes(env.s3, env.bucket, sharedIndexKey(month)), 'shared');
  expect(index.parts).toEqual([]);
  expect([...index.views.keys()]).toEqual([]);
});

test('redact in a damaged shared part: pending (damaged, named) instead of failing; --drop-damaged repairs and completes', async () => {
  const env = await archiverEnv({ packBelowKb: 512 });
  const at = daysAgo(45);
  const month = at.toISOString().slice(0, 7);
  const shop = 'dr-a.myshopify.com';
  const doc = 'customer-damaged-1';
  await seedDocJob(env, shop, at, [{ failed: { timeout: [doc, 'keep-1'] } }]);
  await seedDocJob(env, 'dr-b.myshopify.com', at, [{ failed: { timeout: ['keep-2'] } }]);
  const run = await runMachine(env, { input: ARCHIVE });
  expect(run.report).toMatchObject({ jobsArchived: 2, groupsFailedCount: 0 });
  const part = await sharedPart(env, month);
  expect(shopsOfBlock(part, 0)).toContain(shop);
  await damageBlock(env, month, part, 0);

  const io = memoryOutput();
  const first = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop, doc, 'request-id': 'dr-1' }),
    io,
  );
  expect(first.exitCode).toBe(5);
  const key = sharedPartKey(month, part.name);
  expect(first.results[0]?.report.pending).toEqual([{ key, storageClass: 'STANDARD', reason: 'damaged' }]);
  expect((await getRequest(env, 'dr-1'))?.request).toMatchObject({ state: 'pending' });
  expect((await getRequest(env, 'dr-1'))?.request.pendingReason).toContain(key);
  expect(io.stdout.join('\n')).toContain('--drop-damaged');

  const fixed = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop, doc, 'request-id': 'dr-1', 'drop-damaged': true }),
    memoryOutput(),
  );
  expect(fixed.exitCode).toBe(0);
  expect(fixed.results[0]?.report.archive).toMatchObject({
    damagedBlocksDropped: 1,
    damagedEntriesDropped: 2,
  });
  expect((await getRequest(env, 'dr-1'))?.request).toMatchObject({
    state: 'complete',
    receipt: { damagedBlocksDropped: 1, damagedEntriesDropped: 2 },
  });
  for (const [k, o] of await bucketContents(env))
    if (!k.startsWith('job-details-erasure/requests/') && !k.startsWith('job-details/'))
      expect(o.text.includes(doc) ? k : null).toBeNull();
});

test('redact --drop-damaged: the damaged block dropped and the document redacted in one new part; the other shop reads as before', async () => {
  const env = await archiverEnv({ packBelowKb: 512 });
  const at = daysAgo(45);
  const month = at.toISOString().slice(0, 7);
  const shop = 'dx-a.myshopify.com';
  const doc = 'customer-damaged-2';
  const big = Array.from({ length: 12_000 }, () => randomBytes(8).toString('hex'));
  await seedBigJob(env, shop, at, big);
  await seedDocJob(env, shop, new Date(at.getTime() + 60_000), [{ failed: { timeout: [doc, 'keep-1'] } }]);
  const other = await seedTerminalJob(env, { shopId: 'dx-b.myshopify.com', completedAt: at });
  const run = await runMachine(env, { input: ARCHIVE });
  expect(run.report).toMatchObject({ jobsArchived: 3, groupsFailedCount: 0 });
  const part = await sharedPart(env, month);
  const alone = blockRanges(part.blocks ?? []).filter((b) => {
    const shops = shopsOfBlock(part, b.offset);
    return shops.length === 1 && shops[0] === shop && b.length > 20_000; // the big job's own block
  });
  expect(alone).toHaveLength(1);
  const before = await lookups(env, [other]);
  await damageBlock(env, month, part, (alone[0] as { offset: number }).offset);

  const { exitCode, results } = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop, doc, 'request-id': 'dx-1', 'drop-damaged': true }),
    memoryOutput(),
  );
  expect(exitCode).toBe(0);
  expect(results[0]?.report.archive).toMatchObject({
    listings: 1,
    damagedBlocksDropped: 1,
    damagedEntriesDropped: 1,
  });
  expect(answers(await lookups(env, [other]))).toEqual(answers(before));
  const after = await sharedPart(env, month);
  expect(after.name).not.toBe(part.name);
  expect(await listKeys(env.s3, env.bucket, 'job-details-cold/_shared/')).toEqual([
    sharedPartKey(month, after.name),
  ]);
  for (const [k, o] of await bucketContents(env))
    if (!k.startsWith('job-details-erasure/requests/') && !k.startsWith('job-details/'))
      expect(o.text.includes(doc) ? k : null).toBeNull();
});
