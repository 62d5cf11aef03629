import {
  type ErasureReceipt,
  listRequests,
  markComplete,
  recordRequest,
  updateRequest,
  validateRequestId,
} from '../erasure/ledger';
import { InvalidInputError } from '../errors';
import { type RedactDeps, type RedactReport, redactDocument, resolveRedactRequest } from './redact';

/**
 * Redaction through the erasure-request ledger (shared/erasure/ledger.ts): the request is recorded
 * when received (before any other write), then worked on; it ends `pending` (reason `restore`) while
 * parts wait for a Glacier restore, `complete` with a receipt of counts once nothing is left. A later
 * run — a rerun of `redact`, `redact --pending`, or any caller of `resumeRedactions` — finishes it.
 */
export const redactReceipt = (r: RedactReport): ErasureReceipt => ({
  hotObjectsRewritten: r.hot.objectsRewritten,
  hotListingsRemoved: r.hot.listings,
  damagedBlocksDropped: r.archive.damagedBlocksDropped,
  damagedEntriesDropped: r.archive.damagedEntriesDropped,
  rowsRewritten: r.rows.rewritten,
  rowListingsRemoved: r.rows.listings,
  partsRewritten: r.archive.partsRewritten.length,
  archivedListingsRemoved: r.archive.listings,
  partsPendingRestore: r.pending.length,
  earlyDeletions: r.earlyDeletions.length,
  earlyDeletionGbDays: Number(
    r.earlyDeletions.reduce((n, e) => n + (e.bytes / 1024 ** 3) * e.chargedDays, 0).toFixed(9),
  ),
});

export interface LedgerRedaction {
  readonly requestId: string;
  readonly report: RedactReport;
}

const settle = async (deps: RedactDeps, id: string, runId: string, report: RedactReport): Promise<void> => {
  const ctx = { s3: deps.s3, bucket: deps.bucket, clock: deps.clock };
  if (report.complete) await markComplete(ctx, id, runId, redactReceipt(report));
  else
    await updateRequest(ctx, id, {
      state: 'pending',
      // `restore` resumes on the schedule; `damaged` waits for a redact with dropDamaged (it is retried too).
      pendingReason: report.pending.some((p) => p.reason === 'damaged')
        ? `damaged: ${report.pending
            .filter((p) => p.reason === 'damaged')
            .map((p) => p.key)
            .join(', ')} (redact with dropDamaged / --drop-damaged)`
        : 'restore',
      runId,
      receipt: redactReceipt(report),
    });
};

/** Records the request (a redelivered request id records nothing new), redacts, settles the request. */
export const redactRequested = async (
  deps: RedactDeps,
  input: {
    shopId: string;
    docId: string;
    requestId?: string;
    receivedAt?: Date;
    runId: string;
    dropDamaged?: boolean;
  },
): Promise<LedgerRedaction> => {
  const req = resolveRedactRequest(input);
  const request = await recordRequest(
    { s3: deps.s3, bucket: deps.bucket, clock: deps.clock },
    {
      kind: 'redact-doc',
      shopId: req.shopId,
      docId: req.docId,
      ...(input.requestId !== undefined ? { requestId: input.requestId } : {}),
      ...(input.receivedAt !== undefined ? { receivedAt: input.receivedAt } : {}),
    },
  );
  // A redelivered, already complete request is redacted again (idempotent: nothing is found) and
  // stays complete; the ledger notes the run.
  const report = await redactDocument(deps, req);
  await settle(deps, request.id, input.runId, report);
  return { requestId: request.id, report };
};

/** Works on every open redact request of the ledger (oldest first): what a scheduled run calls. */
export const resumeRedactions = async (
  deps: RedactDeps,
  runId: string,
  dropDamaged = false,
): Promise<LedgerRedaction[]> => {
  const open = await listRequests(
    { s3: deps.s3, bucket: deps.bucket, clock: deps.clock },
    { kind: 'redact-doc', openOnly: true },
  );
  const out: LedgerRedaction[] = [];
  for (const r of open) {
    if (r.docId === undefined) continue;
    const report = await redactDocument(deps, {
      shopId: r.shopId,
      docId: r.docId,
      ...(dropDamaged ? { dropDamaged: true } : {}),
    });
    await settle(deps, r.id, runId, report);
    out.push({ requestId: r.id, report });
  }
  return out;
};

