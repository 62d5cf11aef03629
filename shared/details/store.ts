import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { mapLimit } from '../concurrency';
import { InvalidInputError } from '../errors';
import { validateJobId, validateShopId } from '../ids';
import { isNotFound, listAll, normalizeEtag } from '../s3/objects';
import { checkSetting, SETTINGS } from '../settings';
import { decodeFlushBody, decodePlatformData, encodeFlushBody, encodePlatformData } from './codec';
import type { JsonObject } from './json';
import {
  classifyJobKey,
  detailsKey,
  type JobObjectKind,
  jobPrefix,
  parseFlushKey,
  platformDataKey,
} from './keys';
import { JobDetailsAccumulator } from './merge';
import type { JobDetails, JobDetailsPayload } from './payload';

/** S3 user metadata on every hot object: attributes it to a shop/job after the DynamoDB row expired. */
export const META_SHOP_ID = 'shop-id';
export const META_JOB_ID = 'job-id';

export interface JobDetailsStoreOptions {
  /** Parallel GETs per `readAllDetails` (default 32; the entry point passes `config().readConcurrency`). */
  readonly readConcurrency?: number;
}

/** An object as identified by S3: enough to say later exactly which bytes were read or written. */
export interface ObjectRef {
  readonly key: string;
  readonly size: number;
  /** Unquoted, as everywhere in this package (`normalizeEtag`); undefined only if S3 omitted it. */
  readonly etag: string | undefined;
}

/** One listed object under a job's prefix. */
export interface JobObject extends ObjectRef {
  readonly kind: JobObjectKind;
  readonly lastModified: Date | undefined;
}

/** One flush object read back: the decoded payload plus the raw bytes, for hashing/bundling. */
export interface FlushObject extends ObjectRef {
  readonly payload: JobDetailsPayload;
  readonly bytes: Uint8Array;
  /** The object's user metadata as the GET returned it (`shop-id`, `job-id`): no extra request. */
  readonly metadata: Readonly<Record<string, string>>;
}

export interface JobDetailsWithSources {
  readonly details: JobDetails;
  /** The flush objects merged into `details`, in listing (key) order, with the ETag of the GET. */
  readonly sources: readonly ObjectRef[];
}

/**
 * Hot-path store for per-job details (seed Phase 1 `JobDetailsStore`). Writers take the shop id too,
 * only for the object metadata; readers need just the job id because the hot layout has no shop in
 * the key. Every id is validated before it becomes a key, so a bad one fails with no request sent.
 */
export class JobDetailsStore {
  static readonly detailsKey = detailsKey;
  static readonly platformDataKey = platformDataKey;
  static readonly jobPrefix = jobPrefix;

  private readonly readConcurrency: number;

  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    opts: JobDetailsStoreOptions = {},
  ) {
    if (typeof bucket !== 'string' || bucket.trim() === '') {
      throw new InvalidInputError(
        'bucket',
        'must be a non-empty bucket name (use getJobDetailsStore for "unset")',
      );
    }
    const c = checkSetting('readConcurrency', opts.readConcurrency ?? SETTINGS.readConcurrency.default);
    this.readConcurrency = c;
  }

  /**
   * Gzip + PutObject of one flush. Idempotent on the flush id: the key derives from it and the bytes
   * are deterministic, so a retried flush re-PUTs an identical object (same ETag).
   */
  async writeFlush(
    shopId: string,
    jobId: string,
    flushId: string,
    payload: JobDetailsPayload,
  ): Promise<ObjectRef> {
    const metadata = this.metadata(shopId, jobId);
    return this.put(detailsKey(jobId, flushId), encodeFlushBody(payload), metadata, 'gzip');
  }

  /** PutObject of the job's platform data (a JSON object, plain JSON); overwrites the previous one. */
  async writePlatformData(shopId: string, jobId: string, data: JsonObject): Promise<ObjectRef> {
    const metadata = this.metadata(shopId, jobId);
    return this.put(platformDataKey(jobId), encodePlatformData(data), metadata);
  }

  /**
   * Every object under `job-details/{job_id}/`, in key order. Paginated and without a Delimiter, so
   * jobs with more than 1,000 objects (and any nested keys) are listed in full.
   */
  async listJobObjects(jobId: string): Promise<JobObject[]> {
    const out: JobObject[] = [];
    for await (const o of listAll(this.s3, this.bucket, jobPrefix(jobId))) {
      out.push({ ...o, kind: classifyJobKey(jobId, o.key) });
    }
    return out;
  }

  /**
   * GETs and decodes one flush object. `key` must be a flush key (InvalidInputError otherwise, before
   * any request); an object that does not decode is a CorruptObjectError naming it. A key that
   * vanished (e.g. deleted by the archiver after listing) surfaces as S3's own NoSuchKey.
   */
  async readFlushObject(key: string): Promise<FlushObject> {
    if (parseFlushKey(key) === undefined) {
      throw new InvalidInputError('key', `${JSON.stringify(key)} is not a job-details flush key`);
    }
    const { bytes, etag, metadata } = await this.getBytes(key);
    return { key, size: bytes.length, etag, bytes, metadata, payload: decodeFlushBody(bytes, key) };
  }

  /** All flushes of the job merged (list prefix, bounded parallel GETs, merge by reason, dedupe). */
  async readAllDetails(jobId: string): Promise<JobDetails> {
    return (await this.readAllDetailsWithSources(jobId)).details;
  }

  /** `readAllDetails` plus which objects (key, size, ETag as read) went into the result. */
  async readAllDetailsWithSources(jobId: string): Promise<JobDetailsWithSources> {
    const flushes = (await this.listJobObjects(jobId)).filter((o) => o.kind === 'flush');
    const read = await mapLimit(flushes, this.readConcurrency, async (o) => {
      const { key, size, etag, payload } = await this.readFlushObject(o.key);
      return { ref: { key, size, etag }, payload };
    });
    // Merged in key order (not completion order), so the result is deterministic.
    const acc = new JobDetailsAccumulator();
    for (const r of read) acc.add(r.payload);
    return { details: acc.result(), sources: read.map((r) => r.ref) };
  }

  /** The job's platform data, or null when none was written. */
  async readPlatformData(jobId: string): Promise<JsonObject | null> {
    const key = platformDataKey(jobId);
    let bytes: Uint8Array;
    try {
      ({ bytes } = await this.getBytes(key));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    return decodePlatformData(bytes, key);
  }

  private metadata(shopId: string, jobId: string): Record<string, string> {
    return { [META_SHOP_ID]: validateShopId(shopId), [META_JOB_ID]: validateJobId(jobId) };
  }

  private async put(
    key: string,
    body: Uint8Array,
    metadata: Record<string, string>,
    contentEncoding?: 'gzip',
  ): Promise<ObjectRef> {
    const res = await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: 'application/json',
        ...(contentEncoding ? { ContentEncoding: contentEncoding } : {}),
        Metadata: metadata,
      }),
    );
    return { key, size: body.length, etag: normalizeEtag(res.ETag) };
  }

  private async getBytes(
    key: string,
  ): Promise<{ bytes: Uint8Array; etag: string | undefined; metadata: Record<string, string> }> {
    const res = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
    return { bytes, etag: normalizeEtag(res.ETag), metadata: res.Metadata ?? {} };
  }
}
