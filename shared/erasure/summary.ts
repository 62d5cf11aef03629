import { createHash } from 'node:crypto';

export const ERASURE_KINDS = ['forget-shop', 'redact-doc'] as const;
export type ErasureKind = (typeof ERASURE_KINDS)[number];
export type ErasureState = 'received' | 'pending' | 'complete';

/** An erasure request past its deadline, as the report and audit list it (no document id). */
export interface OverdueRequest {
  readonly id: string;
  readonly kind: ErasureKind;
  readonly shopId: string;
  readonly receivedAt: string;
  readonly state: ErasureState;
  readonly pendingReason?: string;
  /** Whole days since it was received. */
  readonly ageDays: number;
}

/**
 * What a scheduled run needs to know about erasure, kept in the watermark it reads anyway
 * (`job-details-state/watermark.json`, field `erasure`; docs/erasure.md "What a run reads"), so a run
 * with no erasure to honour lists nothing: the forgotten shops (by digest, with their `forgottenAt`)
 * and the open requests. Written only by forget and the ledger (If-Match); runs carry it over.
 * The tombstones and the ledger stay the records; this is their summary, written before either is
 * acted on (a forget deletes nothing before its shop is here; a request is here before it is recorded).
 */
export interface ErasureSummary {
  /** shopDigest(shop) → the tombstone's `forgottenAt`: kept for good, like the tombstones. */
  readonly forgotten: Readonly<Record<string, string>>;
  /** Requests received and not complete, by id; removed when the request completes. */
  readonly open: Readonly<Record<string, OpenRequest>>;
}

export interface OpenRequest {
  readonly kind: ErasureKind;
  /** Named until the request completes (the overdue list says whose it is), like the ledger. */
  readonly shopId: string;
  readonly receivedAt: string;
  /** Why it waits (`restore`: a Glacier part is being restored); absent while not pending. */
  readonly pending?: string;
}

export const EMPTY_SUMMARY: ErasureSummary = { forgotten: {}, open: {} };

/**
 * A shop's key in `forgotten`: the first 32 hex characters (128 bits) of the SHA-256 of its id (UTF-8),
 * so the watermark does not name a forgotten shop; collisions are out of reach for any fleet.
 */
export const shopDigest = (shopId: string): string =>
  createHash('sha256').update(shopId, 'utf8').digest('hex').slice(0, 32);

/** The shop's `forgottenAt`, or undefined when it was never forgotten. */
export const forgottenAtOf = (s: ErasureSummary | undefined, shopId: string): string | undefined =>
  s?.forgotten[shopDigest(shopId)];

/**
 * Whether a job completed at `completedAt` is the forgotten data of the shop (compared as instants:
 * rows carry `+00:00` and microseconds, tombstones `Z`). A completion that is not a time is refused
 * too: nothing proves it came after the forget.
 */
export const isForgottenIn = (s: ErasureSummary | undefined, shopId: string, completedAt: string | null) => {
  const at = forgottenAtOf(s, shopId);
  if (at === undefined) return false;
  const t = completedAt === null ? Number.NaN : Date.parse(completedAt);
  return Number.isNaN(t) || t <= Date.parse(at);
};

const isStr = (v: unknown): v is string => typeof v === 'string';
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `erasure` field of a watermark, checked (`bad` names what is wrong); absent → empty. */
export const parseSummary = (v: unknown, bad: (why: string) => never): ErasureSummary => {
  if (v === undefined) return EMPTY_SUMMARY;
  if (!isRecord(v) || !isRecord(v.forgotten) || !isRecord(v.open)) return bad('erasure is not a summary');
  const forgotten: Record<string, string> = {};
  for (const [k, at] of Object.entries(v.forgotten)) {
    if (!/^[0-9a-f]{32}$/.test(k) || !isStr(at) || Number.isNaN(Date.parse(at)))
      return bad('erasure.forgotten holds an entry that is not digest → time');
    forgotten[k] = at;
  }
  const open: Record<string, OpenRequest> = {};
  for (const [id, r] of Object.entries(v.open)) {
    if (
      !isRecord(r) ||
      (r.kind !== 'forget-shop' && r.kind !== 'redact-doc') ||
      !isStr(r.shopId) ||
      !isStr(r.receivedAt) ||
      Number.isNaN(Date.parse(r.receivedAt)) ||
      (r.pending !== undefined && !isStr(r.pending))
    )
      return bad(`erasure.open.${id} is not an open request`);
    open[id] = {
      kind: r.kind,
      shopId: r.shopId,
      receivedAt: r.receivedAt,
      ...(isStr(r.pending) ? { pending: r.pending } : {}),
    };
  }
  return { forgotten, open };
};

