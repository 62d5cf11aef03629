import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  ListObjectsV2Command,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { ConcurrentModificationError, CorruptObjectError, JobArchiveError } from '../errors';

/** Small S3 primitives shared by the store, the archiver steps and the reader. Clients are passed in. */

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModified: Date | undefined;
}

const statusOf = (err: unknown): number | undefined =>
  (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;

const nameOf = (err: unknown): string | undefined => (err as { name?: string } | null)?.name;

/** A missing object — but not a missing bucket (also 404), which is a configuration error, not absence. */
export const isNotFound = (err: unknown): boolean =>
  nameOf(err) !== 'NoSuchBucket' &&
  (nameOf(err) === 'NoSuchKey' || nameOf(err) === 'NotFound' || statusOf(err) === 404);

export const isPreconditionFailed = (err: unknown): boolean =>
  nameOf(err) === 'PreconditionFailed' || statusOf(err) === 412;

/** ETags come quoted from S3; we store and compare them unquoted. */
export const normalizeEtag = (etag: string | undefined): string => (etag ?? '').replace(/^"|"$/g, '');

/** Every object under `prefix`, page by page (no Delimiter: s3rver's delimiter listing misses deeper keys). */
export async function* listAll(s3: S3Client, bucket: string, prefix: string): AsyncGenerator<ListedObject> {
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      if (o.Key === undefined) continue;
      yield { key: o.Key, size: o.Size ?? 0, etag: normalizeEtag(o.ETag), lastModified: o.LastModified };
    }
    if (page.IsTruncated && !page.NextContinuationToken) {
      // Stopping here would return a silently partial listing.
      throw new JobArchiveError(`listing ${prefix} is truncated but has no continuation token`);
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

export const listAllArray = async (s3: S3Client, bucket: string, prefix: string): Promise<ListedObject[]> => {
  const out: ListedObject[] = [];
  for await (const o of listAll(s3, bucket, prefix)) out.push(o);
  return out;
};

export interface FetchedObject {
  readonly bytes: Buffer;
  readonly etag: string;
  readonly size: number;
  readonly metadata: Record<string, string>;
}

/** The body's bytes, as a Buffer over the array the SDK collected them in (no second copy). */
const readBody = async (out: GetObjectCommandOutput): Promise<Buffer> => {
  if (!out.Body) return Buffer.alloc(0);
  const bytes = await out.Body.transformToByteArray();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
};

/**
 * GET an object (or an explicit `bytes=start-end` range — never a suffix range, which s3rver gets
 * wrong). Returns null when it does not exist; other errors (InvalidObjectState …) propagate.
 */
export const getObjectBytes = async (
  s3: S3Client,
  bucket: string,
  key: string,
  range?: { offset: number; length: number },
): Promise<FetchedObject | null> => {
  try {
    const out = await s3.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: key,
        ...(range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {}),
      }),
    );
    const bytes = await readBody(out);
    return { bytes, etag: normalizeEtag(out.ETag), size: bytes.length, metadata: out.Metadata ?? {} };
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
};

/**
 * PutObject that only succeeds if the object is still at `expectEtag` (or absent when null).
 * S3 enforces If-Match / If-None-Match (the local s3rver too: infra/local/s3rver-entry.cjs); a 412, or
 * a 404 for an If-Match whose object is gone, becomes ConcurrentModificationError so callers re-read
 * and retry.
 */
export const putConditional = async (
  s3: S3Client,
  input: PutObjectCommandInput & { Bucket: string; Key: string },
  expectEtag: string | null,
): Promise<string> => {
  try {
    const out = await s3.send(
      new PutObjectCommand({
        ...input,
        ...(expectEtag === null ? { IfNoneMatch: '*' } : { IfMatch: `"${expectEtag}"` }),
      }),
    );
    return normalizeEtag(out.ETag);
  } catch (err) {
    if (
      isPreconditionFailed(err) ||
      nameOf(err) === 'ConditionalRequestConflict' ||
      statusOf(err) === 409 ||
      (expectEtag !== null && isNotFound(err))
    ) {
      throw new ConcurrentModificationError(input.Key, { cause: err });
    }
    throw err;
  }
};

/** PUT a JSON document (run scratch, staging manifests): plain JSON, `application/json`. */
/**
 * A JSON document the archiver wrote (the counterpart of putJson): its parsed value, null when there
 * is no such object; a body that is not JSON is a CorruptObjectError naming the key and `what`.
 */
export const getJson = async (
  target: { readonly s3: S3Client; readonly bucket: string },
  key: string,
  what: string,
): Promise<unknown | null> => {
  const got = await getObjectBytes(target.s3, target.bucket, key);
  if (!got) return null;
  try {
    return JSON.parse(Buffer.from(got.bytes).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, `${what} is not JSON`, { cause: err });
  }
};

export const putJson = async (
  target: { readonly s3: S3Client; readonly bucket: string },
  key: string,
  doc: unknown,
): Promise<void> => {
  await target.s3.send(
    new PutObjectCommand({
      Bucket: target.bucket,
      Key: key,
      Body: JSON.stringify(doc),
      ContentType: 'application/json',
    }),
  );
};

/** PUT bytes as they are (run scratch such as a plan page's JSONL files). */
export const putBytes = async (
  target: { readonly s3: S3Client; readonly bucket: string },
  key: string,
  body: Uint8Array,
  contentType: string,
): Promise<void> => {
  await target.s3.send(
    new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: body, ContentType: contentType }),
  );
};
