import { gzipSync } from 'node:zlib';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mapLimit } from '../../../shared/concurrency';
import { GZIP_LEVEL } from '../../../shared/details';

/**
 * The I/O floor of archiving a set of hot objects in this store: list them, GET them at the
 * archiver's concurrency, gzip their bytes once (at the archive's level), PUT one object, and
 * DeleteObjects them. Whatever the archiver does beyond that is its own overhead.
 */
export const ioFloor = async (
  s3: S3Client,
  bucket: string,
  prefix: string,
  concurrency: number,
): Promise<{ seconds: number; objects: number; bytes: number; requests: number }> => {
  const t0 = performance.now();
  let requests = 0;
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    requests++;
    for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const bodies = await mapLimit(keys, concurrency, async (Key) => {
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
    requests++;
    return Buffer.from(await (got.Body?.transformToByteArray() ?? new Uint8Array()));
  });
  const all = Buffer.concat(bodies);
  const gz = gzipSync(all, { level: GZIP_LEVEL });
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'floor/bundle.gz', Body: gz }));
  requests++;
  for (let i = 0; i < keys.length; i += 1000) {
    await s3.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
      }),
    );
    requests++;
  }
  return { seconds: (performance.now() - t0) / 1000, objects: keys.length, bytes: all.length, requests };
};
