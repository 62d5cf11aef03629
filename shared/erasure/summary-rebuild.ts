import type { S3Client } from '@aws-sdk/client-s3';
import { ERASURE_PREFIX } from '../archive/format';
import { getObjectBytes, listAllArray } from '../s3/objects';
import { COMPLETE_PREFIX, parseRequest, REQUESTS_PREFIX } from './request-doc';
import { canonical, EMPTY_SUMMARY, type ErasureSummary, withOpen } from './summary';
import { parseTombstone, TOMBSTONES_PREFIX } from './tombstone';

/**
 * The erasure summary rebuilt from the records it summarises (docs/erasure.md, "What a run reads"):
 * every tombstone's digest and `forgottenAt`, every request without a completion marker that is not
 * complete. For a watermark that is gone (deleted, lost, or set aside by `jobarchive repair-watermark`):
 * without this, the first write after would drop the forgotten shops and a run would archive their
 * late jobs again. One LIST of `job-details-erasure/` (all a bucket without erasures pays), a GET per
 * tombstone and per open request; only when there is no watermark.
 */
export const rebuildErasureSummary = async (t: {
  readonly s3: S3Client;
  readonly bucket: string;
}): Promise<ErasureSummary> => {
  const keys = (await listAllArray(t.s3, t.bucket, ERASURE_PREFIX)).map((o) => o.key);
  if (keys.length === 0) return EMPTY_SUMMARY;
  const done = new Set(
    keys.filter((k) => k.startsWith(COMPLETE_PREFIX)).map((k) => k.slice(COMPLETE_PREFIX.length)),
  );
  let s: ErasureSummary = { forgotten: {}, open: {} };
  const forgotten: Record<string, string> = {};
  for (const key of keys.filter((k) => k.startsWith(TOMBSTONES_PREFIX))) {
    const got = await getObjectBytes(t.s3, t.bucket, key);
    if (got) {
      const stone = parseTombstone(key, got.bytes);
      forgotten[stone.shop] = stone.forgottenAt;
    }
  }
  s = { ...s, forgotten };
  for (const key of keys.filter((k) => k.startsWith(REQUESTS_PREFIX) && k.endsWith('.json'))) {
    if (done.has(key.slice(REQUESTS_PREFIX.length).replace(/\.json$/, ''))) continue;
    const got = await getObjectBytes(t.s3, t.bucket, key);
    if (!got) continue;
    const r = parseRequest(key, got.bytes);
    if (r.state === 'complete') continue;
    s = withOpen(s, r.id, {
      kind: r.kind,
      shopId: r.shopId,
      receivedAt: r.receivedAt,
      ...(r.state === 'pending' ? { pending: r.pendingReason ?? 'unspecified' } : {}),
    });
  }
  return canonical(s);
};
