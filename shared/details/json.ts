import { CorruptObjectError } from '../errors';

/**
 * A number kept as its source text: what `JSON.parse` gives (through `parseJsonExact`) for a number
 * whose text a float64 would not reproduce (2^63−1, 20-digit ids, `1.0`, `1e400`). It is
 * `JSON.rawJSON(text)`: a frozen null-prototype object whose `rawJSON` is the text, which
 * `JSON.stringify` (and `canonicalJson`) write back verbatim.
 */
export interface RawJsonNumber {
  readonly rawJSON: string;
}

/** Plain JSON values: what survives a write → read round trip unchanged. */
export type JsonPrimitive = string | number | boolean | null | RawJsonNumber;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

// ES2024+ JSON additions (Node ≥ 21), not in the ES2023 lib this package compiles against.
const ExactJSON = JSON as unknown as {
  rawJSON(text: string): RawJsonNumber;
  isRawJSON(value: unknown): value is RawJsonNumber;
  parse(text: string, reviver: (key: string, value: unknown, ctx: { source?: string }) => unknown): unknown;
};

export const isRawJson = (value: unknown): value is RawJsonNumber => ExactJSON.isRawJSON(value);

/** A number as its exact text: `JSON.rawJSON(text)` (validated as one JSON number by V8). */
export const rawJsonNumber = (text: string): RawJsonNumber => ExactJSON.rawJSON(text);

/**
 * A number known by its text (a DynamoDB N, a bigint's digits) as parseJsonExact reads it: a plain
 * number when `String(Number(text))` gives the text back, else `JSON.rawJSON(text)`.
 */
export const exactNumber = (text: string): number | RawJsonNumber => {
  const n = Number(text);
  return Number.isFinite(n) && String(n) === text ? n : rawJsonNumber(text);
};

/**
 * Deepest nesting of arrays/objects accepted anywhere a payload is read or written. Real payloads are
 * 3–5 levels deep; the bound keeps every recursive walk (canonical JSON, validation, merging) far
 * from the stack limit, so one pathological object is one bad object, not a crashed group.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * One pass over `text` (no recursion, strings skipped): whether it nests arrays/objects deeper than
 * `max`, and whether a number token outside strings may be one a float64 does not reproduce — 16+
 * integer digits, a fraction or exponent, or `-0`. Invalid JSON may answer anything: JSON.parse
 * rejects it.
 */
export const scanJson = (text: string, max: number): { deeper: boolean; inexact: boolean } => {
  let depth = 0;
  let inexact = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Jump to the closing quote: the next one not escaped (preceded by an even run of backslashes).
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return { deeper: false, inexact }; // unterminated: JSON.parse rejects it
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return { deeper: true, inexact };
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      // A number token: its integer digits, then whether a fraction or exponent follows.
      const minus = c === 0x2d;
      const from = minus ? i + 1 : i;
      let j = from;
      while (j < n && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) j++;
      const next = text.charCodeAt(j);
      if (
        j - from >= 16 ||
        next === 0x2e ||
        next === 0x65 ||
        next === 0x45 ||
        (minus && j - from === 1 && text.charCodeAt(from) === 0x30)
      )
        inexact = true;
      i = j - 1;
    }
  }
  return { deeper: false, inexact };
};

/** Whether `text` nests arrays/objects deeper than `max` (one pass, no recursion, strings skipped). */
export const jsonDeeperThan = (text: string, max: number): boolean => scanJson(text, max).deeper;

const keepExact = (_key: string, value: unknown, ctx: { source?: string }): unknown =>
  typeof value === 'number' && ctx.source !== undefined && String(value) !== ctx.source
    ? ExactJSON.rawJSON(ctx.source)
    : value;

/**
 * The one parser of stored payloads (hot objects, part records) — archiver, reader and CLI alike:
 * - lossless: a number whose text `String(Number(text))` does not reproduce stays its text
 *   (`RawJsonNumber`), so 9223372036854775807 is archived and read back bit for bit;
 * - bounded: nesting deeper than MAX_JSON_DEPTH is a CorruptObjectError naming `where`, before any
 *   recursive walk could overflow the stack.
 * Invalid JSON is a CorruptObjectError too. Text without a number that may be inexact (scanJson:
 * timestamps and ids in strings do not count) is parsed without the reviver, which costs several
 * times as much: every record the archive step reads or verifies goes through here.
 */
