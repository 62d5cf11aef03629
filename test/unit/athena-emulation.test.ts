import { RAW_COLUMNS } from '../../infra/construct/archive-sql';
import { type GlueTable, jsonStructure, tableReads, trinoToDuck } from '../support/athena-emulation';

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
