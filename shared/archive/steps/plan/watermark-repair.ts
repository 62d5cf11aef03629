import type { S3Client } from '@aws-sdk/client-s3';
import { rebuildErasureSummary } from '../../../erasure/summary-rebuild';
import { summaryOnly } from '../../../erasure/summary-store';
import { isNamedError } from '../../../errors';
import { getObjectBytes, putBytes, putConditional } from '../../../s3/objects';
import { runPrefix, WATERMARK_KEY } from '../../format';
import { readWatermark } from './watermark';

/**
 * The repair of a watermark that does not parse (`jobarchive repair-watermark`; docs/operations.md,
 * "A corrupt watermark"): every run fails on it until it is replaced. Its bytes are set aside in a
 * repair's run scratch (`job-details-runs/repair-watermark-{time}/watermark.json`, expired by the
 * scratch lifecycle rule and scrubbed by forget like any run's), and a watermark no run wrote yet takes
 * its place (If-Match on the corrupt one), its erasure summary rebuilt from the tombstones and the
 * ledger. The next run then plans as the first run ever — every due row from the beginning of the GSI,
 * so the lost retry entries' jobs (still terminal rows) are planned again — and sweeps for orphans.
 * A watermark that parses is left alone.
 */
export interface WatermarkRepair {
  readonly state: 'repaired' | 'not-corrupt' | 'missing';
  /** Where the corrupt bytes were set aside. */
  readonly setAside?: string;
  /** Why it did not parse. */
  readonly reason?: string;
  readonly forgottenShops: number;
  readonly openRequests: number;
}

export const repairWatermark = async (
  t: { readonly s3: S3Client; readonly bucket: string },
  now: Date,
): Promise<WatermarkRepair> => {
  let reason: string;
  try {
    const read = await readWatermark(t);
    const erasure = read.doc?.erasure;
    return {
      state: read.doc ? 'not-corrupt' : 'missing',
      forgottenShops: Object.keys(erasure?.forgotten ?? {}).length,
      openRequests: Object.keys(erasure?.open ?? {}).length,
    };
  } catch (err) {
    if (!isNamedError(err, 'CorruptObjectError')) throw err;
    reason = (err as Error).message;
  }
  const got = await getObjectBytes(t.s3, t.bucket, WATERMARK_KEY);
  if (!got) return { state: 'missing', forgottenShops: 0, openRequests: 0 };
  const stamp = now.toISOString().replace(/[-:.]/g, '');
  const setAside = `${runPrefix(`repair-watermark-${stamp}`)}watermark.json`;
  await putBytes(t, setAside, got.bytes, 'application/octet-stream');
  const erasure = await rebuildErasureSummary(t);
  await putConditional(
    t.s3,
    {
      Bucket: t.bucket,
      Key: WATERMARK_KEY,
      Body: JSON.stringify(summaryOnly(erasure)),
      ContentType: 'application/json',
    },
    got.etag,
  );
  return {
    state: 'repaired',
    setAside,
    reason,
    forgottenShops: Object.keys(erasure.forgotten).length,
    openRequests: Object.keys(erasure.open).length,
  };
};
