import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { Semaphore } from '../../../concurrency';
import { mapLimit } from '../../../concurrency';
import type { JobDetails } from '../../../details';
import {
  decodeFlushBody,
  decodePlatformData,
  type JobDetailsPayload,
  type JobObject,
  type JsonObject,
  META_SHOP_ID,
  mergeAllJobDetails,
} from '../../../details';
import { CorruptObjectError, JobArchiveError, SourceReadError } from '../../../errors';
import { getHotObjectBytes } from '../../../s3/lean-get';
import { isNotFound } from '../../../s3/objects';
import { type SourceObject, sha256Hex } from '../../format';
import { reasonOf } from '../caps';
import type { StepDeps } from '../context';

/**
 * Reading one job's hot objects for its archive record. Anything that is not exactly what the writer
 * produces (a corrupt object, an unexpected key, an object that vanished mid-read) quarantines the job:
 * it is reported and its sources are kept. Other errors (throttling, access) propagate and fail the
 * group, which is retried as a whole.
 */
export type SourceRead =
  | {
      readonly kind: 'ok';
      readonly details: JobDetails;
      readonly platformData: JsonObject | null;
      readonly sources: SourceObject[];
      readonly bytesIn: number;
      /** Objects under the prefix that another shop's `shop-id` names: not read into the record, kept. */
      readonly foreign: readonly ForeignObject[];
    }
  | {
      readonly kind: 'quarantine';
      readonly reason: string;
      /** A source was gone when read: an overlapping run may have archived and deleted it. */
      readonly vanished?: true;
    };

/**
 * What the listing alone already rules out (the dry run stops here), before a byte is read: a key the
 * writer never writes, an empty object, or one larger than `maxSourceBytes` — a flush object is
 * decoded whole, and decoded JSON takes ~20× its gzip size in memory, so one giant object must not
 * decide whether the function fits in its memory (settings: `maxSourceMb`).
 */
export const listingProblem = (listed: readonly JobObject[], maxSourceBytes: number): string | null => {
  for (const o of listed) {
    if (o.kind === 'other') return `unexpected key ${o.key}`;
    if (o.size === 0) return `empty object ${o.key} (0 bytes)`;
    if (o.size > maxSourceBytes) {
      return `oversize object ${o.key}: ${o.size} bytes, over the limit of ${maxSourceBytes} (JDA_MAX_SOURCE_MB)`;
    }
  }
  return null;
};

/** A hot object whose `shop-id` metadata names another shop (job ids are unique per shop only). */
export interface ForeignObject {
  readonly key: string;
  readonly shopId: string;
}

/** Why a foreign object is reported (as a quarantine item of the job: the object, not the job). */
export const foreignReason = (o: ForeignObject, shopId: string): string =>
  `object ${o.key} belongs to shop ${o.shopId} (shop-id metadata), not ${shopId}: another shop's job ` +
  'with the same id; left in place, not archived with this job';

class VanishedError extends Error {
  constructor(readonly key: string) {
    super(`object ${key} vanished while being read`);
  }
}

interface ReadObject {
  readonly source: SourceObject;
  /** Set when the object is another shop's: nothing else of it is used. */
  readonly foreign?: string;
  readonly payload?: JobDetailsPayload;
  readonly platformData?: JsonObject;
}

/**
 * What a failed read means. Not found: the object vanished (an overlapping run archived and deleted
 * it). No answer from S3 at all (Node's "aborted" when a response is cut off mid-body — what a delete
 * by an overlapping run under a streaming GET looks like — or a reset socket): the object is checked
 * with a HEAD; gone is vanished, still there is a SourceReadError naming it. S3's own answers
 * (throttling, access) and our errors (a corrupt body) stay what they are.
 */
const readFailure = async (deps: StepDeps, key: string, err: unknown): Promise<unknown> => {
  if (isNotFound(err)) return new VanishedError(key);
  const answered = (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  if (err instanceof JobArchiveError || answered !== undefined) return err;
  try {
    await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key }));
  } catch (head) {
    if (isNotFound(head)) return new VanishedError(key);
  }
  return new SourceReadError(key, err);
};

/**
 * One GET per object: its body and its user metadata come together, so attributing it to a shop costs
 * no HEAD. An object whose `shop-id` names another shop is not decoded (its bytes are not ours to
 * judge); one without the metadata (written before the contract required it) is the asking shop's.
 */
const readOne = async (
  deps: StepDeps,
  o: JobObject,
  gate: Semaphore,
  shopId: string,
): Promise<ReadObject> => {
  const got = await gate
    .run(() => getHotObjectBytes(deps.s3, deps.bucket, o.key))
    .catch(async (err: unknown) => {
      throw await readFailure(deps, o.key, err);
    });
  if (!got) throw new VanishedError(o.key);
  const source = { key: o.key, size: got.bytes.length, etag: got.etag, sha256: sha256Hex(got.bytes) };
  const owner = got.metadata[META_SHOP_ID];
  if (owner !== undefined && owner !== shopId) return { source, foreign: owner };
  return o.kind === 'flush'
    ? { source, payload: decodeFlushBody(got.bytes, o.key) }
    : { source, platformData: decodePlatformData(got.bytes, o.key) };
};

/**
 * GETs (at most `gate.size` requests in flight across every job sharing the gate), hashes the stored
 * bytes, decodes and merges in key order.
 */
export const readJobSources = async (
  deps: StepDeps,
  listed: readonly JobObject[],
  gate: Semaphore,
  shopId: string,
): Promise<SourceRead> => {
  const problem = listingProblem(listed, Math.floor(deps.settings.maxSourceMb * 1024 * 1024));
  if (problem) return { kind: 'quarantine', reason: problem };
  let read: ReadObject[];
  try {
    read = await mapLimit(listed, gate.size, (o) => readOne(deps, o, gate, shopId));
  } catch (err) {
    if (err instanceof CorruptObjectError) return { kind: 'quarantine', reason: reasonOf(err) };
    if (err instanceof VanishedError) return { kind: 'quarantine', reason: err.message, vanished: true };
    throw err;
  }
  const foreign = read.flatMap((r) => (r.foreign ? [{ key: r.source.key, shopId: r.foreign }] : []));
  const own = read.filter((r) => r.foreign === undefined);
  const payloads = own.flatMap((r) => (r.payload ? [r.payload] : []));
  const platform = own.find((r) => r.platformData !== undefined)?.platformData ?? null;
  return {
    kind: 'ok',
    details: mergeAllJobDetails(payloads),
    platformData: platform,
    // Only the shop's own objects are recorded, so the delete step (which removes exactly what the
    // entry records) never touches another shop's.
    sources: own.map((r) => r.source),
    bytesIn: own.reduce((n, r) => n + r.source.size, 0),
    foreign,
  };
};