/** What the state machine's Redact task is given: one request, or `{"pending": true}` for every open one. */
export type RedactEvent =
  | {
      readonly kind: 'one';
      readonly shopId: string;
      readonly docId: string;
      readonly requestId?: string;
      readonly receivedAt?: Date;
      readonly runId: string;
      readonly dropDamaged?: boolean;
    }
  | { readonly kind: 'pending'; readonly runId: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{redact: {shopId, docId, requestId?, receivedAt?} | {pending: true}, execution}`; bad input is a typed error. */
export const parseRedactEvent = (v: unknown, runIdOf: (execution: string) => string): RedactEvent => {
  if (!isObject(v)) throw new InvalidInputError('event', 'expected an object');
  const r = v.redact;
  const shape = 'expected {"shopId": …, "docId": …, "requestId"?: …, "receivedAt"?: …} or {"pending": true}';
  if (!isObject(r)) throw new InvalidInputError('redact', shape);
  if (typeof v.execution !== 'string')
    throw new InvalidInputError('execution', 'expected the execution name');
  const runId = runIdOf(v.execution);
  if (r.pending === true) {
    if (Object.keys(r).length !== 1)
      throw new InvalidInputError('redact', `pending takes nothing else; ${shape}`);
    return { kind: 'pending', runId };
  }
  const unknown = Object.keys(r).filter(
    (k) => !['shopId', 'docId', 'requestId', 'receivedAt', 'dropDamaged'].includes(k),
  );
  if (r.dropDamaged !== undefined && typeof r.dropDamaged !== 'boolean')
    throw new InvalidInputError('redact.dropDamaged', 'expected true or false');
  if (unknown.length > 0) throw new InvalidInputError('redact', `unknown field(s) ${unknown.join(', ')}`);
  const req = resolveRedactRequest({ shopId: r.shopId as string, docId: r.docId as string });
  const { receivedAt, requestId } = r;
  if (receivedAt !== undefined && (typeof receivedAt !== 'string' || Number.isNaN(Date.parse(receivedAt))))
    throw new InvalidInputError(
      'redact.receivedAt',
      `expected an ISO time, got ${JSON.stringify(receivedAt)}`,
    );
  return {
    kind: 'one',
    ...req,
    ...(requestId !== undefined ? { requestId: validateRequestId(requestId) } : {}),
    ...(receivedAt !== undefined ? { receivedAt: new Date(receivedAt as string) } : {}),
    ...(r.dropDamaged === true ? { dropDamaged: true as const } : {}),
    runId,
  };
};

/** What the Redact task returns (the execution history keeps it): counts, never the document id. */
export interface RedactTaskResult {
  readonly requests: ReadonlyArray<
    { readonly requestId: string; readonly shopId: string; readonly complete: boolean } & ErasureReceipt
  >;
  /** Requests still waiting for a Glacier restore: run again (`{"redact": {"pending": true}}`) later. */
  readonly pending: number;
}

export const runRedactEvent = async (deps: RedactDeps, e: RedactEvent): Promise<RedactTaskResult> => {
  const done =
    e.kind === 'pending'
      ? await resumeRedactions(deps, e.runId)
      : [
          await redactRequested(deps, {
            shopId: e.shopId,
            docId: e.docId,
            runId: e.runId,
            ...(e.requestId !== undefined ? { requestId: e.requestId } : {}),
            ...(e.receivedAt !== undefined ? { receivedAt: e.receivedAt } : {}),
            ...(e.dropDamaged ? { dropDamaged: true } : {}),
          }),
        ];
  return {
    requests: done.map((d) => ({
      requestId: d.requestId,
      shopId: d.report.shopId,
      complete: d.report.complete,
      ...redactReceipt(d.report),
    })),
    pending: done.filter((d) => !d.report.complete).length,
  };
};
