import type { S3Client } from '@aws-sdk/client-s3';
import { JobDetailsStore, type JobDetailsStoreOptions } from './store';

/**
 * The seed's empty-bucket contract: the one place that decides "is the details bucket configured".
 * An unset or blank bucket gives null and writers skip the S3 leg (the kill switch).
 *
 * Lazy and memoized per bucket. Lookup and construction are synchronous, so async callers racing on
 * first use (Promise.all of many handlers) cannot interleave inside it: they all get the same store
 * and `s3Factory` runs once per provider. `opts` only matter on the call that builds the store.
 */
export type JobDetailsStoreGetter = (
  s3Factory: () => S3Client,
  bucket: string | undefined,
  opts?: JobDetailsStoreOptions,
) => JobDetailsStore | null;

export const createJobDetailsStoreProvider = (): JobDetailsStoreGetter & { reset(): void } => {
  let client: S3Client | undefined;
  const stores = new Map<string, JobDetailsStore>();

  const get: JobDetailsStoreGetter = (s3Factory, bucket, opts) => {
    if (bucket === undefined || bucket.trim() === '') return null;
    let store = stores.get(bucket);
    if (!store) {
      client ??= s3Factory();
      store = new JobDetailsStore(client, bucket, opts);
      stores.set(bucket, store);
    }
    return store;
  };
  return Object.assign(get, {
    reset: (): void => {
      client = undefined;
      stores.clear();
    },
  });
};

const processProvider = createJobDetailsStoreProvider();

/** The process-wide store: `getJobDetailsStore(() => s3ClientFrom(cfg), config().detailsBucket)`. */
export const getJobDetailsStore: JobDetailsStoreGetter = processProvider;

/** Forget the process-wide store (tests that change the bucket between cases). */
export const resetJobDetailsStore = (): void => processProvider.reset();