export const parseJsonExact = (text: string, where: string, what = 'JSON'): unknown => {
  const scan = scanJson(text, MAX_JSON_DEPTH);
  if (scan.deeper) {
    throw new CorruptObjectError(where, `${what} nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  try {
    return scan.inexact ? ExactJSON.parse(text, keepExact) : JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const reason = what === 'JSON' ? `bad JSON: ${message}` : `${what} is not JSON: ${message}`;
    throw new CorruptObjectError(where, reason, { cause: err });
  }
};

export const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * Where `value` stops being plain JSON, as `{ path, reason }`, or undefined when it is JSON.
 * `JSON.stringify` would silently drop `undefined`, turn NaN into null and Dates into strings; we
 * reject those instead so what is read back equals what was written.
 */
export const findJsonProblem = (
  value: unknown,
  path: string,
  ancestors: Set<unknown> = new Set(),
  depth = 0,
): { path: string; reason: string } | undefined => {
  const problem = jsonProblemBelow(value, ancestors, depth);
  return problem ? { path: `${path}${problem.rel}`, reason: problem.reason } : undefined;
};

/**
 * findJsonProblem's walk: the problem's path relative to `value`, built on the way back up only when
 * there is one (every payload the archive step reads is checked: no path string per value).
 */
const jsonProblemBelow = (
  value: unknown,
  ancestors: Set<unknown>,
  depth: number,
): { rel: string; reason: string } | undefined => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (isRawJson(value)) return undefined;
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : { rel: '', reason: `${value} is not a JSON number` };
  }
  if (typeof value !== 'object') return { rel: '', reason: `${typeof value} is not a JSON value` };
  if (ancestors.has(value)) return { rel: '', reason: 'circular reference' };
  if (depth >= MAX_JSON_DEPTH) return { rel: '', reason: `nested deeper than ${MAX_JSON_DEPTH} levels` };
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return { rel: '', reason: 'only plain objects and arrays are JSON' };
  ancestors.add(value);
  try {
    if (isArray) {
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) continue; // a hole: as Array#map, which this walk used to be, skips it
        const problem = jsonProblemBelow(value[i], ancestors, depth + 1);
        if (problem) return { rel: `[${i}]${problem.rel}`, reason: problem.reason };
      }
      return undefined;
    }
    const object = value as Record<string, unknown>;
    for (const k of Object.keys(object)) {
      const problem = jsonProblemBelow(object[k], ancestors, depth + 1);
      if (problem) return { rel: `[${JSON.stringify(k)}]${problem.rel}`, reason: problem.reason };
    }
    return undefined;
  } finally {
    ancestors.delete(value);
  }
};

/**
 * JSON with object keys sorted (by UTF-16 code unit, recursively) and no whitespace: two values that
 * are equal as JSON give the same string whatever their key insertion order. Input must be plain JSON
 * (see `findJsonProblem`); a RawJsonNumber is written as its text.
 */
export const canonicalJson = (value: JsonValue): string => {
  if (value === null || typeof value !== 'object' || isRawJson(value)) return JSON.stringify(value);
  // Written with loops, and a list of strings, numbers, booleans and nulls (document ids, chunk ids)
  // in one JSON.stringify, which writes it as the walk would: every record line goes through here
  // (half the time of map/join on the archive step's records).
  if (Array.isArray(value)) {
    if (isFlatList(value)) return JSON.stringify(value);
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      const v = value[i];
      // A hole or undefined element: nothing, as `map` + `join` wrote it.
      if (v !== undefined) out += canonicalJson(v);
    }
    return `${out}]`;
  }
  const keys = Object.keys(value);
  // Keys already in order and every value a string, number, boolean, null or flat list (a row, a
  // reason's ids, a job's sources): JSON.stringify writes exactly what the walk below would, natively.
  if (isFlatObject(value, keys)) return JSON.stringify(value);
  keys.sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (i > 0) out += ',';
    out += `${JSON.stringify(k)}:${canonicalJson(value[k] as JsonValue)}`;
  }
  return `${out}}`;
};

/**
 * `keys` (the object's own, as Object.keys lists them) ascend as sort() orders them, and every value
 * is a string, number, boolean, null or a flat list: nothing JSON.stringify would write otherwise.
 */
const isFlatObject = (value: { readonly [key: string]: JsonValue }, keys: readonly string[]): boolean => {
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (i > 0 && (keys[i - 1] as string) > k) return false;
    const v = value[k];
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') continue;
    if (!Array.isArray(v) || !isFlatList(v)) return false;
  }
  return true;
};

/** Every element a string, number, boolean or null (a hole reads as undefined: not flat). */
const isFlatList = (list: readonly unknown[]): boolean => {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (v !== null && typeof v !== 'string' && typeof v !== 'boolean' && typeof v !== 'number') return false;
  }
  return true;
};
