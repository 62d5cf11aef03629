import { createHash, randomBytes } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { ERASURE_PREFIX } from '../archive/format';
import { ConcurrentModificationError, InvalidInputError } from '../errors';
import { validateShopId } from '../ids';
import { getObjectBytes, listAll, putBytes, putConditional } from '../s3/objects';
import { formatTimestamp } from '../time';
import {
  COMPLETE_PREFIX,
  ERASURE_REQUEST_FORMAT,
  type ErasureReceipt,
  type ErasureRequest,
  parseRequest,
  REQUESTS_PREFIX,
} from './request-doc';
import {
  ERASURE_KINDS,
  type ErasureKind,
  type ErasureState,
  type OverdueRequest,
  overdueOf,
  withClosed,
  withOpen,
} from './summary';
import { updateErasureSummary } from './summary-store';

export {
  ERASURE_REQUEST_FORMAT,
  type ErasureReceipt,
  type ErasureRequest,
  parseRequest,
  REQUESTS_PREFIX,
} from './request-doc';

/**
 * The erasure-request ledger (docs/erasure.md): every request to forget a shop or redact a document is
 * one JSON object under its own prefix, created when received (If-None-Match) and updated by
 * compare-and-swap (If-Match) as runs work on it. It never expires: it is the record that an
 * erasure was asked for, when, and when it was done. It names the shop (the receipt must); a
 * redacted document's id is kept only until the request completes, then only its SHA-256.
 */
export { ERASURE_PREFIX };

export interface LedgerContext {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly clock?: () => Date;
}

const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const KIND_IN_ID = /^\d{8}T\d{6}Z-(forget-shop|redact-doc)-[a-z2-7]{8}$/;

export const validateRequestId = (id: unknown): string => {
  if (typeof id !== 'string' || !REQUEST_ID.test(id))
    throw new InvalidInputError(
      'erasure request id',
      `expected 1-100 of [A-Za-z0-9_-], got ${JSON.stringify(id)}`,
    );
  return id;
};

export const requestKey = (id: string): string => `${REQUESTS_PREFIX}${validateRequestId(id)}.json`;

const stamp = (d: Date): string =>
  d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');

const base32 = (): string =>
  Array.from(randomBytes(8), (b) => 'abcdefghijklmnopqrstuvwxyz234567'[b % 32]).join('');

/** A new request id: sorts by receipt time and says its kind, so listing one kind reads no other. */
export const newRequestId = (kind: ErasureKind, at: Date, random: () => string = base32): string =>
  `${stamp(at)}-${kind}-${random()}`;

export const docSha256 = (docId: string): string => createHash('sha256').update(docId, 'utf8').digest('hex');

const now = (ctx: LedgerContext): Date => ctx.clock?.() ?? new Date();

const encode = (r: ErasureRequest): Buffer => Buffer.from(`${JSON.stringify(r)}\n`, 'utf8');

export interface StoredRequest {
  readonly request: ErasureRequest;
  readonly etag: string;
}

export const getRequest = async (ctx: LedgerContext, id: string): Promise<StoredRequest | null> => {
  const key = requestKey(id);
  const got = await getObjectBytes(ctx.s3, ctx.bucket, key);
  return got ? { request: parseRequest(key, got.bytes), etag: got.etag } : null;
};

export interface NewRequest {
  readonly kind: ErasureKind;
  readonly shopId: string;
  /** Required for redact-doc, refused for forget-shop. */
  readonly docId?: string;
  /** The caller's id (e.g. the webhook's `X-Shopify-Webhook-Id`): a redelivery records nothing new. */
  readonly requestId?: string;
  /** When the platform sent it (default: now); the deadline counts from here. */
  readonly receivedAt?: Date;
}

const checkNew = (input: NewRequest): void => {
  if (!ERASURE_KINDS.includes(input.kind))
    throw new InvalidInputError(
      'erasure kind',
      `expected one of ${ERASURE_KINDS.join(', ')}, got ${JSON.stringify(input.kind)}`,
    );
  validateShopId(input.shopId);
  if (input.kind === 'redact-doc' && (typeof input.docId !== 'string' || input.docId === ''))
    throw new InvalidInputError('docId', 'a redact-doc request names the document');
  if (input.kind === 'forget-shop' && input.docId !== undefined)
    throw new InvalidInputError('docId', 'a forget-shop request names no document');
  if (input.requestId !== undefined) validateRequestId(input.requestId);
};

