import { InvalidInputError } from './errors';
import { truncate } from './text';

/**
 * The one timestamp parser of the package: plan, archive, writer, reader and CLI all read times
 * through it, so a row is judged the same way everywhere.
 *
 * Accepted: RFC 3339 / ISO 8601 extended date-times (seconds optional) with an explicit UTC offset —
 * `Z`/`z` or `±HH:MM` (also `±HHMM`) — with any number of fraction digits and `T` or a space between
 * date and time. That covers JavaScript `toISOString()` (`2026-08-03T10:15:30.123Z`), Python
 * `datetime.isoformat()` of an aware datetime (`2026-08-03T10:15:30.123456+00:00`, or without the
 * fraction when microseconds are 0) and `str(datetime)`. A time without an offset is refused: its
 * instant depends on a timezone nobody wrote down.
 *
 * Normalized form: `toISOString()` of the instant (UTC, milliseconds). Normalized strings compare
 * like the instants they name. Sub-millisecond digits are dropped from the normalized form only;
 * archived rows keep the value as written.
 */
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

export interface UtcTime {
  /** Normalized: `YYYY-MM-DDTHH:MM:SS.sssZ`. */
  readonly iso: string;
  /** Epoch milliseconds. */
  readonly ms: number;
  /** UTC month, `YYYY-MM`. */
  readonly month: string;
}

/** Why `value` is not an accepted timestamp, or null when it is. Pure, no throw. */
export const timestampProblem = (value: unknown): string | null => parse(value).problem;

/** Both answers of one parse: the time, or why there is none. */
export const checkTimestamp = (
  value: unknown,
): { time: UtcTime; problem: null } | { time: null; problem: string } => parse(value);

type Parsed = { time: UtcTime; problem: null } | { time: null; problem: string };

/**
 * The last answers by text: the archive step parses each job's times several times (its row, its
 * classification, its record's meta and row), each a regular expression and three Dates. Bounded
 * (cleared when full); answers are frozen, so a caller can never change another's.
 */
const parsed = new Map<string, Readonly<Parsed>>();
const PARSED_MAX = 4096;

const parse = (value: unknown): Readonly<Parsed> => {
  if (typeof value !== 'string') return parseUncached(value);
  const seen = parsed.get(value);
  if (seen) return seen;
  const r = parseUncached(value);
  if (r.time) Object.freeze(r.time);
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(value, Object.freeze(r));
  return r;
};

const parseUncached = (value: unknown): Parsed => {
  const fail = (problem: string) => ({ time: null, problem });
  if (typeof value !== 'string') return fail(`expected an ISO-8601 timestamp string, got ${quote(value)}`);
  const m = TIMESTAMP.exec(value);
  if (!m) {
    const noZone = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?$/.test(value);
    return fail(
      noZone
        ? `${quote(value)} has no UTC offset (expected Z or ±HH:MM)`
        : `${quote(value)} is not an ISO-8601 timestamp with a UTC offset`,
    );
  }
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((x) => Number(x ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0–99 to 1900–1999.
  const day = new Date(0);
  day.setUTCFullYear(y, mo - 1, d);
  const dayMs = day.getTime();
  if (y < 1 || mo < 1 || mo > 12 || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) {
    return fail(`${quote(value)} names a date that does not exist`);
  }
  if (h > 23 || mi > 59 || s > 59) return fail(`${quote(value)} names a time that does not exist`);
  let offsetMin = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return fail(`${quote(value)} has an impossible UTC offset`);
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = m[7] ?? '';
  const ms = dayMs + ((h * 60 + mi) * 60 + s) * 1000 + Number(fraction.slice(0, 3).padEnd(3, '0'));
  const instant = ms - offsetMin * 60_000;
  const iso = new Date(instant).toISOString();
  if (!/^\d{4}-/.test(iso)) return fail(`${quote(value)} is outside the years 0001–9999 in UTC`);
  return { time: { iso, ms: instant, month: iso.slice(0, 7) }, problem: null };
};

const quote = (v: unknown): string => {
  const s = typeof v === 'string' ? JSON.stringify(v) : v === undefined ? 'undefined' : JSON.stringify(v);
  return truncate(String(s), 80);
};

/** Parses an accepted timestamp or throws InvalidInputError naming `field` and quoting the value. */
export const parseTimestamp = (field: string, value: unknown): UtcTime => {
  const r = parse(value);
  if (r.problem !== null) throw new InvalidInputError(field, r.problem);
  return r.time;
};

/** Parses when accepted, else null (for callers that report the problem themselves). */
export const tryParseTimestamp = (value: unknown): UtcTime | null => parse(value).time;

/**
 * An archived attribute's time: normalized when it parses, else kept as written (the row keeps the
 * original either way; the archiver and the part reader must agree on this one rule).
 */
export const normalizedOrAsIs = (value: string | null): string | null =>
  value === null ? null : (tryParseTimestamp(value)?.iso ?? value);

/** The normalized form of an accepted timestamp (throws like parseTimestamp). */
export const normalizeTimestamp = (field: string, value: unknown): string => parseTimestamp(field, value).iso;

/**
 * What an operator may type for a point in time: a timestamp as above, or a calendar date
 * (`2026-03-01`, taken as UTC midnight).
 */
export const parseDateOrTimestamp = (field: string, value: string): Date => {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return new Date(parseTimestamp(field, `${value}T00:00:00Z`).ms);
  return new Date(parseTimestamp(field, value).ms);
};

/** A `Date` argument the writer stamps rows with; an invalid one is an InvalidInputError naming `field`. */
export const validDate = (field: string, v: unknown): Date => {
  if (!(v instanceof Date) || Number.isNaN(v.getTime()))
    throw new InvalidInputError(field, 'expected a valid Date');
  return v;
};

/**
 * How this package writes a timestamp: the normalized form above (UTC, milliseconds, `Z`). Rows
 * written by other writers keep theirs; readers parse both with `parseTimestamp`.
 */
export const formatTimestamp = (d: Date): string => validDate('timestamp', d).toISOString();
