import { gunzipSync } from 'node:zlib';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Template } from 'aws-cdk-lib/assertions';
import { COLD_PREFIX } from '../../shared/archive/format';
import { getObjectBytes } from '../../shared/s3/objects';

/**
 * What Athena would answer for the SQL the construct deploys, on DuckDB (no Athena exists locally):
 * the Glue tables of a synthesized template filled from a bucket's parts as Athena reads them, and
 * the views' Trino SQL created over them. Emulated, from the AWS docs:
 *
 * - Hive JSON SerDe: one row per line of every object of a table's location (gzip members back to
 *   back read as one stream); a column is the line's key of that name, cast to its Glue type; keys
 *   the table does not declare are ignored, absent ones are null.
 * - Partition projection: a partitioned table reads the objects directly under its
 *   `storage.location.template` with each `${key}` a projected value (`injected`: any; `date` in
 *   `yyyy-MM`: a month at or after the range start) and has those values as its partition columns.
 *   An unpartitioned table reads every object under its location, at any depth.
 * - `injected` projection's rule (AWS: "the WHERE clause must contain only static equality conditions,
 *   and at least one such condition must be present", else CONSTRAINT_VIOLATION): a view's branch over
 *   such a table may not constrain the column itself, and a query reading one (directly or through a
 *   view) must say `column = ?`, `column = '…'` or `column IN (…)` and nothing else of it (checkInjected; on the SQL text,
 *   which is all the views and documented queries need).
 * - `"$path"`: `s3://{bucket}/{key}`.
 *
 * The views' Trino SQL is rewritten only where DuckDB spells the same thing differently
 * (trinoToDuck); anything else Trino-only left in it fails the test.
 */

export interface GlueTable {
  readonly name: string;
  readonly columns: readonly { Name: string; Type: string }[];
  readonly partitionKeys: readonly { Name: string; Type: string }[];
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly location: string;
  readonly viewSql?: string;
}

type CfnString = string | { 'Fn::Join': [string, CfnString[]] } | Record<string, unknown>;

/** A template string with the bucket (any Ref / GetAtt in it) resolved to `bucket`. */
const resolve = (v: CfnString, bucket: string): string => {
  if (typeof v === 'string') return v;
  const join = (v as { 'Fn::Join'?: [string, CfnString[]] })['Fn::Join'];
  if (join) return join[1].map((p) => resolve(p, bucket)).join(join[0]);
  return bucket;
};

/** Every Glue table and view of a synthesized template, with the bucket resolved. */
export const glueTables = (template: Template, bucket: string): GlueTable[] =>
  Object.values(template.findResources('AWS::Glue::Table')).map((r) => {
    const t = (r as { Properties: { TableInput: Record<string, unknown> } }).Properties.TableInput;
    const sd = t.StorageDescriptor as { Columns?: { Name: string; Type: string }[]; Location?: CfnString };
    const params = (t.Parameters ?? {}) as Record<string, CfnString>;
    const view = /^\/\* Presto View: (.+) \*\/$/.exec(String(t.ViewOriginalText ?? ''));
    return {
      name: String(t.Name),
      columns: sd.Columns ?? [],
      partitionKeys: (t.PartitionKeys ?? []) as { Name: string; Type: string }[],
      parameters: Object.fromEntries(Object.entries(params).map(([k, v]) => [k, resolve(v, bucket)])),
      location: sd.Location ? resolve(sd.Location, bucket) : '',
      ...(view?.[1]
        ? {
            viewSql: (JSON.parse(Buffer.from(view[1], 'base64').toString('utf8')) as { originalSql: string })
              .originalSql,
          }
        : {}),
    };
  });

/**
 * A Glue (Hive) type as a DuckDB json_transform structure: struct → object, array → [t], map → a
 * MAP type string, scalars by name.
 */
export const jsonStructure = (glue: string): unknown => {
  let at = 0;
  const word = (): string => {
    const m = /^[a-z_0-9]+/i.exec(glue.slice(at));
    if (!m) throw new Error(`glue type ${glue}: a name expected at ${at}`);
    at += m[0].length;
    return m[0];
  };
  const eat = (c: string) => {
    if (glue[at] !== c) throw new Error(`glue type ${glue}: '${c}' expected at ${at}`);
    at++;
  };
  type T = { json: unknown; duck: string };
  const type = (): T => {
    const name = word();
    if (name === 'string') return { json: 'VARCHAR', duck: 'VARCHAR' };
    if (name === 'bigint') return { json: 'BIGINT', duck: 'BIGINT' };
    if (name === 'array') {
      eat('<');
      const e = type();
      eat('>');
      return { json: [e.json], duck: `${e.duck}[]` };
    }
    if (name === 'map') {
      eat('<');
      const k = type();
      eat(',');
      const v = type();
      eat('>');
      const duck = `MAP(${k.duck}, ${v.duck})`;
      return { json: duck, duck };
    }
    if (name === 'struct') {
      eat('<');
      const json: Record<string, unknown> = {};
      const duck: string[] = [];
      for (;;) {
        const f = word();
        eat(':');
        const t = type();
        json[f] = t.json;
        duck.push(`"${f}" ${t.duck}`);
        if (glue[at] === '>') break;
        eat(',');
      }
      eat('>');
      return { json, duck: `STRUCT(${duck.join(', ')})` };
    }
    throw new Error(`glue type ${glue}: ${name} is not emulated`);
  };
  const t = type();
  if (at !== glue.length) throw new Error(`glue type ${glue}: trailing text at ${at}`);
  return t.json;
};

