import type { S3Client } from '@aws-sdk/client-s3';
import { WATERMARK_KEY } from '../archive/format';
import {
  type ReadWatermark,
  readWatermark,
  WATERMARK_FORMAT,
  type WatermarkDoc,
} from '../archive/steps/plan/watermark';
import { ConcurrentModificationError } from '../errors';
import { putConditional } from '../s3/objects';
import { canonical, EMPTY_SUMMARY, type ErasureSummary, isEmptySummary, sameSummary } from './summary';
import { rebuildErasureSummary } from './summary-rebuild';

interface Target {
  readonly s3: S3Client;
  readonly bucket: string;
}

/**
 * The watermark (readWatermark), or — when there is none (the first run ever, or a watermark deleted,
 * lost or set aside by `jobarchive repair-watermark`) — a summary-only document rebuilt from the
 * tombstones and the ledger (summary-rebuild.ts; etag null: the next write creates the watermark with
 * it). So no write after a lost watermark drops the forgotten shops.
 */
export const readWatermarkWithSummary = async (t: Target): Promise<ReadWatermark> => {
  const read = await readWatermark(t);
  if (read.doc) return read;
  const erasure = await rebuildErasureSummary(t);
  return isEmptySummary(erasure) ? read : { doc: summaryOnly(erasure), etag: null };
};

/** The erasure summary the watermark holds (one GET; rebuilt from the records when there is none). */
export const readErasureSummary = async (t: Target): Promise<ErasureSummary> =>
  (await readWatermarkWithSummary(t)).doc?.erasure ?? EMPTY_SUMMARY;

/**
 * A watermark no run has written yet (`runId` ''): it only carries the erasure summary. Plan treats it
 * as no watermark at all (the first run reads every status from the beginning).
 */
export const summaryOnly = (erasure: ErasureSummary): WatermarkDoc => ({
  format: WATERMARK_FORMAT,
  cutoff: new Date(0).toISOString(),
  keys: {},
  retry: [],
  runId: '',
  erasure,
});

/**
 * Changes the summary by compare-and-swap on the watermark (If-Match, or If-None-Match when there is
 * none), the rest of the document as it is; re-read and re-applied when a run or another erasure
 * wrote it first. Nothing is written when `change` leaves it as it was.
 */
export const updateErasureSummary = async (
  t: Target,
  change: (s: ErasureSummary) => ErasureSummary,
): Promise<ErasureSummary> => {
  for (let attempt = 0; attempt < 8; attempt++) {
    const { doc, etag } = await readWatermarkWithSummary(t);
    const had = doc?.erasure ?? EMPTY_SUMMARY;
    const next = canonical(change(had));
    if (sameSummary(had, next)) return had;
    const body: WatermarkDoc = doc ? { ...doc, erasure: next } : summaryOnly(next);
    try {
      await putConditional(
        t.s3,
        { Bucket: t.bucket, Key: WATERMARK_KEY, Body: JSON.stringify(body), ContentType: 'application/json' },
        etag,
      );
      return next;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
    }
  }
  throw new ConcurrentModificationError(WATERMARK_KEY);
};
