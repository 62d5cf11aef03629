import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { JobArchiveError } from '../../../errors';
import { normalizeEtag } from '../../../s3/objects';

/** Multipart part size: the upload buffers at most QUEUE × PART_SIZE, whatever the part's total. */
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE = 2;

type Settled = { ok: true; etag: string | undefined } | { ok: false; err: unknown };

/**
 * Streams a part into S3 as it is built: members go into a PassThrough that `lib-storage` Upload
 * consumes, and `write` waits for 'drain' when the stream is full, so a month of any size never sits
 * in memory. `If-None-Match: *` (on the PUT or the CompleteMultipartUpload) keeps parts write-once.
 */
export class PartUpload {
  private readonly body = new PassThrough({ highWaterMark: 1024 * 1024 });
  private readonly upload: Upload;
  private readonly settled: Promise<Settled>;
  private ended = false;
  private written = 0;

  constructor(
    s3: S3Client,
    bucket: string,
    readonly key: string,
  ) {
    this.upload = new Upload({
      client: s3,
      params: {
        Bucket: bucket,
        Key: key,
        Body: this.body,
        ContentType: 'application/gzip',
        IfNoneMatch: '*',
      },
      partSize: PART_SIZE,
      queueSize: QUEUE,
      leavePartsOnError: false,
    });
    this.settled = this.upload.done().then(
      (out): Settled => ({ ok: true, etag: (out as { ETag?: string }).ETag }),
      (err: unknown): Settled => ({ ok: false, err }),
    );
  }

  /** PartBuilder's sink: resolves once the bytes are accepted (after 'drain' when the buffer is full). */
  readonly write = async (member: Buffer): Promise<void> => {
    if (this.ended) throw new JobArchiveError(`part ${this.key}: write after end`);
    this.written += member.length;
    if (this.body.write(member)) return;
    await Promise.race([
      once(this.body, 'drain'),
      this.settled.then((s) => {
        throw s.ok
          ? new JobArchiveError(`part ${this.key}: upload finished before the part was complete`)
          : s.err;
      }),
    ]);
  };

  /**
   * Ends the body and waits for the upload: the ETag S3 answered and the bytes sent. No read-back here:
   * verify GETs the whole part next and checks both against the manifest.
   */
  async finish(): Promise<{ etag: string; size: number }> {
    this.ended = true;
    this.body.end();
    const s = await this.settled;
    if (!s.ok) throw s.err;
    if (!s.etag) throw new JobArchiveError(`part ${this.key}: the upload returned no ETag`);
    return { etag: normalizeEtag(s.etag), size: this.written };
  }

  /** Stops an unfinished upload (a multipart upload is aborted, so no parts linger). */
  async abort(): Promise<void> {
    this.ended = true;
    await this.upload.abort().catch(() => undefined);
    this.body.destroy();
    await this.settled;
  }
}