/**
 * Trino → DuckDB for what the views use: `reduce(list, 0, (s, l) -> s + cardinality(l), s -> s)`,
 * `cardinality(list)`, `regexp_like` (DuckDB's `regexp_matches`: both true when the pattern matches
 * anywhere), and `CROSS JOIN UNNEST(map) AS r(k, v)`. Throws if a Trino-only form is left.
 */
export const trinoToDuck = (sql: string): string => {
  const out = sql
    .replace(
      /reduce\((.+?), 0, \((\w+), (\w+)\) -> \2 \+ cardinality\(\3\), \2 -> \2\)/g,
      (_m, list: string, s: string, l: string) =>
        `list_reduce(list_transform(${list}, ${l} -> len(${l})), (${s}, n) -> ${s} + n, 0::BIGINT)`,
    )
    .replace(/cardinality\(/g, 'len(')
    .replace(/\bregexp_like\(/g, 'regexp_matches(')
    .replace(
      /CROSS JOIN UNNEST\(([^()]+)\) AS (\w+)\((\w+), (\w+)\)/g,
      (_m, map: string, alias: string, k: string, v: string) =>
        `CROSS JOIN LATERAL (SELECT UNNEST(map_keys(${map})) AS ${k}, UNNEST(map_values(${map})) AS ${v}) AS ${alias}`,
    );
  const left = /\breduce\(|cardinality\(|\bregexp_like\(|UNNEST\([^()]*\) AS \w+\(\w+, \w+\)/.exec(out);
  if (left) throw new Error(`trinoToDuck: ${left[0]} is not rewritten`);
  return out;
};

/** The object keys (under `s3://{bucket}/`) a raw table reads, each with its partition values. */
export const tableReads = (
  t: GlueTable,
  bucket: string,
  keys: readonly string[],
): Array<{ key: string; partition: Record<string, string> }> => {
  const root = `s3://${bucket}/`;
  if (t.partitionKeys.length === 0) {
    if (!t.location.startsWith(root)) throw new Error(`table ${t.name}: location ${t.location}`);
    const prefix = t.location.slice(root.length);
    return keys.filter((k) => k.startsWith(prefix)).map((key) => ({ key, partition: {} }));
  }
  if (t.parameters['projection.enabled'] !== 'true') throw new Error(`table ${t.name}: no projection`);
  const template = String(t.parameters['storage.location.template']);
  if (!template.startsWith(root)) throw new Error(`table ${t.name}: location template ${template}`);
  const names: string[] = [];
  const pattern = template
    .slice(root.length)
    .split(/(\$\{\w+\})/)
    .map((piece) => {
      const m = /^\$\{(\w+)\}$/.exec(piece);
      if (!m?.[1]) return piece.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      names.push(m[1]);
      return '([^/]+)';
    })
    .join('');
  const re = new RegExp(`^${pattern}[^/]+$`);
  const valid = (name: string, value: string): boolean => {
    const type = t.parameters[`projection.${name}.type`];
    if (type === 'injected') return true;
    if (type === 'date') {
      if (t.parameters[`projection.${name}.format`] !== 'yyyy-MM') throw new Error('date format');
      const from = String(t.parameters[`projection.${name}.range`]).split(',')[0] ?? '';
      return /^\d{4}-\d{2}$/.test(value) && value >= from;
    }
    throw new Error(`table ${t.name}: projection ${String(type)} of ${name} is not emulated`);
  };
  const out: Array<{ key: string; partition: Record<string, string> }> = [];
  for (const key of keys) {
    const m = re.exec(key);
    if (!m) continue;
    const partition = Object.fromEntries(names.map((n, i) => [n, m[i + 1] ?? '']));
    if (names.every((n) => valid(n, partition[n] ?? ''))) out.push({ key, partition });
  }
  return out;
};

const injectedColumns = (t: GlueTable): string[] =>
  t.partitionKeys.map((p) => p.Name).filter((n) => t.parameters[`projection.${n}.type`] === 'injected');

/** Any condition on the column but `=` or `IN (…)` (the docs' own example uses IN): Trino's other predicates. */
const otherCondition = (column: string): RegExp =>
  new RegExp(`\\b${column}\\s*(<>|!=|<=?|>=?|NOT\\b|LIKE\\b|IS\\b|BETWEEN\\b)`, 'i');

/**
 * Athena's CONSTRAINT_VIOLATION for an `injected` partition column: throws it when `sql` reads such a
 * table (`raw`: the raw tables by name), directly or through views (`views`: their SQL by name), and
 * does not constrain the column by static equality only.
 */
export const checkInjected = (
  sql: string,
  raw: ReadonlyMap<string, GlueTable>,
  views: ReadonlyMap<string, string>,
): void => {
  const read = (text: string): string[] =>
    [...text.matchAll(/\b(?:FROM|JOIN)\s+"?(\w+)"?/gi)].map((m) => m[1] ?? '');
  const columns = new Set<string>();
  const visit = (name: string) => {
    const t = raw.get(name);
    if (t) for (const c of injectedColumns(t)) columns.add(c);
    const view = views.get(name);
    if (view) for (const n of read(view)) visit(n);
  };
  for (const n of read(sql)) visit(n);
  for (const c of columns) {
    const equality = new RegExp(`\\b${c}\\s*(=\\s*(\\?|'[^']*')|IN\\s*\\()`, 'i');
    if (!equality.test(sql) || otherCondition(c).test(sql))
      throw new Error(
        `CONSTRAINT_VIOLATION: For the injected projected partition column ${c}, the WHERE clause must contain only static equality conditions, and at least one such condition must be present.`,
      );
  }
};

/** A view branch over a table with an `injected` column may not put a condition but equality on it (as checkInjected). */
export const checkViewInjected = (name: string, sql: string, raw: ReadonlyMap<string, GlueTable>): void => {
  for (const branch of sql.split(/\bUNION ALL\b/)) {
    for (const m of branch.matchAll(/\bFROM\s+"?(\w+)"?\s+(\w+)/gi)) {
      const t = raw.get(m[1] ?? '');
      for (const c of t ? injectedColumns(t) : [])
        if (otherCondition(`${m[2]}\\.${c}`).test(branch))
          throw new Error(
            `view ${name}: a condition on the injected partition column ${c} of ${t?.name} (Athena allows the query's static equality only)`,
          );
    }
  }
};

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * An in-memory DuckDB holding the template's raw tables filled from `bucket`'s parts and its views.
 * The caller closes it.
 */
export const emulatedAthena = async (
  template: Template,
  s3: S3Client,
  bucket: string,
): Promise<{
  query(sql: string, params?: readonly string[]): Promise<Record<string, unknown>[]>;
  close(): void;
}> => {
  const { DuckDBInstance } = require('@duckdb/node-api') as typeof import('@duckdb/node-api');
  const instance: DuckDBInstance = await DuckDBInstance.create(':memory:');
  const conn: DuckDBConnection = await instance.connect();
  const tables = glueTables(template, bucket);
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: COLD_PREFIX, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const lines = new Map<string, string[]>();
  for (const key of keys) {
    const got = await getObjectBytes(s3, bucket, key);
    if (!got) throw new Error(`${key} vanished`);
    lines.set(key, gunzipSync(got.bytes).toString('utf8').split('\n').filter(Boolean));
  }
  await conn.run('CREATE TABLE lines ("$path" VARCHAR, key VARCHAR, line VARCHAR)');
  const app = await conn.createAppender('lines');
  for (const [key, ls] of lines)
    for (const l of ls) {
      app.appendVarchar(`s3://${bucket}/${key}`);
      app.appendVarchar(key);
      app.appendVarchar(l);
      app.endRow();
    }
  app.closeSync();
  for (const t of tables.filter((x) => x.viewSql === undefined)) {
    const structure = Object.fromEntries(t.columns.map((c) => [c.Name, jsonStructure(c.Type)]));
    const reads = tableReads(t, bucket, keys);
    const parts = t.partitionKeys.map((p) => p.Name);
    await conn.run(
      `CREATE TABLE reads_${t.name} (key VARCHAR${parts.map((p) => `, "${p}" VARCHAR`).join('')})`,
    );
    for (const r of reads)
      await conn.run(
        `INSERT INTO reads_${t.name} VALUES (${[r.key, ...parts.map((p) => r.partition[p] ?? '')].map(quote).join(', ')})`,
      );
    await conn.run(
      `CREATE TABLE "${t.name}" AS SELECT ${t.columns.map((c) => `j."${c.Name}"`).join(', ')}${parts
        .map((p) => `, r."${p}"`)
        .join('')}, l."$path" FROM lines l JOIN reads_${t.name} r ON r.key = l.key, ` +
        `LATERAL (SELECT UNNEST(json_transform(l.line, ${quote(JSON.stringify(structure))}))) j`,
    );
  }
  const raw = new Map(tables.filter((x) => x.viewSql === undefined).map((t) => [t.name, t]));
  const views = new Map<string, string>();
  for (const t of tables.filter((x) => x.viewSql !== undefined)) {
    checkViewInjected(t.name, t.viewSql ?? '', raw);
    views.set(t.name, t.viewSql ?? '');
    await conn.run(`CREATE VIEW "${t.name}" AS ${trinoToDuck(t.viewSql ?? '')}`);
  }
  return {
    async query(sql, params = []) {
      checkInjected(sql, raw, views);
      const reader = await conn.runAndReadAll(sql, params as string[]);
      return reader
        .getRowObjects()
        .map((r) =>
          Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])),
        );
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
};
