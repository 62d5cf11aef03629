import type { JobDetails } from '../../details/payload';
import { CorruptObjectError } from '../../errors';

/**
 * Document ids at rest (docs/archive-format.md, "Document lists"): in a job record's `failed` and
 * `skipped` lists, an id that is the list's first id with another number — `gid://shopify/Product/`
 * + `7086727607919` after `…7086727600000` — is stored as the difference, a JSON number (`7919`).
 * Ids of one job are mostly near each other: as full text they cost ~3.4 bytes each compressed, as
 * `"~7919"` strings ~2.7, as numbers 5 % less again (the design mix: 6.0 → 5.5 bytes an id; the
 * quotes and `~` between two numbers cost more than a comma). One element per id stays, so counts
 * (and SQL's `cardinality`) read the stored list as is, and SQL restores an id from the list's first
 * alone (the SerDe reads a number in an array of strings as its decimal text; offsets from the
 * previous id would compress further but need a running sum). A string is an id as is, except one
 * that begins with `~` or is an integer's text (`-12`, `7`), which is stored with a `~` in front, so a
 * string that SQL reads as an integer is always an offset.
 */

/** An id as prefix and decimal suffix of 1–15 digits without a leading zero (as the fence splits ids). */
export const NUMBERED = /^(.*?)([1-9][0-9]{0,14})$/;
/**
 * A stored string SQL could read as an offset: an id of this form is stored with a `~` in front. Athena
 * (Trino) tests `^-?[0-9]+$` with Java-style regexes, where `$` also matches before a final line
 * terminator: `"7\n"` reads as an integer there, so an integer's text followed by one is escaped too.
 */
const INTEGER_TEXT = /^-?[0-9]+(?:\r\n|[\n\r\u0085\u2028\u2029])?$/;
/** What `.` in NUMBERED does not match: a prefix holding one is no match. */
const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;

/**
 * NUMBERED's split without the regular expression (every document id of every archived job goes
 * through it, and through the fence's, several times): the suffix is the longest tail of at most 15
 * digits that starts with 1–9; null when there is none or the prefix holds a line terminator (where
 * NUMBERED does not match either).
 */
export const splitNumbered = (id: string): { prefix: string; n: number } | null => {
  const len = id.length;
  let from = len;
  while (from > 0 && len - from < 15) {
    const c = id.charCodeAt(from - 1);
    if (c < 0x30 || c > 0x39) break;
    from--;
  }
  while (from < len && id.charCodeAt(from) === 0x30) from++;
  if (from === len) return null;
  const prefix = id.slice(0, from);
  if (LINE_TERMINATOR.test(prefix)) return null;
  return { prefix, n: Number(id.slice(from)) };
};

const base = (first: string | undefined): { prefix: string; n: number } | null =>
  first === undefined || first.startsWith('~') ? null : splitNumbered(first);

const asIs = (id: string): string => (id.startsWith('~') || INTEGER_TEXT.test(id) ? `~${id}` : id);

/** One list as stored: ids (strings) and offsets from the first id (numbers). */
const compactList = (ids: readonly string[]): Array<string | number> => {
  const first = ids[0];
  const b = first === undefined || first !== asIs(first) ? null : splitNumbered(first);
  return ids.map((id, i) => {
    if (i === 0 || b === null || !id.startsWith(b.prefix)) return asIs(id);
    const m = splitNumbered(id);
    // Only where the id is exactly prefix + its number (NUMBERED's split of it names the same prefix).
    if (!m || m.prefix !== b.prefix) return asIs(id);
    return m.n - b.n;
  });
};

/** One stored list as the ids it holds; `where` names the record in errors. */
const expandList = (stored: readonly unknown[], where: string): unknown[] => {
  const first = stored[0];
  const b = typeof first === 'string' ? base(first) : null;
  return stored.map((s, i) => {
    if (typeof s === 'string') return s.startsWith('~') ? s.slice(1) : s;
    if (typeof s !== 'number') return s;
    if (i === 0 || b === null || !Number.isSafeInteger(s))
      throw new CorruptObjectError(where, `document list entry ${s} is not an id`);
    const n = b.n + s;
    if (!Number.isSafeInteger(n) || n < 1 || n > 999_999_999_999_999)
      throw new CorruptObjectError(where, `document list entry ${s} is out of range`);
    return `${b.prefix}${n}`;
  });
};

const KINDS = ['failed', 'skipped'] as const;

/** A job's details as a record stores them: lists of ids (strings) and offsets (numbers), see above. */
export type StoredDetails = Omit<JobDetails, 'failed' | 'skipped'> & {
  readonly failed: Readonly<Record<string, ReadonlyArray<string | number>>>;
  readonly skipped: Readonly<Record<string, ReadonlyArray<string | number>>>;
};

/** A job's details as a record stores them (see above). */
export const compactDetails = (details: JobDetails): StoredDetails => ({
  ...details,
  failed: Object.fromEntries(Object.entries(details.failed).map(([r, ids]) => [r, compactList(ids)])),
  skipped: Object.fromEntries(Object.entries(details.skipped).map(([r, ids]) => [r, compactList(ids)])),
});

/**
 * A record's stored `details` with its document lists restored (anything not shaped like details is
 * returned as is, for the details parser to name).
 */
export const expandDetails = (stored: unknown, where: string): unknown => {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return stored;
  const out: Record<string, unknown> = { ...(stored as Record<string, unknown>) };
  for (const kind of KINDS) {
    const m = out[kind];
    if (typeof m !== 'object' || m === null || Array.isArray(m)) continue;
    out[kind] = Object.fromEntries(
      Object.entries(m as Record<string, unknown>).map(([r, l]) => [
        r,
        Array.isArray(l) ? expandList(l, where) : l,
      ]),
    );
  }
  return out;
};
