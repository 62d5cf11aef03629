import { mapLimit } from '../concurrency';
import {
  decodeFlushBody,
  decodePlatformData,
  type JobDetailsPayload,
  JobDetailsStore,
  type JsonObject,
  META_SHOP_ID,
  platformDataKey,
} from '../details';
import type { FetchedObject } from '../s3/objects';
import type { ResolvedQuery } from './query';
import { fetchObject, type ReadContext } from './s3-context';

/**
 * The hot side: `job-details/{job_id}/`, listed with the store's own listing and read object by
 * object. The hot keys carry no shop, so an object whose `shop-id` metadata names another shop is
 * left out: a job id asked for under the wrong shop reads as absent, as it does in the archive.
 * (Objects without the metadata are accepted.)
 */
export interface HotRead {
  /** Decoded flushes, in key order. */
  readonly flushes: ReadonlyArray<{ readonly key: string; readonly payload: JobDetailsPayload }>;
  readonly platformData: JsonObject | null;
  /** Keys of the objects that contributed. */
  readonly keys: readonly string[];
}

const ofShop = (got: FetchedObject, shopId: string): boolean => {
  const owner = got.metadata[META_SHOP_ID];
  return owner === undefined || owner === shopId;
};

/** platform-data.json alone (1 GET); null when absent or another shop's. */
export const readHotPlatformData = async (ctx: ReadContext, q: ResolvedQuery): Promise<JsonObject | null> => {
  const key = platformDataKey(q.jobId);
  const got = await fetchObject(ctx, key);
  return got && ofShop(got, q.shopId) ? decodePlatformData(got.bytes, key) : null;
};

/**
 * List the job's prefix, GET every flush (bounded parallel) and, when asked and listed,
 * platform-data.json. A flush deleted between the listing and its GET is skipped: the archiver
 * deletes only after committing, and callers order their index reads so they see that commit.
 */
export const readHot = async (
  ctx: ReadContext,
  q: ResolvedQuery,
  withPlatformData: boolean,
): Promise<HotRead> => {
  const listed = await new JobDetailsStore(ctx.s3, ctx.bucket).listJobObjects(q.jobId);
  const flushKeys = listed.filter((o) => o.kind === 'flush').map((o) => o.key);
  const hasPlatformData = withPlatformData && listed.some((o) => o.kind === 'platform-data');

  const [flushes, platformData] = await Promise.all([
    mapLimit(flushKeys, ctx.settings.readConcurrency, async (key) => {
      const got = await fetchObject(ctx, key);
      return got && ofShop(got, q.shopId) ? { key, payload: decodeFlushBody(got.bytes, key) } : null;
    }),
    hasPlatformData ? readHotPlatformData(ctx, q) : Promise.resolve(null),
  ]);
  const read = flushes.filter((f) => f !== null);
  return {
    flushes: read,
    platformData,
    keys: [...read.map((f) => f.key), ...(platformData ? [platformDataKey(q.jobId)] : [])],
  };
};
