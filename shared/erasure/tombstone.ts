import type { S3Client } from '@aws-sdk/client-s3';
import { CorruptObjectError } from '../errors';
import { validateShopId } from '../ids';
import { getObjectBytes, listAll, putJson } from '../s3/objects';
import { ERASURE_PREFIX } from './ledger';

/**
 * A forgotten shop's tombstone: `job-details-erasure/shops/{shop}.json`, written by forget before it
 * deletes anything and kept for good. The archiver refuses every job of the shop completed at or
 * before `forgottenAt` (Plan drops them, ArchiveBatch checks again before it archives and before it
 * commits), so a run that planned the shop before the forget cannot bring its data back. The runs read
 * that from the watermark's erasure summary (summary.ts), which forget writes right after this. Jobs completed
 * later (the shop installed the app again) are archived as usual. Like the ledger, it names the shop:
 * that is the record of the erasure, and nothing else in the bucket does after it.
 */
export const TOMBSTONES_PREFIX = `${ERASURE_PREFIX}shops/`;
export const TOMBSTONE_FORMAT = 'job-details-archive/forgotten-shop@1';

export interface Tombstone {
  readonly format: typeof TOMBSTONE_FORMAT;
  readonly shopId: string;
  /** The forget request's receipt time: jobs completed at or before it are the shop's forgotten data. */
  readonly forgottenAt: string;
  readonly requestId: string;
}

export const tombstoneKey = (shopId: string): string => `${TOMBSTONES_PREFIX}${validateShopId(shopId)}.json`;

interface Target {
  readonly s3: S3Client;
  readonly bucket: string;
}

const parse = (key: string, bytes: Buffer): Tombstone => {
  let v: Partial<Tombstone> | null;
  try {
    v = JSON.parse(bytes.toString('utf8')) as Partial<Tombstone> | null;
  } catch (err) {
    throw new CorruptObjectError(key, 'tombstone is not JSON', { cause: err });
  }
  if (
    v?.format !== TOMBSTONE_FORMAT ||
    typeof v.shopId !== 'string' ||
    typeof v.forgottenAt !== 'string' ||
    Number.isNaN(Date.parse(v.forgottenAt)) ||
    typeof v.requestId !== 'string'
  )
    throw new CorruptObjectError(key, `not a ${TOMBSTONE_FORMAT} document`);
  return v as Tombstone;
};

export const readTombstone = async (t: Target, shopId: string): Promise<Tombstone | null> => {
  const key = tombstoneKey(shopId);
  const got = await getObjectBytes(t.s3, t.bucket, key);
  return got ? parse(key, got.bytes) : null;
};

/** Writes (or moves forward) a shop's tombstone: a later forget of the same shop wins. */
export const writeTombstone = async (t: Target, stone: Omit<Tombstone, 'format'>): Promise<Tombstone> => {
  const had = await readTombstone(t, stone.shopId);
  if (had && had.forgottenAt >= stone.forgottenAt) return had;
  const doc: Tombstone = { format: TOMBSTONE_FORMAT, ...stone };
  await putJson(t, tombstoneKey(stone.shopId), doc);
  return doc;
};

/** Every tombstone, by shop: one LIST per 1,000 forgotten shops and a GET each. */
export const readTombstones = async (t: Target): Promise<Map<string, Tombstone>> => {
  const out = new Map<string, Tombstone>();
  for await (const o of listAll(t.s3, t.bucket, TOMBSTONES_PREFIX)) {
    const got = await getObjectBytes(t.s3, t.bucket, o.key);
    if (!got) continue;
    const stone = parse(o.key, got.bytes);
    out.set(stone.shopId, stone);
  }
  return out;
};
