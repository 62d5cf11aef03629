import { InvalidInputError } from '../errors';
import { truncate } from '../text';
import { findJsonProblem, isPlainObject, type JsonObject } from './json';
import { mergeAllJobDetails } from './merge';
import type { ConflictItem, JobDetails } from './payload';

/**
 * Details stored on the job row itself, as the indexer wrote them before the S3 offload (seed
 * "Migration": rows from before the rollout keep them until they expire). The seed does not pin
 * their shape; these are accepted, anything else is an InvalidInputError quoting the value:
 *
 * | attribute | accepted shapes |
 * |---|---|
 * | `failed_items_details`, `skipped_items_details` | reason → list (or string set) of doc ids; or a list of `{reason, doc_id}` |
 * | `conflict_details` | reason → list of conflict items (`{doc_id, …}`); or a list of `{reason, doc_id, …}` |
 * | `platform_data` | an object (the indexer's settings, e.g. `{indexer: {…}}`) |
 *
 * An empty map or list means "no details". The design's dual-read prefers these over S3: the reader
 * merges them first, the archiver archives them with the job (and leaves them out of the archived
 * row, where they would be stored twice).
 */
export const INLINE_DETAIL_ATTRIBUTES = {
  failed: 'failed_items_details',
  skipped: 'skipped_items_details',
  conflict: 'conflict_details',
} as const;
export const INLINE_PLATFORM_DATA = 'platform_data';
export const INLINE_ATTRIBUTES: readonly string[] = [
  ...Object.values(INLINE_DETAIL_ATTRIBUTES),
  INLINE_PLATFORM_DATA,
];

export interface InlineDetails {
  /** Null when the row carries no detail attribute. */
  readonly details: JobDetails | null;
  readonly platformData: JsonObject | null;
  /** Which of INLINE_ATTRIBUTES the row carries (present, even if empty), in that order. */
  readonly attributes: readonly string[];
}

const quoted = (v: unknown): string => {
  let s: string;
  try {
    s = JSON.stringify(v, (_k, x) => (x instanceof Set ? [...x] : x)) ?? String(v);
  } catch {
    s = String(v);
  }
  return truncate(s, 120);
};

const bad = (attribute: string, value: unknown, why: string): never => {
  throw new InvalidInputError(`row.${attribute}`, `${why}, got ${quoted(value)}`);
};

const listOf = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : v instanceof Set ? [...v] : null);

/** reason → items, from either accepted shape. */
const reasonMap = <T>(
  attribute: string,
  value: unknown,
  item: (v: unknown) => T | null,
  entry: (o: Record<string, unknown>) => T | null,
): Record<string, T[]> => {
  const out: Record<string, T[]> = {};
  const push = (reason: string, v: T) => {
    if (!Object.hasOwn(out, reason))
      Object.defineProperty(out, reason, { value: [], enumerable: true, writable: true });
    (out[reason] as T[]).push(v);
  };
  const list = listOf(value);
  if (list !== null) {
    for (const e of list) {
      if (!isPlainObject(e) || typeof e.reason !== 'string')
        return bad(attribute, value, 'expected a list of {reason, doc_id} entries');
      const v = entry(e);
      if (v === null) return bad(attribute, value, 'an entry has no string doc_id');
      push(e.reason, v);
    }
    return out;
  }
  if (!isPlainObject(value))
    return bad(attribute, value, 'expected a map of reason → list, or a list of {reason, doc_id}');
  for (const [reason, items] of Object.entries(value)) {
    const l = listOf(items);
    if (l === null) return bad(attribute, value, `reason ${JSON.stringify(reason)} is not a list`);
    if (l.length === 0 && !Object.hasOwn(out, reason))
      Object.defineProperty(out, reason, { value: [], enumerable: true, writable: true });
    for (const i of l) {
      const v = item(i);
      if (v === null) return bad(attribute, value, `reason ${JSON.stringify(reason)} holds ${quoted(i)}`);
      push(reason, v);
    }
  }
  return out;
};

const docId = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const conflictItem = (v: unknown): ConflictItem | null => {
  if (!isPlainObject(v) || typeof v.doc_id !== 'string' || findJsonProblem(v, 'item')) return null;
  return { ...(v as ConflictItem) };
};

/** Pure. Throws InvalidInputError (`row.<attribute>`, value quoted) for a shape it does not accept. */
export const parseInlineDetails = (row: Readonly<Record<string, unknown>>): InlineDetails => {
  const attributes = INLINE_ATTRIBUTES.filter((a) => row[a] !== undefined && row[a] !== null);
  const { failed: fa, skipped: sa, conflict: ca } = INLINE_DETAIL_ATTRIBUTES;
  const has = (a: string) => attributes.includes(a);
  let details: JobDetails | null = null;
  if (has(fa) || has(sa) || has(ca)) {
    details = mergeAllJobDetails([
      {
        chunk_ids: [],
        failed: has(fa) ? reasonMap(fa, row[fa], docId, (e) => docId(e.doc_id)) : {},
        skipped: has(sa) ? reasonMap(sa, row[sa], docId, (e) => docId(e.doc_id)) : {},
        conflict: has(ca)
          ? reasonMap(ca, row[ca], conflictItem, ({ reason: _r, ...rest }) => conflictItem(rest))
          : {},
      },
    ]);
  }
  let platformData: JsonObject | null = null;
  if (has(INLINE_PLATFORM_DATA)) {
    const pd = row[INLINE_PLATFORM_DATA];
    if (!isPlainObject(pd) || findJsonProblem(pd, 'platform_data')) {
      bad(INLINE_PLATFORM_DATA, pd, 'expected a JSON object');
    }
    platformData = pd as JsonObject;
  }
  return { details, platformData, attributes };
};
