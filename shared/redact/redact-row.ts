import { INLINE_DETAIL_ATTRIBUTES } from '../details/inline';

/**
 * Pure redaction of one document from a pre-migration row's inline details (shared/details/inline.ts:
 * `failed_items_details`, `skipped_items_details`, `conflict_details`, in either accepted shape —
 * reason → list or string set of ids / conflict items, or a list of `{reason, doc_id, …}` entries).
 * Each attribute keeps its shape; a string set left empty becomes an empty list (DynamoDB stores no
 * empty set), which the reader reads as the same empty reason. Returns the attributes that changed,
 * with their new values, and the listings removed.
 */
export interface RedactedRow {
  readonly changed: Readonly<Record<string, unknown>>;
  readonly removed: number;
}

const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Set);

/** Whether one listed item is the document: an id, or an object with its `doc_id`. */
const isDoc = (item: unknown, docId: string): boolean =>
  item === docId || (isObj(item) && item.doc_id === docId);

const stripList = (items: readonly unknown[], docId: string) => {
  const kept = items.filter((i) => !isDoc(i, docId));
  return { kept, removed: items.length - kept.length };
};

const redactAttribute = (value: unknown, docId: string): { value: unknown; removed: number } => {
  if (Array.isArray(value)) {
    const { kept, removed } = stripList(value, docId);
    return { value: kept, removed };
  }
  if (!isObj(value)) return { value, removed: 0 };
  let removed = 0;
  const out: Record<string, unknown> = {};
  for (const [reason, items] of Object.entries(value)) {
    const list = Array.isArray(items) ? items : items instanceof Set ? [...items] : null;
    if (list === null) {
      out[reason] = items;
      continue;
    }
    const s = stripList(list, docId);
    removed += s.removed;
    out[reason] =
      items instanceof Set && s.removed > 0 && s.kept.length > 0
        ? new Set(s.kept)
        : s.removed > 0
          ? s.kept
          : items;
  }
  return { value: out, removed };
};

export const redactRow = (row: Readonly<Record<string, unknown>>, docId: string): RedactedRow => {
  const changed: Record<string, unknown> = {};
  let removed = 0;
  for (const a of Object.values(INLINE_DETAIL_ATTRIBUTES)) {
    if (row[a] === undefined || row[a] === null) continue;
    const r = redactAttribute(row[a], docId);
    if (r.removed === 0) continue;
    changed[a] = r.value;
    removed += r.removed;
  }
  return { changed, removed };
};
