import { constants, gunzipSync, gzipSync } from 'node:zlib';
import { CorruptObjectError, InvalidInputError } from '../errors';
import {
  canonicalJson,
  findJsonProblem,
  isPlainObject,
  type JsonObject,
  type JsonValue,
  parseJsonExact,
} from './json';
import { normalizeJobDetails } from './merge';
import { type JobDetailsPayload, parseJobDetailsPayload, validateJobDetailsPayload } from './payload';

/**
 * Bytes of the hot objects. Pure: no S3 here, so every corrupt case is unit-testable and the
 * archiver can hash exactly what the store wrote.
 */

export const GZIP_LEVEL = 9;
/** Sanity bound on a decompressed flush: a real one is KBs; this stops a gzip bomb, not real data. */
export const MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;
const GZIP_MAGIC = [0x1f, 0x8b] as const;
/** Gzip header byte 9 names the OS that wrote it; fixed so bytes do not depend on the platform. */
const GZIP_OS_OFFSET = 9;
const GZIP_OS_UNKNOWN = 0xff;

/**
 * Deterministic gzip: Node writes mtime 0 and no file name, the level is pinned and the OS byte is
 * fixed, so the same input gives the same bytes (and the same S3 ETag) every time — a re-flush is a
 * byte-identical re-PUT. (A different zlib build could still compress differently; readers never
 * compare bytes across writers, only the archiver compares what it read with what it wrote.)
 */
export const gzipDeterministic = (data: Uint8Array): Buffer => {
  const out = gzipSync(data, { level: GZIP_LEVEL, strategy: constants.Z_DEFAULT_STRATEGY });
  out[GZIP_OS_OFFSET] = GZIP_OS_UNKNOWN;
  return out;
};

export const isGzip = (bytes: Uint8Array): boolean =>
  bytes.length >= 2 && bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1];

const utf8 = new TextDecoder('utf-8', { fatal: true });

const parseJsonBytes = (bytes: Uint8Array, key: string): unknown => {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (err) {
    throw new CorruptObjectError(key, 'not valid UTF-8', { cause: err });
  }
  // Lossless and depth-bounded: the same parser reads part records (archive/format/blocks.ts).
  return parseJsonExact(text, key);
};

/**
 * Body of a flush object: the payload validated (InvalidInputError before any write), normalized
 * (deduplicated, chunk ids sorted), serialized as canonical JSON and gzipped deterministically.
 */
export const encodeFlushBody = (payload: JobDetailsPayload): Buffer => {
  const normalized = normalizeJobDetails(validateJobDetailsPayload(payload));
  return gzipDeterministic(Buffer.from(canonicalJson(normalized as unknown as JsonValue), 'utf8'));
};

/**
 * Bytes of a flush object as stored. We gunzip ourselves (S3 and s3rver return the stored gzip bytes;
 * nothing decompresses for us), and anything but our own format is a CorruptObjectError naming `key`.
 */
export const decodeFlushBody = (bytes: Uint8Array, key: string): JobDetailsPayload => {
  if (bytes.length === 0) throw new CorruptObjectError(key, 'empty object (0 bytes)');
  if (!isGzip(bytes)) throw new CorruptObjectError(key, 'not gzip (missing magic bytes 1f 8b)');
  let json: Buffer;
  try {
    json = gunzipSync(bytes, { maxOutputLength: MAX_DECOMPRESSED_BYTES });
  } catch (err) {
    throw new CorruptObjectError(key, `bad gzip: ${(err as Error).message}`, { cause: err });
  }
  if (json.length === 0) throw new CorruptObjectError(key, 'gzip holds no data');
  return parseJobDetailsPayload(parseJsonBytes(json, key), key);
};

/** platform-data.json: a JSON object (seed: `data: dict`), plain JSON, not gzipped. */
export const encodePlatformData = (data: unknown): Buffer => {
  if (!isPlainObject(data)) throw new InvalidInputError('platform data', 'must be a JSON object');
  const problem = findJsonProblem(data, 'platform data');
  if (problem) throw new InvalidInputError(problem.path, problem.reason);
  return Buffer.from(JSON.stringify(data), 'utf8'); // RawJsonNumbers as their text
};

export const decodePlatformData = (bytes: Uint8Array, key: string): JsonObject => {
  if (bytes.length === 0) throw new CorruptObjectError(key, 'empty object (0 bytes)');
  const value = parseJsonBytes(bytes, key);
  if (!isPlainObject(value)) throw new CorruptObjectError(key, 'platform data must be a JSON object');
  return value as JsonObject;
};
