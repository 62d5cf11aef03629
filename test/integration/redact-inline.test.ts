import { GetCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { memoryOutput } from '../../infra/cli/output';
import { parseRedactOptions, redactCommand } from '../../infra/cli/redact';
import { getRequest } from '../../shared/erasure/ledger';
import { createJob } from '../../shared/jobs/create-job';
import { JobDetailsReader } from '../../shared/reader/reader';
import { archiverEnv, cliContextFor, daysAgo } from '../support/archiver-fixtures';

/**
 * Issue 31, case 9: a row from before the S3 offload keeps its details inline on the DynamoDB item
 * (shared/details/inline.ts, docs/components.md). `redact` reported such a document complete with 0
 * listings while the row still listed it — and every lookup still showed it. Now the row's inline
 * attributes that list it are rewritten without it, in whatever accepted shape they have.
 */
jest.setTimeout(120_000);

const SHOP = 'ri-shop.myshopify.com';
const DOC = 'customer-4242';

test("redact removes the document from a pre-migration row's inline details, each shape kept", async () => {
  const env = await archiverEnv();
  const { jobId } = await createJob(
    env.ddb,
    env.table,
    { shopId: SHOP, jobType: 'full_sync', platform: 'shopify', totalItems: 6 },
    { now: daysAgo(3) },
  );
  // The indexer of before the migration: the three attributes in the three accepted shapes.
  await env.ddb.send(
    new UpdateCommand({
      TableName: env.table,
      Key: { pk: `SHOP#${SHOP}`, sk: `JOB#${jobId}` },
      UpdateExpression: 'SET failed_items_details = :f, skipped_items_details = :s, conflict_details = :c',
      ExpressionAttributeValues: {
        ':f': { timeout: new Set([DOC, 'other-1']), missing: new Set([DOC]) },
        ':s': [
          { reason: 'unpublished', doc_id: DOC },
          { reason: 'unpublished', doc_id: 'other-2' },
        ],
        ':c': {
          version: [
            { doc_id: DOC, existing_version: 4 },
            { doc_id: 'other-3', existing_version: 1 },
          ],
        },
      },
    }),
  );
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const rowOf = async (): Promise<Record<string, unknown>> =>
    (
      await env.ddb.send(
        new GetCommand({ TableName: env.table, Key: { pk: `SHOP#${SHOP}`, sk: `JOB#${jobId}` } }),
      )
    ).Item ?? {};
  const read = async () => reader.readAllDetails({ shopId: SHOP, jobId, row: await rowOf() });
  expect(JSON.stringify((await read()).details)).toContain(DOC);

  const io = memoryOutput();
  const { exitCode, results } = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop: SHOP, doc: DOC, 'request-id': 'ri-1' }),
    io,
  );
  expect(exitCode).toBe(0);
  expect(results[0]?.report).toMatchObject({ complete: true, rows: { rewritten: 1, listings: 4 } });
  expect((await getRequest(env, 'ri-1'))?.request.receipt).toMatchObject({
    rowsRewritten: 1,
    rowListingsRemoved: 4,
  });
  expect(io.stdout.join('\n')).toContain('rows: 4 listings in 1 pre-migration rows rewritten');

  // The lookup no longer shows it; every other listing is there, in its shape.
  expect((await read()).details).toMatchObject({
    failed: { timeout: ['other-1'], missing: [] },
    skipped: { unpublished: ['other-2'] },
    conflict: { version: [{ doc_id: 'other-3', existing_version: 1 }] },
  });
  const row = await rowOf();
  expect(row.failed_items_details).toEqual({ timeout: new Set(['other-1']), missing: [] });
  expect(row.skipped_items_details).toEqual([{ reason: 'unpublished', doc_id: 'other-2' }]);
  // No row of the table names the document any more.
  const items = (await env.ddb.send(new ScanCommand({ TableName: env.table }))).Items ?? [];
  expect(
    items.filter((i) => JSON.stringify(i, (_k, v) => (v instanceof Set ? [...v] : v)).includes(DOC)),
  ).toEqual([]);

  // A rerun finds nothing left.
  const again = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop: SHOP, doc: DOC }),
    memoryOutput(),
  );
  expect(again.results[0]?.report).toMatchObject({ complete: true, rows: { rewritten: 0, listings: 0 } });
});
