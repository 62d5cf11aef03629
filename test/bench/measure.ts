import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';

/** One measured write (or read) of the benchmark. */
export interface Measured {
  write: string;
  table: number;
  /** GSI name → capacity units. */
  gsi: Record<string, number>;
  total: number;
  /** Item size after the write (bytes), by DynamoDB's sizing rules. */
  itemBytes: number;
  /** For reads: read capacity units (kept out of the WCU totals). */
  rcu?: number;
}

export const fromCapacity = (write: string, c: ConsumedCapacity | undefined, itemBytes: number): Measured => {
  if (c === undefined) throw new Error(`${write}: DynamoDB returned no ConsumedCapacity`);
  const gsi: Record<string, number> = {};
  for (const [name, v] of Object.entries(c.GlobalSecondaryIndexes ?? {})) gsi[name] = v.CapacityUnits ?? 0;
  return { write, table: c.Table?.CapacityUnits ?? 0, gsi, total: c.CapacityUnits ?? 0, itemBytes };
};

/** Number size per DynamoDB: ~1 byte per two significant digits, plus one. */
const numberBytes = (n: number): number => {
  const digits = String(Math.abs(n))
    .replace('.', '')
    .replace(/e.*$/, '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
};

/**
 * Size of an attribute value by DynamoDB's published rules: strings are UTF-8 bytes; numbers as above;
 * booleans/null 1; lists and maps 3 bytes plus 1 per element (plus key names for maps); sets the sum
 * of their members.
 */
export const valueBytes = (v: unknown): number => {
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
  if (typeof v === 'number') return numberBytes(v);
  if (typeof v === 'boolean' || v === null || v === undefined) return 1;
  if (v instanceof Set) return [...v].reduce((s: number, m) => s + valueBytes(m), 0);
  if (v instanceof Uint8Array) return v.byteLength;
  if (Array.isArray(v)) return 3 + v.reduce((s: number, m) => s + 1 + valueBytes(m), 0);
  if (typeof v === 'object') {
    return (
      3 +
      Object.entries(v as Record<string, unknown>).reduce(
        (s, [k, m]) => s + 1 + Buffer.byteLength(k, 'utf8') + valueBytes(m),
        0,
      )
    );
  }
  throw new Error(`cannot size ${typeof v}`);
};

/** Item size: attribute names plus values. */
export const itemBytes = (item: Record<string, unknown> | undefined): number =>
  item === undefined
    ? 0
    : Object.entries(item).reduce((s, [k, v]) => s + Buffer.byteLength(k, 'utf8') + valueBytes(v), 0);

export const sumWcu = (rows: Measured[]): number => rows.reduce((s, r) => s + r.total, 0);

const kb = (bytes: number): string => (bytes / 1024).toFixed(2);

/** A fixed-width table: write, table WCU, one column per GSI, total, item KB. */
export const formatTable = (title: string, rows: Measured[], gsiNames: readonly string[]): string => {
  const head = ['write', 'table WCU', ...gsiNames.map((g) => `${g} WCU`), 'total WCU', 'item KB'];
  const body = rows.map((r) => [
    r.write,
    String(r.table),
    ...gsiNames.map((g) => String(r.gsi[g] ?? 0)),
    String(r.total),
    kb(r.itemBytes),
  ]);
  const totals = [
    'TOTAL',
    String(rows.reduce((s, r) => s + r.table, 0)),
    ...gsiNames.map((g) => String(rows.reduce((s, r) => s + (r.gsi[g] ?? 0), 0))),
    String(sumWcu(rows)),
    '',
  ];
  const all = [head, ...body, totals];
  const widths = head.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [title, line(head), rule, ...body.map(line), rule, line(totals)].join('\n');
};

/**
 * Wraps a document client so every write is followed by a GetItem of the written key, giving the
 * item size after that write. The GetItem is instrumentation only: it is neither layout's cost.
 */
export const sizingSender = (ddb: DynamoDBDocumentClient) => {
  const log: { capacity: ConsumedCapacity | undefined; itemBytes: number }[] = [];
  const send = (async (cmd: { input: { TableName?: string; Key?: Record<string, unknown> } }) => {
    const isWrite = cmd instanceof UpdateCommand || cmd instanceof PutCommand;
    // Capacity of every write is measured, whether or not the caller asked for it.
    if (isWrite) (cmd.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity ??= 'INDEXES';
    const out = (await ddb.send(cmd as never)) as { ConsumedCapacity?: ConsumedCapacity };
    if (isWrite) {
      const input = cmd.input as {
        TableName?: string;
        Key?: Record<string, unknown>;
        Item?: Record<string, unknown>;
      };
      const key = input.Key ?? { pk: input.Item?.pk, sk: input.Item?.sk };
      const got = await ddb.send(
        new GetCommand({ TableName: input.TableName, Key: key, ConsistentRead: true }),
      );
      log.push({ capacity: out.ConsumedCapacity, itemBytes: itemBytes(got.Item) });
    }
    return out;
  }) as DynamoDBDocumentClient['send'];
  return { sender: { send }, log };
};
