import type { DuckDBConnection } from '@duckdb/node-api';
import { compactDetails, documentsViewSql, projectedSource } from '../../shared/archive/format';
import { details } from '../support/archive-fixture';
import { trinoToDuck } from '../support/athena-emulation';
import { STORED_FORM_IDS } from '../support/numbered-ids';

/**
 * The documents view's id expression (flatten.ts storedId, as documentsViewSql deploys it) on DuckDB
 * (the Athena emulation's engine, json_transform to VARCHAR[] as the SerDe reads an array of strings
 * holding numbers), over lists of odd ids as compactDetails stores them: every id comes back as it was.
 */
const P = 'gid://shopify/Product/';
const ODD = [...STORED_FORM_IDS, "it's"];

let conn: DuckDBConnection;
let close: () => void;
beforeAll(async () => {
  const { DuckDBInstance } = require('@duckdb/node-api') as typeof import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  close = () => {
    conn.closeSync();
    instance.closeSync();
  };
});
afterAll(() => close());

test('the documents view restores every odd id of a stored list', async () => {
  const expr = /(CASE WHEN regexp_like\(d\.item[\s\S]*?END) AS doc_id/.exec(
    documentsViewSql(projectedSource('parts')),
  )?.[1];
  expect(expr).toBeDefined();
  const lists = ODD.flatMap((odd) => [
    [odd, `${P}7086727600000`],
    [`${P}7086727600000`, odd, `${P}7086727600001`, `${P}7086727599000`, odd],
    [`${odd}1`, `${odd}2`, `${odd}900`],
  ]);
  const stored = lists.map((l) =>
    JSON.stringify(compactDetails(details({ chunk_ids: [], failed: { r: l } })).failed.r),
  );
  await conn.run('CREATE TABLE l (n INTEGER, json VARCHAR)');
  const app = await conn.createAppender('l');
  stored.forEach((s, i) => {
    app.appendInteger(i);
    app.appendVarchar(s);
    app.endRow();
  });
  app.closeSync();
  const e = (expr ?? '').replace(/\bd\.item\b/g, 'item').replace(/\br\.items\b/g, 'items');
  const sql = trinoToDuck(
    `SELECT n, list(${e} ORDER BY i) AS ids FROM (SELECT n, items, generate_subscripts(items, 1) AS i, unnest(items) AS item FROM (SELECT n, json_transform(json, '["VARCHAR"]') AS items FROM l)) AS d(n, items, i, item) GROUP BY n ORDER BY n`,
  );
  const rows = (await (await conn.runAndReadAll(sql)).getRowObjectsJson()) as Array<{
    n: number;
    ids: string[];
  }>;
  expect(rows).toHaveLength(lists.length);
  for (const row of rows) expect([stored[row.n], row.ids]).toEqual([stored[row.n], lists[row.n]]);
});
