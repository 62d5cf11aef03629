import { hash } from 'node:crypto';
import { canonicalJson as canonicalJsonValue, type JsonValue } from '../../details/json';

/** Key-sorted JSON of a record or payload (records are plain JSON by construction). */
export const canonicalJson = (value: unknown): string => canonicalJsonValue(value as JsonValue);

/**
 * sha256 of `data` (a string as its UTF-8) in hex. One-shot: no Hash object per call (the archive
 * step hashes every hot object, record line and platform-data payload; `npm run bench:hot-cpu`).
 */
export const sha256Hex = (data: Uint8Array | string): string => hash('sha256', data, 'hex');
