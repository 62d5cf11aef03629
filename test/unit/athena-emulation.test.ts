import { RAW_COLUMNS } from '../../infra/construct/archive-sql';
import {
  checkInjected,
  checkViewInjected,
  type GlueTable,
  jsonStructure,
  tableReads,
  trinoToDuck,
} from '../support/athena-emulation';

/**
 * The Athena emulation the view-equivalence test runs the construct's SQL on
 * (test/support/athena-emulation.ts): its Glue types, its partition projection and its Trino → DuckDB
 * rewrites, each against what the AWS docs say.
 */
describe('Glue types as DuckDB json_transform structures', () => {
  it('maps every raw column the construct declares', () => {
    const byName = Object.fromEntries(RAW_COLUMNS.map((c) => [c.name, jsonStructure(c.type as string)]));
    expect(byName.type).toBe('VARCHAR');
    expect(byName.row_omitted).toEqual(['VARCHAR']);
    expect(byName.details).toEqual({
      chunk_ids: ['VARCHAR'],
      failed: 'MAP(VARCHAR, VARCHAR[])',
      skipped: 'MAP(VARCHAR, VARCHAR[])',
      conflict: 'MAP(VARCHAR, STRUCT("doc_id" VARCHAR)[])',
    });
    expect(byName.job).toMatchObject({ status: 'VARCHAR', total_items: 'BIGINT' });
  });

  it('refuses what it does not emulate', () => {
    expect(() => jsonStructure('double')).toThrow(/not emulated/);
    expect(() => jsonStructure('array<string')).toThrow(/'>' expected/);
  });
});

/** Athena's own `${…}` placeholders, not a JS template. */
const at = (name: string) => ['$', `{${name}}`].join('');

describe('partition projection', () => {
  const table = (over: Partial<GlueTable>): GlueTable => ({
    name: 't',
    columns: [],
    partitionKeys: [],
    parameters: {},
    location: 's3://b/job-details-cold/',
    ...over,
  });
  const keys = [
    'job-details-cold/s1/2026-01/p1.jsonl.gz',
    'job-details-cold/s1/2025-12/p0.jsonl.gz',
    'job-details-cold/_shared/2026-01/p2.jsonl.gz',
    'job-details-cold/s1/2026-01/deeper/p3.jsonl.gz',
  ];

  it('reads the objects directly under the location template, with injected and dated values', () => {
    const projected = table({
      partitionKeys: [
        { Name: 'shop_id', Type: 'string' },
        { Name: 'month', Type: 'string' },
      ],
      parameters: {
        'projection.enabled': 'true',
        'projection.shop_id.type': 'injected',
        'projection.month.type': 'date',
        'projection.month.format': 'yyyy-MM',
        'projection.month.range': '2026-01,NOW',
        'storage.location.template': `s3://b/job-details-cold/${at('shop_id')}/${at('month')}/`,
      },
    });
    expect(tableReads(projected, 'b', keys)).toEqual([
      { key: keys[0], partition: { shop_id: 's1', month: '2026-01' } },
      { key: keys[2], partition: { shop_id: '_shared', month: '2026-01' } },
    ]);
    const shared = table({
      partitionKeys: [{ Name: 'month', Type: 'string' }],
      parameters: {
        ...projected.parameters,
        'storage.location.template': `s3://b/job-details-cold/_shared/${at('month')}/`,
      },
    });
    expect(tableReads(shared, 'b', keys)).toEqual([{ key: keys[2], partition: { month: '2026-01' } }]);
  });

  it('reads every object under an unpartitioned table’s location, at any depth', () => {
    expect(tableReads(table({}), 'b', keys).map((r) => r.key)).toEqual(keys);
  });
});

