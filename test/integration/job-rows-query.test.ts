/**
 * The archive step's read of a group's rows (shared/archive/steps/archive/job-rows.ts) on DynamoDB
 * Local: a Query over the shop's partition when the read units it reports say it is cheaper than
 * BatchGetItem's 0.5 a key, BatchGetItem for the rest otherwise — the same rows either way. Read units
 * are DynamoDB Local's own ConsumedCapacity (the first test checks that it bills as AWS does).
 */
import { randomBytes } from 'node:crypto';
import {
  BatchWriteCommand,
  DeleteCommand,
  NumberValue,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { buildStepDeps } from '../../functions/deps';
import { type JobRowSnapshot, QUERY_SLACK, readJobRows } from '../../shared/archive/steps/archive/job-rows';
import { parseConfig } from '../../shared/config';
import { ExactBatchGetCommand } from '../../shared/jobs/exact-commands';
import { jobPk, jobSk } from '../../shared/jobs/schema';
import { freshTable } from '../support/local';

jest.setTimeout(120_000);

type Deps = ReturnType<typeof buildStepDeps>;
let table: string;
let deps: Deps;
/** Every DynamoDB call of `deps`: its command and the read units DynamoDB Local reported. */
const calls: { command: string; units: number }[] = [];

beforeAll(async () => {
  table = await freshTable();
  deps = buildStepDeps(parseConfig(process.env), { bucket: 'unused', table });
  // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
  const stack = (deps.ddb as unknown as { middlewareStack: any }).middlewareStack;
  stack.add(
    // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
    (next: any, context: any) => async (args: any) => {
      args.input.ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(args);
      const cc = out.output?.ConsumedCapacity;
      const units = (Array.isArray(cc) ? cc : cc ? [cc] : []).reduce(
        (a: number, c: { CapacityUnits?: number }) => a + (c.CapacityUnits ?? 0),
        0,
      );
      calls.push({ command: String(context.commandName), units });
      return out;
    },
    { step: 'initialize', name: 'testConsumedCapacity' },
  );
});

afterAll(() => deps.destroy());

const newId = (): string => randomBytes(7).toString('hex').slice(0, 13);

/** A row like the indexer's (shared/seeds: counters, completed_chunks, timestamps, a ttl). */
const row = (shopId: string, jobId: string, pad = 0): Record<string, unknown> => ({
  pk: jobPk(shopId),
  sk: jobSk(jobId),
  job_id: jobId,
  job_status: 'COMPLETED',
  job_type: 'full_sync',
  created_at: '2026-01-10T10:00:00.000000+00:00',
  started_at: '2026-01-10T10:00:01.000000+00:00',
  completed_at: '2026-01-10T10:05:00.000000+00:00',
  status_created_at: '2026-01-10T10:05:00.000000+00:00',
  last_updated: '2026-01-10T10:05:00.000000+00:00',
  total_items: 1200,
  processed_items: 1180,
  failed_items: 12,
  skipped_items: 8,
  conflict_items: 0,
  retry_count: 0,
  ttl: 1776000000,
  completed_chunks: new Set(Array.from({ length: 24 }, (_, i) => `p${i}`)),
  ...(pad > 0 ? { pad: 'x'.repeat(pad) } : {}),
});

const put = async (items: Record<string, unknown>[]): Promise<void> => {
  for (let i = 0; i < items.length; i += 25) {
    let req: Record<string, unknown>[] | undefined = items
      .slice(i, i + 25)
      .map((Item) => ({ PutRequest: { Item } }));
    while (req && req.length > 0) {
      const r = await deps.ddb.send(new BatchWriteCommand({ RequestItems: { [table]: req } }));
      req = r.UnprocessedItems?.[table] as Record<string, unknown>[] | undefined;
    }
  }
};

/** What today's read (BatchGetItem of each key) returns: the reference. */
const batchGetAll = async (shopId: string, ids: readonly string[]): Promise<Map<string, unknown>> => {
  const out = new Map<string, unknown>();
  for (let i = 0; i < ids.length; i += 100) {
    const r = await deps.ddb.send(
      new ExactBatchGetCommand({
        RequestItems: {
          [table]: { Keys: ids.slice(i, i + 100).map((id) => ({ pk: jobPk(shopId), sk: jobSk(id) })) },
        },
      }),
    );
    expect(r.UnprocessedKeys?.[table]).toBeUndefined();
    for (const item of r.Responses?.[table] ?? []) out.set(String(item.job_id), item);
  }
  return out;
};

/** readJobRows with what it cost: read units and the calls of each kind. */
const measured = async (shopId: string, ids: readonly string[]) => {
  calls.length = 0;
  const rows = await readJobRows(deps, shopId, ids);
  const units = calls.reduce((a, c) => a + c.units, 0);
  const count = (command: string) => calls.filter((c) => c.command === command).length;
  return { rows, units, queries: count('QueryCommand'), batchGets: count('BatchGetItemCommand') };
};

const items = (rows: Map<string, JobRowSnapshot>) =>
  new Map([...rows].map(([id, r]) => [id, r.item] as const));

/** A shop whose partition holds `others` rows besides the group's `group` rows. */
const seedShop = async (group: number, others: number, pad = 0) => {
  const shopId = `shop-${newId()}`;
  const ids = Array.from({ length: group }, newId);
  const otherIds = Array.from({ length: others }, newId);
  await put([...ids, ...otherIds].map((id) => row(shopId, id, pad)));
  return { shopId, ids, otherIds };
};

test('DynamoDB Local bills a Query as AWS does: 4 KB units of the rows read in aggregate, half when eventually consistent', async () => {
  // Item size = attribute names + values (UTF-8): pk, sk and a pad filling it to 1,500 bytes.
  const shopId = 'q-capacity';
  const ids = ['job-00000000001', 'job-00000000002', 'job-00000000003'];
  const size = (pk: string, sk: string, pad: string) => 2 + pk.length + 2 + sk.length + 3 + pad.length;
  const pad = 'y'.repeat(1500 - size(jobPk(shopId), jobSk(ids[0] ?? ''), ''));
  await put(ids.map((id) => ({ pk: jobPk(shopId), sk: jobSk(id), pad })));
  expect(size(jobPk(shopId), jobSk(ids[2] ?? ''), pad)).toBe(1500);
  const query = (consistent: boolean, limit: number) =>
    deps.ddb.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': jobPk(shopId) },
        ConsistentRead: consistent,
        Limit: limit,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
  // 3 × 1,500 = 4,500 bytes → 2 units of 4 KB; 2 × 1,500 = 3,000 → 1 unit (not one a row).
  expect((await query(false, 3)).ConsumedCapacity?.CapacityUnits).toBe(1);
  expect((await query(true, 3)).ConsumedCapacity?.CapacityUnits).toBe(2);
  expect((await query(false, 2)).ConsumedCapacity?.CapacityUnits).toBe(0.5);
  // BatchGetItem bills each item as a GetItem: a 4 KB minimum per item. (A key without an item: 0 here;
  // readJobRows credits a Query nothing for one, so its bound holds whatever AWS bills for it.)
  calls.length = 0;
  await batchGetAll(shopId, [...ids, 'job-absent']);
  expect(calls.map((c) => c.units)).toEqual([1.5]);
});

test('a dense group (its partition holds mostly its rows) is read by Query, well below 0.5 read units a row, the same rows as BatchGetItem', async () => {
  const { shopId, ids, otherIds } = await seedShop(80, 10);
  // Two rows of the group expired (TTL): absent, as BatchGetItem has them.
  const expired = ids.slice(0, 2);
  for (const id of expired)
    await deps.ddb.send(new DeleteCommand({ TableName: table, Key: { pk: jobPk(shopId), sk: jobSk(id) } }));
  const reference = await batchGetAll(shopId, ids);
  expect(reference.size).toBe(78);
  const { rows, units, queries, batchGets } = await measured(shopId, ids);
  expect(items(rows)).toEqual(reference);
  for (const id of [...expired, ...otherIds]) expect(rows.has(id)).toBe(false);
  expect(rows.get(ids[5] ?? '')?.processed_items).toBe(1180);
  expect(queries).toBeGreaterThan(0);
  expect(batchGets).toBe(0);
  // 90 rows of ~600 bytes read in aggregate: a few units instead of 0.5 × 80 = 40.
  expect(units / ids.length).toBeLessThan(0.25);
});

test('a sparse group (a few rows in a big partition) stays within the bound: (1 + QUERY_SLACK) × BatchGetItem', async () => {
  const { shopId, ids } = await seedShop(12, 500);
  const reference = await batchGetAll(shopId, ids);
  const { rows, units, batchGets } = await measured(shopId, ids);
  expect(items(rows)).toEqual(reference);
  expect(batchGets).toBeGreaterThan(0);
  expect(units).toBeLessThanOrEqual((1 + QUERY_SLACK) * 0.5 * ids.length);
});

test('the bound holds for rows of nearly 4 KB (the worst case a page can meet)', async () => {
  const { shopId, ids } = await seedShop(30, 120, 3500);
  const reference = await batchGetAll(shopId, ids);
  const { rows, units } = await measured(shopId, ids);
  expect(items(rows)).toEqual(reference);
  expect(units).toBeLessThanOrEqual((1 + QUERY_SLACK) * 0.5 * ids.length);
});

test('numbers come out exact from the Query as from BatchGetItem (a Python Decimal beyond 2^53, a long fraction)', async () => {
  const shopId = `shop-${newId()}`;
  const ids = Array.from({ length: 20 }, newId);
  await put(ids.map((id) => row(shopId, id)));
  // Numbers a Python Decimal writes and a JS number cannot hold, written as their text.
  await deps.ddb.send(
    new UpdateCommand({
      TableName: table,
      Key: { pk: jobPk(shopId), sk: jobSk(ids[3] ?? '') },
      UpdateExpression: 'SET big = :b, frac = :f, huge = :h',
      ExpressionAttributeValues: {
        ':b': NumberValue.from('9223372036854775807'),
        ':f': NumberValue.from('0.12345678901234567890123'),
        ':h': NumberValue.from('1.5E+125'),
      },
    }),
  );
  const reference = await batchGetAll(shopId, ids);
  const { rows, queries, batchGets } = await measured(shopId, ids);
  expect(queries).toBeGreaterThan(0);
  expect(batchGets).toBe(0);
  const item = rows.get(ids[3] ?? '')?.item;
  expect(JSON.stringify({ b: item?.big, f: item?.frac })).toBe(
    '{"b":9223372036854775807,"f":0.12345678901234567890123}',
  );
  expect(items(rows)).toEqual(reference);
  expect(JSON.stringify(item?.huge)).toBe('1.5E+125');
});

test('a group of a few keys goes to BatchGetItem alone; keys never written are absent', async () => {
  const { shopId, ids } = await seedShop(3, 50);
  const { rows, queries, units } = await measured(shopId, [...ids, 'never-written']);
  expect(queries).toBe(0);
  expect([...rows.keys()].sort()).toEqual([...ids].sort());
  expect(units).toBe(1.5);
});

test("the Query's range and coverage follow DynamoDB's order (UTF-8 bytes), not JavaScript's (UTF-16)", async () => {
  const shopId = `shop-${newId()}`;
  // U+1F600 sorts before U+FF61 in UTF-16 (a surrogate, 0xD83D) and after it in UTF-8 (0xF0 vs 0xEF).
  const ids = ['\u{1F600}-job', '\uFF61-job', 'a-job', 'z-job', ...Array.from({ length: 8 }, newId)];
  await put(ids.map((id) => row(shopId, id)));
  const reference = await batchGetAll(shopId, ids);
  const { rows, queries, batchGets } = await measured(shopId, ids);
  expect(queries).toBeGreaterThan(0);
  expect(batchGets).toBe(0);
  expect(items(rows)).toEqual(reference);
  expect(rows.size).toBe(ids.length);
});
