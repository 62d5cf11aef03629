import type { S3Client } from '@aws-sdk/client-s3';
import type { ArchiveNotRestoredError } from '../errors';
import { type FetchedObject, getObjectBytes } from '../s3/objects';
import type { ReaderSettings } from './query';
import { ReadLedger } from './read-ledger';

/** Per-read state: a client that counts every call, the ledger, and restores already requested. */
export interface ReadContext {
  /** Counts each `send` into `ledger`; library code that takes an S3Client (the hot store) can use it. */
  readonly s3: S3Client;
  readonly bucket: string;
  readonly ledger: ReadLedger;
  readonly settings: ReaderSettings;
  /** One RestoreObject per part per read, even when several members of the part were wanted. */
  readonly restores: Map<string, Promise<ArchiveNotRestoredError>>;
  /** Part blocks an index read already fetched (a settled part's probed block), by `key@offset+length`. */
  readonly blocks: Map<string, Uint8Array>;
}

/**
 * The caller's client with `send` counted. A per-read wrapper (not middleware on the shared client)
 * so concurrent reads do not see each other's requests; it also counts calls that a mocked `send`
 * answers without running any middleware.
 */
export const countingClient = (s3: S3Client, ledger: ReadLedger): S3Client =>
  new Proxy(s3, {
    get(target, prop) {
      if (prop === 'send') {
        return (...args: Parameters<S3Client['send']>) => {
          ledger.request();
          return target.send(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

export const newReadContext = (s3: S3Client, bucket: string, settings: ReaderSettings): ReadContext => {
  const ledger = new ReadLedger();
  return { s3: countingClient(s3, ledger), bucket, ledger, settings, restores: new Map(), blocks: new Map() };
};

/** getObjectBytes through the counting client, adding the body's size to the ledger. */
export const fetchObject = async (
  ctx: ReadContext,
  key: string,
  range?: { offset: number; length: number },
): Promise<FetchedObject | null> => {
  const got = await getObjectBytes(ctx.s3, ctx.bucket, key, range);
  if (got) ctx.ledger.received(got.bytes.length);
  return got;
};
