import type { ConflictItem, JobDetails, Redaction } from '../details/payload';

/**
 * Pure redaction of one document from a job's details (a flush payload or an archived record's
 * `details`): every failed / skipped listing of the id and every conflict item whose `doc_id` it is
 * are removed; reasons stay (possibly with an empty list), chunk ids and everything else stay, and a
 * `redacted` note `{at, listings}` records when and how many listings went. The note never names the
 * document. Counts on the job row are not touched: they are what the job processed.
 */
export interface RedactedDetails {
  readonly details: JobDetails;
  /** Listings removed (0: the document was not listed; `details` is then the input, unchanged). */
  readonly removed: number;
}

const strip = <T>(
  map: Readonly<Record<string, readonly T[]>>,
  drop: (item: T) => boolean,
): { map: Record<string, T[]>; removed: number } => {
  let removed = 0;
  const out: Record<string, T[]> = {};
  for (const [reason, items] of Object.entries(map)) {
    const kept = items.filter((i) => !drop(i));
    removed += items.length - kept.length;
    out[reason] = kept;
  }
  return { map: out, removed };
};

export const redactDetails = (details: JobDetails, docId: string, at: string): RedactedDetails => {
  const failed = strip(details.failed, (d) => d === docId);
  const skipped = strip(details.skipped, (d) => d === docId);
  const conflict = strip(details.conflict, (c: ConflictItem) => c.doc_id === docId);
  const removed = failed.removed + skipped.removed + conflict.removed;
  if (removed === 0) return { details, removed: 0 };
  const note: Redaction = { at, listings: removed };
  return {
    details: {
      ...details,
      failed: failed.map,
      skipped: skipped.map,
      conflict: conflict.map,
      redacted: [...(details.redacted ?? []), note],
    },
    removed,
  };
};

/** Whether the details list the document at all (what a block's filter promised, checked). */
export const listsDocument = (details: JobDetails, docId: string): boolean =>
  [details.failed, details.skipped].some((m) => Object.values(m).some((l) => l.includes(docId))) ||
  Object.values(details.conflict).some((l) => l.some((c) => c.doc_id === docId));
