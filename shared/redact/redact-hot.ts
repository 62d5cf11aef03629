import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { decodeFlushBody, encodeFlushBody } from '../details/codec';
import { META_SHOP_ID } from '../details/store';
import { ConcurrentModificationError } from '../errors';
import { isNotFound, normalizeEtag, putConditional } from '../s3/objects';
import { redactDetails } from './redact-details';

/**
 * Rewrites one hot flush object without the document: GET (body, ETag, metadata), redact, PUT the
 * new body with the same headers and metadata conditional on the ETag read (If-Match), so a flush
 * re-PUT meanwhile is never overwritten with stale content: on a 412 it is read again. Another shop's
 * object (its `shop-id` metadata) is never touched; one without `shop-id` is the asking shop's, as for
 * the reader. Returns the listings removed (0: nothing to do, nothing written).
 */
export const redactFlushObject = async (
  t: { readonly s3: S3Client; readonly bucket: string },
  key: string,
  ctx: { readonly shopId: string; readonly docId: string; readonly at: string },
  attempts = 3,
): Promise<number> => {
  for (let attempt = 1; ; attempt++) {
    let got: { bytes: Uint8Array; etag: string; metadata: Record<string, string> };
    try {
      const res = await t.s3.send(new GetObjectCommand({ Bucket: t.bucket, Key: key }));
      const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
      got = { bytes, etag: normalizeEtag(res.ETag), metadata: res.Metadata ?? {} };
    } catch (err) {
      if (isNotFound(err)) return 0; // deleted meanwhile (archived and past grace): the archive side has it
      throw err;
    }
    const owner = got.metadata[META_SHOP_ID];
    if (owner !== undefined && owner !== ctx.shopId) return 0;
    const r = redactDetails(decodeFlushBody(got.bytes, key), ctx.docId, ctx.at);
    if (r.removed === 0) return 0;
    try {
      await putConditional(
        t.s3,
        {
          Bucket: t.bucket,
          Key: key,
          Body: encodeFlushBody(r.details),
          ContentType: 'application/json',
          ContentEncoding: 'gzip',
          Metadata: got.metadata,
        },
        got.etag,
      );
      return r.removed;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt >= attempts) throw err;
    }
  }
};
