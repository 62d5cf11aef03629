import { randomBytes } from 'node:crypto';
import { InvalidIdError } from './errors';

/**
 * Ids become S3 key segments and DynamoDB keys, so they are checked before any I/O: a job id of
 * `../x` must never address another job's objects.
 */
const SAFE_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

const checkSegment = (kind: string, value: unknown, maxLength: number): string => {
  if (typeof value !== 'string') throw new InvalidIdError(kind, value, 'must be a string');
  if (value.length === 0) throw new InvalidIdError(kind, value, 'must not be empty');
  if (value.length > maxLength) throw new InvalidIdError(kind, value, `longer than ${maxLength} characters`);
  if (CONTROL.test(value)) throw new InvalidIdError(kind, value, 'contains a control character');
  if (value.includes('/')) throw new InvalidIdError(kind, value, "contains '/'");
  if (value.includes('..')) throw new InvalidIdError(kind, value, "contains '..'");
  if (!SAFE_SEGMENT.test(value)) {
    throw new InvalidIdError(
      kind,
      value,
      'only letters, digits, ".", "_" and "-" are allowed, starting alphanumeric',
    );
  }
  return value;
};

/** Job ids: new 13-char base32 ids and legacy 36-char UUIDs both pass. */
export const validateJobId = (value: unknown): string => checkSegment('job id', value, 64);
/** Shop ids: e.g. `acme-store.myshopify.com`. */
export const validateShopId = (value: unknown): string => checkSegment('shop id', value, 128);
/** Flush ids: `flushIdForChunks` gives 16 hex characters; callers may pass their own. */
export const validateFlushId = (value: unknown): string => checkSegment('flush id', value, 64);

/** Chunk ids are never key segments, but they live in a DynamoDB string set: bounded, printable. */
export const validateChunkId = (value: unknown): string => {
  if (typeof value !== 'string') throw new InvalidIdError('chunk id', value, 'must be a string');
  if (value.length === 0) throw new InvalidIdError('chunk id', value, 'must not be empty');
  if (value.length > 256) throw new InvalidIdError('chunk id', value, 'longer than 256 characters');
  if (CONTROL.test(value)) throw new InvalidIdError('chunk id', value, 'contains a control character');
  return value;
};

/** `yyyy-mm`, the archive's month bucket. */
export const validateMonth = (value: unknown): string => {
  if (typeof value !== 'string' || !/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) {
    throw new InvalidIdError('month', value, 'expected yyyy-mm');
  }
  return value;
};

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** 13 lower-case base32 characters carrying 64 random bits (seed Phase 3: ≥ 60 bits). */
export const generateJobId = (): string => {
  const bytes = randomBytes(8);
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  bits <<= 1n; // 64 bits → 65 = 13 × 5
  let out = '';
  for (let i = 12; i >= 0; i--) out += BASE32[Number((bits >> BigInt(i * 5)) & 31n)];
  return out;
};

/** Short chunk ids (seed Phase 2): uniqueness is per job, so no s3_key prefix. */
export const chunkIds = {
  part: (idx: number): string => {
    if (!Number.isInteger(idx) || idx < 0)
      throw new InvalidIdError('chunk index', idx, 'must be a whole number ≥ 0');
    return `p${idx}`;
  },
  preparse: 'preparse',
  timeout: 'timeout',
  /** A chunk of redrive attempt `attempt` (record-flush.ts, redrive protocol): `r1-p0`. */
  redrive: (attempt: number, chunkId: string): string => {
    if (!Number.isInteger(attempt) || attempt < 1)
      throw new InvalidIdError('redrive attempt', attempt, 'must be a whole number ≥ 1');
    return `r${attempt}-${validateChunkId(chunkId)}`;
  },
} as const;
