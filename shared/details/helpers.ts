import { createHash } from 'node:crypto';
import { InvalidInputError } from '../errors';
import { validateChunkId } from '../ids';
import { canonicalJson } from './json';
import type { ConflictItem } from './payload';

/**
 * Orders strings by Unicode code point (= UTF-8 byte order), which is what Python's `sorted()` does;
 * JS's default sort compares UTF-16 code units and differs above U+FFFF.
 */
export const compareCodePoints = (a: string, b: string): number =>
  a === b ? 0 : Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Distinct ids in code-point order. */
export const sortedUniqueIds = (ids: Iterable<string>): string[] => [...new Set(ids)].sort(compareCodePoints);

export const FLUSH_ID_LENGTH = 16;

/**
 * The flush id of a set of chunks (seed: `sha256(sorted(chunk_ids))[:16]`), made precise:
 *
 *   sha256( UTF-8( JSON.stringify( distinct chunk ids sorted by code point ) ) ), first 16 hex chars
 *
 * i.e. the compact JSON array, e.g. `["p0","p1","preparse"]`. Order and repeats do not matter, so
 * re-flushing the same set re-PUTs the same key. Python equivalent (ids pass validateChunkId, so no
 * control characters to escape): `sha256(json.dumps(sorted(set(ids)), separators=(",", ":"),
 * ensure_ascii=False).encode()).hexdigest()[:16]`.
 */
export const flushIdForChunks = (chunkIds: Iterable<string>): string => {
  const ids = [...chunkIds].map(validateChunkId);
  if (ids.length === 0)
    throw new InvalidInputError('chunk ids', 'at least one chunk id is needed for a flush id');
  const canonical = JSON.stringify(sortedUniqueIds(ids));
  return createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, FLUSH_ID_LENGTH);
};

/** Drops repeated doc ids, keeping the first occurrence's position. */
export const dedupeDocIds = (list: Iterable<string>): string[] => [...new Set(list)];

/** The identity of a conflict item: its canonical JSON (key order never matters). */
export const conflictItemKey = (item: ConflictItem): string => canonicalJson(item);

/** Drops conflict items equal (as JSON) to an earlier one, keeping first-occurrence order. */
export const dedupeConflictItems = (list: Iterable<ConflictItem>): ConflictItem[] => {
  const seen = new Set<string>();
  const out: ConflictItem[] = [];
  for (const item of list) {
    const key = conflictItemKey(item);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(item);
    }
  }
  return out;
};