export const isEmptySummary = (s: ErasureSummary | undefined): boolean =>
  !s || (Object.keys(s.forgotten).length === 0 && Object.keys(s.open).length === 0);

export const sameSummary = (a: ErasureSummary | undefined, b: ErasureSummary | undefined): boolean =>
  JSON.stringify(canonical(a ?? EMPTY_SUMMARY)) === JSON.stringify(canonical(b ?? EMPTY_SUMMARY));

const sorted = <T>(o: Readonly<Record<string, T>>): Record<string, T> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** Keys in order, so a document's bytes do not depend on the order of the changes. */
export const canonical = (s: ErasureSummary): ErasureSummary => ({
  forgotten: sorted(s.forgotten),
  open: sorted(s.open),
});

/** The summary with a shop forgotten at `forgottenAt` (a later forget of the same shop wins). */
export const withForgotten = (s: ErasureSummary, shopId: string, forgottenAt: string): ErasureSummary => {
  const k = shopDigest(shopId);
  const had = s.forgotten[k];
  if (had !== undefined && Date.parse(had) >= Date.parse(forgottenAt)) return s;
  return { ...s, forgotten: { ...s.forgotten, [k]: forgottenAt } };
};

export const withOpen = (s: ErasureSummary, id: string, r: OpenRequest): ErasureSummary => ({
  ...s,
  open: { ...s.open, [id]: r },
});

export const withClosed = (s: ErasureSummary, id: string): ErasureSummary => {
  if (!(id in s.open)) return s;
  const { [id]: _gone, ...open } = s.open;
  return { ...s, open };
};

const DAY_MS = 86_400_000;

/** What an open request is, wherever it was read (the ledger, this summary). */
export type OpenItem = Omit<OverdueRequest, 'ageDays'>;

/** Requests past the deadline at `at`, oldest first; no document ids. */
export const overdueOf = (items: readonly OpenItem[], at: Date, deadlineDays: number): OverdueRequest[] =>
  items
    .filter((r) => r.state !== 'complete' && at.getTime() - Date.parse(r.receivedAt) > deadlineDays * DAY_MS)
    .map((r) => ({ ...r, ageDays: Math.floor((at.getTime() - Date.parse(r.receivedAt)) / DAY_MS) }))
    .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.id.localeCompare(b.id));

/** The summary's overdue requests (what ledger.ts `overdueRequests` says of the ledger). */
export const overdueIn = (s: ErasureSummary | undefined, at: Date, deadlineDays: number): OverdueRequest[] =>
  overdueOf(
    Object.entries(s?.open ?? {}).map(([id, r]) => ({
      id,
      kind: r.kind,
      shopId: r.shopId,
      receivedAt: r.receivedAt,
      state: r.pending !== undefined ? ('pending' as const) : ('received' as const),
      ...(r.pending !== undefined ? { pendingReason: r.pending } : {}),
    })),
    at,
    deadlineDays,
  );

/** Redactions waiting (for a Glacier restore): a scheduled run resumes them. */
export const pendingRedactions = (s: ErasureSummary | undefined): number =>
  Object.values(s?.open ?? {}).filter((r) => r.kind === 'redact-doc' && r.pending !== undefined).length;
