import type { ByteRange } from '../archive/format';

/**
 * Plans ranged GETs: members wanted from the same part that touch or overlap are fetched with ONE
 * request (a job's platform-data record is usually written right before its job record). Members
 * with a gap between them stay separate GETs, so we never download other jobs' bytes. Pure.
 */
export interface WantedMember extends ByteRange {
  readonly id: string;
  readonly key: string;
}

export interface PlannedRead extends ByteRange {
  readonly key: string;
  /** Members inside this read; `offset` is relative to the read's first byte. */
  readonly members: ReadonlyArray<{ readonly id: string; readonly offset: number; readonly length: number }>;
}

export const planReads = (wanted: readonly WantedMember[]): PlannedRead[] => {
  const byKey = new Map<string, WantedMember[]>();
  for (const w of wanted) byKey.set(w.key, [...(byKey.get(w.key) ?? []), w]);

  const reads: PlannedRead[] = [];
  for (const [key, list] of [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const sorted = [...list].sort((a, b) => a.offset - b.offset || a.length - b.length);
    let group: WantedMember[] = [];
    let end = -1;
    const flush = () => {
      const first = group[0];
      if (!first) return;
      const start = first.offset;
      reads.push({
        key,
        offset: start,
        length: end - start,
        members: group.map((m) => ({ id: m.id, offset: m.offset - start, length: m.length })),
      });
      group = [];
    };
    for (const m of sorted) {
      if (group.length > 0 && m.offset > end) flush();
      end = group.length === 0 ? m.offset + m.length : Math.max(end, m.offset + m.length);
      group.push(m);
    }
    flush();
  }
  return reads;
};

/** The bytes of each member out of the reads' bodies (`bodies[i]` belongs to `reads[i]`). */
export const sliceMembers = (
  reads: readonly PlannedRead[],
  bodies: readonly Uint8Array[],
): Map<string, Uint8Array> => {
  const out = new Map<string, Uint8Array>();
  reads.forEach((read, i) => {
    const body = bodies[i];
    if (!body) return;
    for (const m of read.members) out.set(m.id, body.subarray(m.offset, m.offset + m.length));
  });
  return out;
};
