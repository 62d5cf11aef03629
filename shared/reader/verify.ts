import { decodeBlock, type JobRecord, parsePartKey, parseSharedPartKey, shopLines } from '../archive/format';
import { CorruptObjectError } from '../errors';
import type { ArchiveEntry } from './entries';

/**
 * Checks a member read back by a ranged GET against the index entry that pointed at it. Pure: the
 * bytes in, the record out, or a CorruptObjectError naming the part and the byte range.
 */

const where = (partKey: string, offset: number, length: number): string =>
  `${partKey} bytes ${offset}-${offset + length - 1}`;

const checkLength = (bytes: Uint8Array, at: string, length: number): void => {
  if (bytes.length !== length) {
    throw new CorruptObjectError(
      at,
      `expected ${length} bytes, got ${bytes.length} (the part is shorter than its index says)`,
    );
  }
};

/**
 * A shared part's block may hold other shops' lines (blocks cut across shops, shared-blocks.ts): only
 * the shop's own lines are searched, so another shop's record or its platform data ref "1" is never
 * taken for this shop's.
 */
const sharedNarrow = (partKey: string, shopId: string) =>
  parseSharedPartKey(partKey) ? { narrow: (inflated: Buffer) => shopLines(inflated, shopId) } : {};

/** The job record at `a`: the sha256 the index recorded, and the same shop and job. */
export const checkJobMember = (
  bytes: Uint8Array,
  a: ArchiveEntry,
  shopId: string,
  jobId: string,
): JobRecord => {
  const e = a.entry;
  const at = where(a.partKey, e.offset, e.length);
  checkLength(bytes, at, e.length);
  // Job records of own parts leave their shop to the part: the part key's (entriesFromIndex tied it to the index).
  // A shared part's segment is the shop's its shared index names (entriesFromIndex checked that).
  const partShop = parseSharedPartKey(a.partKey) ? shopId : (parsePartKey(a.partKey)?.shopId ?? '');
  const { record } = decodeBlock(bytes, at, e.line, {
    want: { type: 'job', jobId },
    shopId: partShop,
    ...sharedNarrow(a.partKey, shopId),
  });
  // The block's CRC-32 and the ids below prove the record.
  if (record.type !== 'job')
    throw new CorruptObjectError(at, `expected a job record, found a ${record.type} record`);
  if (record.job_id !== jobId || record.shop_id !== shopId) {
    throw new CorruptObjectError(
      at,
      `record is job ${record.job_id} of shop ${record.shop_id}, not ${jobId} of ${shopId}`,
    );
  }
  return record;
};

/**
 * The platform data at `a.entry.platform_data`, with the ref the job record names (a part-local
 * ordinal; the block's CRC-32 proves the bytes).
 */
export const checkPlatformMember = (
  bytes: Uint8Array,
  a: ArchiveEntry,
  jobRef: string | null,
  shopId: string,
): unknown => {
  const pd = a.entry.platform_data;
  if (pd === null) throw new CorruptObjectError(a.indexKey, 'entry has no platform data');
  const at = where(a.partKey, pd.offset, pd.length);
  checkLength(bytes, at, pd.length);
  const ref = pd.ref ?? jobRef;
  if (ref === null) throw new CorruptObjectError(at, 'the job record names no platform data');
  const { record } = decodeBlock(bytes, at, pd.line, {
    want: { type: 'platform_data', ref },
    shopId,
    ...sharedNarrow(a.partKey, shopId),
  });
  if (record.type !== 'platform_data') {
    throw new CorruptObjectError(at, `expected a platform_data record, found a ${record.type} record`);
  }
  if (record.ref !== ref) {
    throw new CorruptObjectError(at, `platform data does not match ref ${ref}`);
  }
  return record.data;
};
