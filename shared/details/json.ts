/** Plain JSON values: what survives a write → read round trip unchanged. */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

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
): { path: string; reason: string } | undefined => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : { path, reason: `${value} is not a JSON number` };
  }
  if (typeof value !== 'object') return { path, reason: `${typeof value} is not a JSON value` };
  if (ancestors.has(value)) return { path, reason: 'circular reference' };
  const isArray = Array.isArray(value);
  if (!isArray && !isPlainObject(value)) return { path, reason: 'only plain objects and arrays are JSON' };
  ancestors.add(value);
  try {
    const entries: [string, unknown][] = isArray
      ? value.map((v, i): [string, unknown] => [`${path}[${i}]`, v])
      : Object.entries(value).map(([k, v]): [string, unknown] => [`${path}[${JSON.stringify(k)}]`, v]);
    for (const [childPath, child] of entries) {
      const problem = findJsonProblem(child, childPath, ancestors);
      if (problem) return problem;
    }
    return undefined;
  } finally {
    ancestors.delete(value);
  }
};

/**
 * JSON with object keys sorted (by UTF-16 code unit, recursively) and no whitespace: two values that
 * are equal as JSON give the same string whatever their key insertion order. Input must be plain JSON
 * (see `findJsonProblem`).
 */
export const canonicalJson = (value: JsonValue): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] as JsonValue)}`).join(',')}}`;
};
