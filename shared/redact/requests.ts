import {
  type ErasureReceipt,
  listRequests,
  markComplete,
  recordRequest,
  updateRequest,
} from '../erasure/ledger';
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
      pendingReason: 'restore',
      runId,
      receipt: redactReceipt(report),
    });
};

/** Records the request (a redelivered request id records nothing new), redacts, settles the request. */
export const redactRequested = async (
  deps: RedactDeps,
  input: { shopId: string; docId: string; requestId?: string; runId: string },
): Promise<LedgerRedaction> => {
  const req = resolveRedactRequest(input);
  const request = await recordRequest(
    { s3: deps.s3, bucket: deps.bucket, clock: deps.clock },
    { kind: 'redact-doc', ...req, ...(input.requestId !== undefined ? { requestId: input.requestId } : {}) },
  );
  // A redelivered, already complete request is redacted again (idempotent: nothing is found) and
  // stays complete; the ledger notes the run.
  const report = await redactDocument(deps, req);
  await settle(deps, request.id, input.runId, report);
  return { requestId: request.id, report };
};

/** Works on every open redact request of the ledger (oldest first): what a scheduled run calls. */
export const resumeRedactions = async (deps: RedactDeps, runId: string): Promise<LedgerRedaction[]> => {
  const open = await listRequests(
    { s3: deps.s3, bucket: deps.bucket, clock: deps.clock },
    { kind: 'redact-doc', openOnly: true },
  );
  const out: LedgerRedaction[] = [];
  for (const r of open) {
    if (r.docId === undefined) continue;
    const report = await redactDocument(deps, { shopId: r.shopId, docId: r.docId });
    await settle(deps, r.id, runId, report);
    out.push({ requestId: r.id, report });
  }
  return out;
};
