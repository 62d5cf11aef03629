import { InvalidInputError } from '../../errors';
import { normalizeTimestamp } from '../../time';

/** Small validators for step events: each names the offending field in an InvalidInputError. */
export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const obj = (v: unknown, field: string): Obj => {
  if (!isObj(v)) throw new InvalidInputError(field, 'expected an object');
  return v;
};

export const str = (v: unknown, field: string): string => {
  if (typeof v !== 'string' || v === '') throw new InvalidInputError(field, 'expected a non-empty string');
  return v;
};

export const bool = (v: unknown, field: string): boolean => {
  if (typeof v !== 'boolean') throw new InvalidInputError(field, 'expected true or false');
  return v;
};

export const num = (v: unknown, field: string, min: number, max: number): number => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw new InvalidInputError(field, `expected a number in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
};

export const int = (v: unknown, field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
  const n = num(v, field, min, max);
  if (!Number.isInteger(n)) throw new InvalidInputError(field, `expected a whole number, got ${n}`);
  return n;
};

/** A timestamp (shared/time.ts), normalized so string order = time order. */
export const isoTime = (v: unknown, field: string): string => normalizeTimestamp(field, v);

/** Rejects fields outside `allowed` (typos in operator input must not silently change behaviour). */
export const onlyFields = (o: Obj, field: string, allowed: readonly string[]): void => {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length > 0) {
    throw new InvalidInputError(
      `${field}.${extra[0]}`,
      `unknown field (expected one of ${allowed.join(', ')})`,
    );
  }
};

/** Wraps an id validator's InvalidIdError as an InvalidInputError naming the event field. */
export const validId = <T>(validate: (v: unknown) => T, v: unknown, field: string): T => {
  try {
    return validate(v);
  } catch (err) {
    throw new InvalidInputError(field, err instanceof Error ? err.message : String(err));
  }
};