describe('the injected projection rule (CONSTRAINT_VIOLATION)', () => {
  // AWS: "the WHERE clause must contain only static equality conditions, and at least one such
  // condition must be present" for an injected partition column (its docs' example uses IN).
  const parts: GlueTable = {
    name: 'parts',
    columns: [],
    partitionKeys: [{ Name: 'shop_id', Type: 'string' }],
    parameters: { 'projection.enabled': 'true', 'projection.shop_id.type': 'injected' },
    location: 's3://b/job-details-cold/',
  };
  const fleet: GlueTable = { ...parts, name: 'fleet', partitionKeys: [], parameters: {} };
  const raw = new Map([
    ['parts', parts],
    ['fleet', fleet],
  ]);
  const views = new Map([
    ['jobs', "SELECT j.shop_id AS shop_id FROM parts j WHERE j.type = 'job'"],
    ['fleet_jobs', 'SELECT j.shop_id AS shop_id FROM fleet j'],
  ]);
  const refused = /CONSTRAINT_VIOLATION: For the injected projected partition column shop_id/;

  it('takes a query that says shop_id = literal, = ? or IN (…), directly or through a view', () => {
    for (const sql of [
      "SELECT * FROM parts WHERE shop_id = 's1'",
      'SELECT * FROM jobs WHERE shop_id = ? AND month BETWEEN ? AND ?',
      "SELECT * FROM jobs WHERE shop_id IN ('a', 'b')",
      'SELECT shop_id, COUNT(*) FROM fleet_jobs GROUP BY shop_id',
    ])
      expect(() => checkInjected(sql, raw, views)).not.toThrow();
  });

  it('refuses one without that equality, or with any other condition on the column', () => {
    for (const sql of [
      'SELECT * FROM parts',
      "SELECT * FROM jobs WHERE month = '2026-01'",
      "SELECT * FROM jobs WHERE shop_id <> '_shared'",
      "SELECT * FROM jobs WHERE shop_id = 'a' OR shop_id LIKE 'b%'",
      "SELECT * FROM jobs WHERE shop_id = 'a' AND shop_id IS NOT NULL",
    ])
      expect(() => checkInjected(sql, raw, views)).toThrow(refused);
  });

  it('refuses a view that puts a condition but equality on the column', () => {
    expect(() =>
      checkViewInjected('jobs', "SELECT j.shop_id AS shop_id FROM parts j WHERE j.shop_id <> '_shared'", raw),
    ).toThrow(/view jobs: a condition on the injected partition column shop_id of parts/);
    expect(() =>
      checkViewInjected('fleet_jobs', 'SELECT 1 FROM fleet j WHERE j.shop_id IS NOT NULL', raw),
    ).not.toThrow();
    expect(() =>
      checkViewInjected(
        'jobs',
        `SELECT 1 FROM parts j WHERE regexp_extract(j."$path", 'x', 1) <> '_shared'`,
        raw,
      ),
    ).not.toThrow();
  });
});

describe('Trino → DuckDB', () => {
  it('rewrites the forms the views use, and nothing else', () => {
    const sql = [
      'SELECT COALESCE(reduce(map_values(j.details.failed), 0, (s, l) -> s + cardinality(l), s -> s), 0) AS failed,',
      '  COALESCE(cardinality(j.details.chunk_ids), 0) AS chunks',
      'FROM parts j',
      'CROSS JOIN UNNEST(j.details.failed) AS r(reason, items)',
      'CROSS JOIN UNNEST(r.items) AS d(item)',
    ].join('\n');
    expect(trinoToDuck(sql)).toBe(
      [
        'SELECT COALESCE(list_reduce(list_transform(map_values(j.details.failed), l -> len(l)), (s, n) -> s + n, 0::BIGINT), 0) AS failed,',
        '  COALESCE(len(j.details.chunk_ids), 0) AS chunks',
        'FROM parts j',
        'CROSS JOIN LATERAL (SELECT UNNEST(map_keys(j.details.failed)) AS reason, UNNEST(map_values(j.details.failed)) AS items) AS r',
        'CROSS JOIN UNNEST(r.items) AS d(item)',
      ].join('\n'),
    );
  });

  it('refuses a Trino form it does not know', () => {
    expect(() => trinoToDuck('SELECT reduce(x, 1, (a, b) -> a * b, a -> a) FROM t')).toThrow(/not rewritten/);
  });
});
