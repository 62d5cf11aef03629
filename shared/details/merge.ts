import { conflictItemKey, sortedUniqueIds } from './helpers';
import type { ConflictItem, JobDetails, JobDetailsPayload, ReasonMap, Redaction } from './payload';

/** reason → deduplicated list, remembering what was seen so adding stays linear. */
class ReasonLists<T> {
  private readonly byReason = new Map<string, { seen: Set<string>; items: T[] }>();
  constructor(private readonly identity: (item: T) => string) {}

  add(map: ReasonMap<T>): void {
    for (const [reason, items] of Object.entries(map)) {
      let entry = this.byReason.get(reason);
      if (!entry) {
        entry = { seen: new Set(), items: [] };
        this.byReason.set(reason, entry);
      }
      for (const item of items) {
        const id = this.identity(item);
        if (!entry.seen.has(id)) {
          entry.seen.add(id);
          entry.items.push(item);
        }
      }
    }
  }

  /** Reasons in sorted order so the result does not depend on which flush came first. */
  result(): Record<string, T[]> {
    const reasons = [...this.byReason.keys()].sort();
    return Object.fromEntries(reasons.map((r) => [r, [...(this.byReason.get(r)?.items ?? [])]]));
  }
}

/**
 * Merges any number of payloads in one pass (merging 1,000 flushes pairwise would copy the growing
 * lists 1,000 times). Lists keep first-occurrence order across the payloads in the order added.
 */
export class JobDetailsAccumulator {
  private readonly chunkIds = new Set<string>();
  private readonly failed = new ReasonLists<string>((id) => id);
  private readonly skipped = new ReasonLists<string>((id) => id);
  private readonly conflict = new ReasonLists<ConflictItem>(conflictItemKey);
  private readonly redacted = new Map<string, Redaction>();

  add(payload: JobDetailsPayload): this {
    for (const id of payload.chunk_ids) this.chunkIds.add(id);
    for (const r of payload.redacted ?? []) this.redacted.set(`${r.at} ${r.listings}`, r);
    this.failed.add(payload.failed);
    this.skipped.add(payload.skipped);
    this.conflict.add(payload.conflict);
    return this;
  }

  result(): JobDetails {
    return {
      chunk_ids: sortedUniqueIds(this.chunkIds),
      failed: this.failed.result(),
      skipped: this.skipped.result(),
      conflict: this.conflict.result(),
      // Each redaction once, oldest first; absent when none (the wire form of every unredacted job).
      ...(this.redacted.size > 0
        ? {
            redacted: [...this.redacted.values()].sort((a, b) =>
              a.at < b.at ? -1 : a.at > b.at ? 1 : a.listings - b.listings,
            ),
          }
        : {}),
    };
  }
}

export const emptyJobDetails = (): JobDetails => ({ chunk_ids: [], failed: {}, skipped: {}, conflict: {} });

/** Union by reason: `a`'s items first, then `b`'s new ones; chunk ids sorted and unique. */
export const mergeJobDetails = (a: JobDetailsPayload, b: JobDetailsPayload): JobDetails =>
  new JobDetailsAccumulator().add(a).add(b).result();

export const mergeAllJobDetails = (payloads: Iterable<JobDetailsPayload>): JobDetails => {
  const acc = new JobDetailsAccumulator();
  for (const p of payloads) acc.add(p);
  return acc.result();
};

/** One payload in canonical form (what a flush object holds): deduplicated, sorted chunk ids. */
export const normalizeJobDetails = (payload: JobDetailsPayload): JobDetails =>
  new JobDetailsAccumulator().add(payload).result();
