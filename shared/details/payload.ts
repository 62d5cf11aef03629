import { CorruptObjectError, InvalidInputError } from '../errors';
import { validateChunkId } from '../ids';
import { findJsonProblem, isPlainObject, type JsonValue } from './json';

/**
 * One conflict: the document id plus whatever the writer knows about it (`existing_version`,
 * `incoming_version`, `message`, …). Extra fields are kept verbatim; two items are the same conflict
 * when they are equal as JSON.
 */
export interface ConflictItem {
  readonly doc_id: string;
  readonly [field: string]: JsonValue;
}

/** reason → items. Field names are the seed's `JobDetailsPayload`, so Python readers keep working. */
export type ReasonMap<T> = Readonly<Record<string, readonly T[]>>;

/**
 * A redaction applied to a flush or an archived record (`jobarchive redact`): when, and how many
 * listings (failed / skipped ids, conflict items) it removed. It never names the document.
 */
export interface Redaction {
  readonly at: string;
  readonly listings: number;
}

/** One flush object on the wire: `job-details/{job_id}/{flush_id}.json.gz`, gzipped JSON. */
export interface JobDetailsPayload {
  readonly chunk_ids: readonly string[];
  readonly failed: ReasonMap<string>;
  readonly skipped: ReasonMap<string>;
  readonly conflict: ReasonMap<ConflictItem>;
  /** Redactions applied since it was written, oldest first (absent: none). */
  readonly redacted?: readonly Redaction[];
}

/** All flushes of a job merged: same fields; chunk ids sorted and unique, every list deduplicated. */
export type JobDetails = JobDetailsPayload;

export const PAYLOAD_FIELDS = ['chunk_ids', 'failed', 'skipped', 'conflict'] as const;
/** Written by redaction only; optional everywhere. */
const OPTIONAL_FIELDS: readonly string[] = ['redacted'];

/** A shape problem found while checking a payload; turned into the caller's error type below. */
class ShapeProblem {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {}
}

const field = (parent: string, key: string | number): string =>
  typeof key === 'number' ? `${parent}[${key}]` : `${parent}[${JSON.stringify(key)}]`;

const checkList = <T>(value: unknown, path: string, item: (v: unknown, p: string) => T): T[] => {
  if (!Array.isArray(value)) throw new ShapeProblem(path, 'must be an array');
  return value.map((v, i) => item(v, field(path, i)));
};

const checkReasonMap = <T>(
  value: unknown,
  path: string,
  item: (v: unknown, p: string) => T,
): Record<string, T[]> => {
  if (!isPlainObject(value)) throw new ShapeProblem(path, 'must be an object of reason → list');
  // fromEntries defines own properties, so a reason named "__proto__" stays data, not a prototype.
  return Object.fromEntries(
    Object.entries(value).map(([reason, list]) => [reason, checkList(list, field(path, reason), item)]),
  );
};

const checkDocId = (value: unknown, path: string): string => {
  if (typeof value !== 'string') throw new ShapeProblem(path, 'doc id must be a string');
  return value;
};

const checkChunkId = (value: unknown, path: string): string => {
  try {
    return validateChunkId(value);
  } catch (err) {
    throw new ShapeProblem(path, err instanceof Error ? err.message : String(err));
  }
};

const checkConflictItem = (value: unknown, path: string): ConflictItem => {
  if (!isPlainObject(value)) throw new ShapeProblem(path, 'conflict item must be an object');
  if (typeof value.doc_id !== 'string') throw new ShapeProblem(field(path, 'doc_id'), 'must be a string');
  const problem = findJsonProblem(value, path);
  if (problem) throw new ShapeProblem(problem.path, problem.reason);
  return { ...(value as ConflictItem) };
};

const checkRedaction = (value: unknown, path: string): Redaction => {
  if (!isPlainObject(value) || typeof value.at !== 'string' || !Number.isSafeInteger(value.listings))
    throw new ShapeProblem(path, 'redaction must be {at: string, listings: integer}');
  return { at: value.at, listings: value.listings as number };
};

const checkPayload = (value: unknown, allowUnknownFields: boolean): JobDetailsPayload => {
  if (!isPlainObject(value)) throw new ShapeProblem('payload', 'must be a JSON object');
  for (const name of PAYLOAD_FIELDS) {
    if (!(name in value)) throw new ShapeProblem(name, 'is missing');
  }
  if (!allowUnknownFields) {
    const unknown = Object.keys(value).filter(
      (k) => !(PAYLOAD_FIELDS as readonly string[]).includes(k) && !OPTIONAL_FIELDS.includes(k),
    );
    if (unknown.length > 0) throw new ShapeProblem(unknown[0] as string, 'is not a payload field');
  }
  return {
    chunk_ids: checkList(value.chunk_ids, 'chunk_ids', checkChunkId),
    failed: checkReasonMap(value.failed, 'failed', checkDocId),
    skipped: checkReasonMap(value.skipped, 'skipped', checkDocId),
    conflict: checkReasonMap(value.conflict, 'conflict', checkConflictItem),
    ...(value.redacted !== undefined
      ? { redacted: checkList(value.redacted, 'redacted', checkRedaction) }
      : {}),
  };
};

/**
 * A flush object's JSON as read back from S3. Unknown top-level fields are ignored (a newer writer
 * may add some, like pydantic's default); anything else off-shape is a CorruptObjectError naming the
 * key and the field, never a partial result.
 */
export const parseJobDetailsPayload = (value: unknown, key: string): JobDetailsPayload => {
  try {
    return checkPayload(value, true);
  } catch (err) {
    if (err instanceof ShapeProblem) throw new CorruptObjectError(key, `${err.field}: ${err.reason}`);
    throw err;
  }
};

/**
 * A payload handed to a writer. Stricter than the reader: an unknown field would be silently lost,
 * so it is an InvalidInputError (field `payload.<path>`), raised before any I/O.
 */
export const validateJobDetailsPayload = (value: unknown): JobDetailsPayload => {
  try {
    return checkPayload(value, false);
  } catch (err) {
    if (err instanceof ShapeProblem) {
      throw new InvalidInputError(err.field === 'payload' ? 'payload' : `payload.${err.field}`, err.reason);
    }
    throw err;
  }
};