/**
 * Records a request when it is received: a conditional create, so a redelivered request (same
 * `requestId`) returns the record already there — which must be the same kind, shop and document.
 */
export const recordRequest = async (ctx: LedgerContext, input: NewRequest): Promise<ErasureRequest> => {
  checkNew(input);
  const at = input.receivedAt ?? now(ctx);
  const id = input.requestId ?? newRequestId(input.kind, at);
  const ts = formatTimestamp(at);
  const request: ErasureRequest = {
    format: ERASURE_REQUEST_FORMAT,
    id,
    kind: input.kind,
    shopId: input.shopId,
    ...(input.docId !== undefined ? { docId: input.docId, docSha256: docSha256(input.docId) } : {}),
    receivedAt: ts,
    state: 'received',
    updatedAt: formatTimestamp(now(ctx)),
    runs: [],
  };
  // Into the watermark's summary first (the runs' view: overdue, resumable), so a request recorded here
  // is never one the runs do not know of; a crash between leaves an open entry that goes overdue.
  await syncSummary(ctx, request);
  try {
    await putConditional(
      ctx.s3,
      { Bucket: ctx.bucket, Key: requestKey(id), Body: encode(request), ContentType: 'application/json' },
      null,
    );
    return request;
  } catch (err) {
    if (!(err instanceof ConcurrentModificationError)) throw err;
    const existing = await getRequest(ctx, id);
    if (!existing) throw err;
    const e = existing.request;
    // The summary says what the recorded request is (a redelivery of a completed one stays closed).
    await syncSummary(ctx, e);
    const same =
      e.kind === request.kind &&
      e.shopId === request.shopId &&
      (e.docSha256 ?? null) === (request.docSha256 ?? null);
    if (!same)
      throw new InvalidInputError('erasure request id', `${id} is already recorded for another request`);
    return e;
  }
};

/** The request's entry in the watermark's erasure summary: open (with why it waits) or gone. */
const syncSummary = (ctx: LedgerContext, r: ErasureRequest) =>
  updateErasureSummary(ctx, (s) =>
    r.state === 'complete'
      ? withClosed(s, r.id)
      : withOpen(s, r.id, {
          kind: r.kind,
          shopId: r.shopId,
          receivedAt: r.receivedAt,
          ...(r.state === 'pending' ? { pending: r.pendingReason ?? 'unspecified' } : {}),
        }),
  );

/** A change to a request: state, reason, receipt, the run to note. */
export interface RequestChange {
  readonly state?: ErasureState;
  readonly pendingReason?: string;
  readonly runId?: string;
  readonly receipt?: ErasureReceipt;
}

/** Applies a change (pure): notes the run once; completing drops the document id and the reason. */
export const applyChange = (r: ErasureRequest, change: RequestChange, at: Date): ErasureRequest => {
  const state = change.state ?? r.state;
  const runs =
    change.runId === undefined || r.runs.includes(change.runId) ? r.runs : [...r.runs, change.runId];
  const { docId: _doc, pendingReason: _reason, completedAt: _done, ...rest } = r;
  return {
    ...rest,
    ...(state !== 'complete' && r.docId !== undefined ? { docId: r.docId } : {}),
    ...(state === 'pending'
      ? { pendingReason: change.pendingReason ?? r.pendingReason ?? 'unspecified' }
      : {}),
    state,
    updatedAt: formatTimestamp(at),
    ...(state === 'complete' ? { completedAt: r.completedAt ?? formatTimestamp(at) } : {}),
    runs,
    ...(change.receipt !== undefined ? { receipt: change.receipt } : {}),
  };
};

/**
 * Updates a request by compare-and-swap (If-Match), re-reading and re-applying when another writer
 * got there first. A complete request stays complete (a late run only notes itself).
 */
