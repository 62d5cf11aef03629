import { createHash } from 'node:crypto';
import { canonicalJson as canonicalJsonValue, type JsonValue } from '../../details/json';

/** Key-sorted JSON of a record or payload (records are plain JSON by construction). */
export const canonicalJson = (value: unknown): string => canonicalJsonValue(value as JsonValue);

export const sha256Hex = (data: Uint8Array | string): string =>
  createHash('sha256').update(data).digest('hex');
