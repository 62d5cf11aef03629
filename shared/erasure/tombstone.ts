import type { S3Client } from '@aws-sdk/client-s3';
import { ERASURE_PREFIX } from '../archive/format';
import { CorruptObjectError } from '../errors';
import { validateShopId } from '../ids';
import { getObjectBytes, listAll, putJson } from '../s3/objects';
import { shopDigest } from './summary';

/**
 * A forgotten shop's tombstone: `job-details-erasure/shops/{shopDigest(shop)}.json` (summary.ts: the
 * shop is not in its key or body — the request it names does), written by forget before it deletes
 * anything and kept for good. The archiver refuses every job of the shop completed at or
 * before `forgottenAt` (Plan drops them, ArchiveBatch checks again before it archives and before it
 * commits), so a run that planned the shop before the forget cannot bring its data back. The runs read
 * that from the watermark's erasure summary (summary.ts), which forget writes right after this. Jobs completed
 * later (the shop installed the app again) are archived as usual. Only the ledger's request names the
 * shop after its forget: the receipt must.
 */
export const TOMBSTONES_PREFIX = `${ERASURE_PREFIX}shops/`;
export const TOMBSTONE_FORMAT = 'job-details-archive/forgotten-shop@2';

export interface Tombstone {
  readonly format: typeof TOMBSTONE_FORMAT;
  /** shopDigest of the shop's id. */
  readonly shop: string;
  /** The forget request's receipt time: jobs completed at or before it are the shop's forgotten data. */
  readonly forgottenAt: string;
  readonly requestId: string;
}

export const tombstoneKey = (shopId: string): string =>
  `${TOMBSTONES_PREFIX}${shopDigest(validateShopId(shopId))}.json`;

interface Target {
  readonly s3: S3Client;
  readonly bucket: string;
}

export const parseTombstone = (key: string, bytes: Buffer): Tombstone => {
  let v: Partial<Tombstone> | null;
  try {
    v = JSON.parse(bytes.toString('utf8')) as Partial<Tombstone> | null;
  } catch (err) {
    throw new CorruptObjectError(key, 'tombstone is not JSON', { cause: err });
  }
  if (
    v?.format !== TOMBSTONE_FORMAT ||
    typeof v.shop !== 'string' ||
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
  return got ? parseTombstone(key, got.bytes) : null;
};

/** Writes (or moves forward) a shop's tombstone: a later forget of the same shop wins. */
export const writeTombstone = async (
  t: Target,
  stone: { shopId: string; forgottenAt: string; requestId: string },
): Promise<Tombstone> => {
  const had = await readTombstone(t, stone.shopId);
  if (had && had.forgottenAt >= stone.forgottenAt) return had;
  const doc: Tombstone = {
    format: TOMBSTONE_FORMAT,
    shop: shopDigest(stone.shopId),
    forgottenAt: stone.forgottenAt,
    requestId: stone.requestId,
  };
  await putJson(t, tombstoneKey(stone.shopId), doc);
  return doc;
};

/** Every tombstone: one LIST per 1,000 forgotten shops and a GET each (the shop: its request's). */
export const readTombstones = async (t: Target): Promise<Tombstone[]> => {
  const out: Tombstone[] = [];
  for await (const o of listAll(t.s3, t.bucket, TOMBSTONES_PREFIX)) {
    const got = await getObjectBytes(t.s3, t.bucket, o.key);
    if (got) out.push(parseTombstone(o.key, got.bytes));
  }
  return out;
};