export const updateRequest = async (
  ctx: LedgerContext,
  id: string,
  change: RequestChange,
): Promise<ErasureRequest> => {
  for (let attempt = 0; ; attempt++) {
    const stored = await getRequest(ctx, id);
    if (!stored) throw new InvalidInputError('erasure request id', `${id} is not recorded`);
    const effective =
      stored.request.state === 'complete' ? { runId: change.runId, receipt: change.receipt } : change;
    const next = applyChange(stored.request, effective, now(ctx));
    try {
      await putConditional(
        ctx.s3,
        { Bucket: ctx.bucket, Key: requestKey(id), Body: encode(next), ContentType: 'application/json' },
        stored.etag,
      );
      // After the record: a marker without a complete record never exists (the reverse only costs a GET).
      if (next.state === 'complete' && stored.request.state !== 'complete')
        await putBytes(ctx, `${COMPLETE_PREFIX}${id}`, new Uint8Array(0), 'application/octet-stream');
      // A change of state reaches the summary after the record (a crash between: the entry stays open,
      // or says pending late, until the request is worked on again).
      if (next.state !== 'received' || stored.request.state !== 'received') await syncSummary(ctx, next);
      return next;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt >= 8) throw err;
    }
  }
};

export const markPending = (ctx: LedgerContext, id: string, runId: string, reason: string) =>
  updateRequest(ctx, id, { state: 'pending', pendingReason: reason, runId });

export const markComplete = (ctx: LedgerContext, id: string, runId: string, receipt: ErasureReceipt) =>
  updateRequest(ctx, id, { state: 'complete', runId, receipt });

/** The kind a request id says (generated ids do), or undefined for a caller's own id. */
const kindOfId = (id: string): ErasureKind | undefined => KIND_IN_ID.exec(id)?.[1] as ErasureKind | undefined;

/**
 * Every recorded request (of one kind: generated ids name it, so the others are not read), oldest
 * first: one LIST per 1,000 requests and a GET each — with `openOnly`, a LIST of the completion
 * markers too and no GET of a completed request.
 */
export const listRequests = async (
  ctx: LedgerContext,
  opts: { kind?: ErasureKind; openOnly?: boolean } = {},
): Promise<ErasureRequest[]> => {
  const out: ErasureRequest[] = [];
  const keys: string[] = [];
  for await (const o of listAll(ctx.s3, ctx.bucket, REQUESTS_PREFIX)) keys.push(o.key);
  const done = new Set<string>();
  if (opts.openOnly && keys.length > 0)
    for await (const o of listAll(ctx.s3, ctx.bucket, COMPLETE_PREFIX))
      done.add(o.key.slice(COMPLETE_PREFIX.length));
  for (const key of keys) {
    const id = key.slice(REQUESTS_PREFIX.length).replace(/\.json$/, '');
    if (done.has(id)) continue;
    const named = kindOfId(id);
    if (opts.kind !== undefined && named !== undefined && named !== opts.kind) continue;
    const got = await getObjectBytes(ctx.s3, ctx.bucket, key);
    if (!got) continue; // removed between LIST and GET: nothing to report
    const r = parseRequest(key, got.bytes);
    if (opts.kind !== undefined && r.kind !== opts.kind) continue;
    if (opts.openOnly && r.state === 'complete') continue;
    out.push(r);
  }
  return out.sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.id.localeCompare(b.id));
};

/** Requests not complete `deadlineDays` after they were received (pure), oldest first; no document ids. */
export const overdueRequests = (
  requests: readonly ErasureRequest[],
  at: Date,
  deadlineDays: number,
): OverdueRequest[] =>
  overdueOf(
    requests.map((r) => ({
      id: r.id,
      kind: r.kind,
      shopId: r.shopId,
      receivedAt: r.receivedAt,
      state: r.state,
      ...(r.pendingReason !== undefined ? { pendingReason: r.pendingReason } : {}),
    })),
    at,
    deadlineDays,
  );

/** Overdue requests read from the ledger. */
export const findOverdue = async (ctx: LedgerContext, deadlineDays: number): Promise<OverdueRequest[]> =>
  overdueRequests(await listRequests(ctx, { openOnly: true }), now(ctx), deadlineDays);
