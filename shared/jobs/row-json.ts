import { compareCodePoints } from '../details/helpers';
import { exactNumber, isRawJson, type JsonObject, type JsonValue } from '../details/json';

/**
 * A jobs-table item (as the document client returns it) as plain JSON, for the archive: the row
 * expires by TTL, so its archived copy is the only one left. Every attribute keeps its name — the
 * indexer's own (`retry_attribution`, attributes a later indexer version adds) included — and its
 * type as far as JSON has one:
 *
 * | DynamoDB | JSON |
 * |---|---|
 * | S, BOOL, NULL | string, boolean, null |
 * | N | number; one a float64 would not reproduce keeps its exact text (`JSON.rawJSON`, as parseJsonExact) |
 * | B | base64 string |
 * | SS / NS / BS | list, sorted (code-point / numeric / base64 order) |
 * | L / M | list / object, recursively |
 *
 * Left out (`ROW_REDUCED`): `completed_chunks`, the live job's per-chunk dedup set. A terminal
 * job's row gets no more flushes, the chunk ids that carried details are already in the record's
 * `details.chunk_ids`, and the set is the row's largest attribute (~10 KB for 1,000 chunks): the
 * archive keeps its size only.
 */
export const ROW_REDUCED = ['completed_chunks'] as const;

export interface ArchivableRow {
  readonly row: JsonObject;
  /** Sizes of the reduced attributes present on the item, e.g. `{completed_chunks: 200}`. */
  readonly reduced: Readonly<Record<string, number>>;
}

const base64 = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');

const isNumberValue = (v: unknown): v is { value: string } =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { value?: unknown }).value === 'string' &&
  (v as { constructor?: { name?: string } }).constructor?.name === 'NumberValue';

const numberText = (v: JsonValue): string | null =>
  typeof v === 'number' ? String(v) : isRawJson(v) ? v.rawJSON : null;

/** A DynamoDB set as a JSON list: NS in numeric order (exact numbers included), others by code point. */
export const setToJson = (s: Set<unknown>): JsonValue[] => {
  const items = [...s].map(toJson);
  if (items.every((i) => numberText(i) !== null)) {
    // NS: numeric order (exact texts that round to the same double fall back to their text).
    const text = (i: JsonValue): string => numberText(i) ?? '';
    return items.sort((a, b) => Number(text(a)) - Number(text(b)) || compareCodePoints(text(a), text(b)));
  }
  return items.map(String).sort(compareCodePoints);
};

const toJson = (v: unknown): JsonValue => {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (isRawJson(v)) return v;
  // What a caller's own client gives for big numbers (default unmarshalling, or wrapNumbers: true).
  if (typeof v === 'bigint') return exactNumber(v.toString());
  if (isNumberValue(v)) return exactNumber(v.value);
  if (v instanceof Uint8Array) return base64(v);
  if (v instanceof Set) return setToJson(v);
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toJson(x)]));
  }
  return String(v);
};

/** Every attribute as JSON (the table above), reduced attributes included. Pure. */
export const itemToJson = (item: Readonly<Record<string, unknown>>): JsonObject => {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(item)) out[k] = toJson(v);
  return out;
};

/** Pure. `omit` names attributes stored elsewhere in the record (inline details, see details/inline.ts). */
export const archivableRow = (item: Record<string, unknown>, omit: readonly string[] = []): ArchivableRow => {
  const row: Record<string, JsonValue> = {};
  const reduced: Record<string, number> = {};
  for (const [name, value] of Object.entries(item)) {
    if ((ROW_REDUCED as readonly string[]).includes(name)) {
      reduced[name] = value instanceof Set ? value.size : Array.isArray(value) ? value.length : 0;
      continue;
    }
    if (omit.includes(name)) continue;
    row[name] = toJson(value);
  }
  // Attribute order as DynamoDB returns it is arbitrary; sorted, equal rows archive as equal bytes.
  const sorted = Object.fromEntries(
    Object.keys(row)
      .sort(compareCodePoints)
      .map((k) => [k, row[k] ?? null]),
  );
  return { row: sorted, reduced };
};
