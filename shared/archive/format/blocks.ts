import { parseJsonExact } from '../../details/json';
import { CorruptObjectError } from '../../errors';
import { deflateBlock, inflateBlocks } from './codec';

const fail = (where: string, reason: string): never => {
  throw new CorruptObjectError(where, reason);
};

import { canonicalJson, sha256Hex } from './canonical-json';
import type { ByteRange } from './month-index';
import { parsePartRecord } from './record-shape';
import type { PartRecord, StoredJobRecord } from './records';

/**
 * Pure byte logic of parts: one record → one JSONL line → one gzip member. No I/O here; the archive
 * step streams these members into a multipart upload and the reader decodes one from a ranged GET.
 */
export interface EncodedBlock {
  /** The gzip member bytes, written to the part as is. */
  readonly member: Buffer;
  /** sha256 of the uncompressed line (JSON + "\n"): the record digest kept in the index. */
  readonly sha256: string;
  /** Uncompressed length of the line. */
  readonly lineBytes: number;
}

// One record as a block of its own (what a record longer than a block is; tests build such blocks).
export const encodeRecordBlock = (record: PartRecord): EncodedBlock => {
  const line = Buffer.from(`${canonicalJson(record)}\n`, 'utf8');
  return { member: deflateBlock(line), sha256: sha256Hex(line), lineBytes: line.length };
};

const isGzip = (b: Uint8Array): boolean => b.length >= 18 && b[0] === 0x1f && b[1] === 0x8b;

/**
 * Blocks: many records' lines share one gzip member of about BLOCK_BYTES uncompressed, so
 * the archive compresses across jobs, yet a record is still one ranged GET of one block away. A
 * line longer than that is a block of its own. The part stays a standard JSONL.gz.
 */
export const BLOCK_BYTES = 96 * 1024;

/** A block: one gzip member (codec.ts, deterministic) of whole JSONL lines. */
export const encodeBlock = (lines: Uint8Array, level?: number): Uint8Array => deflateBlock(lines, level);

/** The line of one record, and its digest (kept in the index and the manifest). */
export const encodeLine = (record: PartRecord | StoredJobRecord): { line: Buffer; sha256: string } => {
  const line = Buffer.from(`${canonicalJson(record)}\n`, 'utf8');
  return { line, sha256: sha256Hex(line) };
};

/** Inflates one member (a ranged GET's bytes); `where` names it in errors. */
export const inflateBlock = (bytes: Uint8Array, where: string): Buffer => {
  if (!isGzip(bytes)) throw new CorruptObjectError(where, 'not a gzip member');
  try {
    return inflateBlocks(bytes);
  } catch (err) {
    throw new CorruptObjectError(where, 'gzip member does not decompress', { cause: err });
  }
};

/**
 * The record on one line (exactly one JSONL line, newline-terminated). `shopId` is the part's, for
 * job records of own parts, which leave it out.
 */
export const decodeLine = (
  line: Buffer,
  where: string,
  shopId?: string,
): { record: PartRecord; sha256: string } => {
  const text = line.toString('utf8');
  if (!text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) {
    throw new CorruptObjectError(where, 'a record must be exactly one JSONL line');
  }
  // The payload parser (lossless numbers, bounded depth): a record reads back what was archived.
  const value = parseJsonExact(text, where, 'member');
  return { record: parsePartRecord(value, where, shopId), sha256: sha256Hex(line) };
};

/**
 * Every record of a block (a ranged GET's bytes), in line order: for a reader that must see them all
 * (a settled part's block, whose records settledEntry checks against the block's id range).
 */
export const blockRecords = (bytes: Uint8Array, where: string, shopId?: string): PartRecord[] =>
  inflateBlock(bytes, where)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l, i) => decodeLine(Buffer.from(`${l}\n`), `${where} line ${i}`, shopId).record);

/** Which record of a block a lookup wants (index entries name the block, not the line). */
export type WantedRecord =
  | { readonly type: 'job'; readonly jobId: string }
  | { readonly type: 'platform_data'; readonly ref: string };

/** Cheap text pre-filter: canonical JSON writes `"job_id":"…"` / `"ref":"…"` exactly so. */
const needle = (want: WantedRecord): Buffer =>
  Buffer.from(
    want.type === 'job' ? `"job_id":${JSON.stringify(want.jobId)}` : `"ref":${JSON.stringify(want.ref)}`,
    'utf8',
  );

/**
 * The wanted record in an inflated block, or undefined when the block does not hold it: the lines
 * holding its id as text are parsed until one is the record (a payload could contain the text too).
 * For a block that may hold it (a filter's or a directory's word, not an index entry's).
 */
const seekInBlock = (
  inflated: Buffer,
  where: string,
  want: WantedRecord,
  shopId?: string,
): { record: PartRecord; sha256: string } | undefined => {
  const text = needle(want);
  for (let at = inflated.indexOf(text); at >= 0; at = inflated.indexOf(text, at + 1)) {
    const start = inflated.lastIndexOf(0x0a, at) + 1;
    const end = inflated.indexOf(0x0a, at);
    if (end < 0) break;
    const decoded = decodeLine(inflated.subarray(start, end + 1), `${where} line ${start}`, shopId);
    const r = decoded.record;
    if (
      want.type === 'job'
        ? r.type === 'job' && r.job_id === want.jobId
        : r.type === 'platform_data' && r.ref === want.ref
    )
      return decoded;
    at = end;
  }
  return undefined;
};

/** The wanted record in an inflated block (seekInBlock). None → CorruptObjectError: the index said it is here. */
export const findInBlock = (
  inflated: Buffer,
  where: string,
  want: WantedRecord,
  shopId?: string,
): { record: PartRecord; sha256: string } =>
  seekInBlock(inflated, where, want, shopId) ??
  fail(where, `block holds no ${want.type === 'job' ? `job ${want.jobId}` : `platform data ${want.ref}`}`);

/**
 * The record of a block: at `line` (the builder's in-memory locator), found by `want` (what an index
 * entry names: the block alone), or the block's only line.
 */
export const decodeBlock = (
  bytes: Uint8Array,
  where: string,
  line?: ByteRange,
  find: {
    want?: WantedRecord;
    shopId?: string;
    /** The lines to search in the inflated block (a shared part's block: the shop's lines alone). */
    narrow?: (inflated: Buffer) => Buffer;
  } = {},
): { record: PartRecord; sha256: string } => {
  const whole = inflateBlock(bytes, where);
  const inflated = find.narrow && line === undefined ? find.narrow(whole) : whole;
  if (line === undefined && find.want) return findInBlock(inflated, where, find.want, find.shopId);
  if (line === undefined) {
    if (inflated.indexOf(0x0a) !== inflated.length - 1) {
      throw new CorruptObjectError(where, 'a member must hold exactly one JSONL line');
    }
    return decodeLine(inflated, where, find.shopId);
  }
  if (line.offset < 0 || line.length <= 0 || line.offset + line.length > inflated.length) {
    throw new CorruptObjectError(
      where,
      `line ${line.offset}+${line.length} is outside the ${inflated.length}-byte block`,
    );
  }
  return decodeLine(
    inflated.subarray(line.offset, line.offset + line.length),
    `${where} line ${line.offset}`,
    find.shopId,
  );
};

/** Content reference of a platform-data payload: equal payloads share one record in a part. */
export const platformDataRef = (data: unknown): string => `sha256:${sha256Hex(canonicalJson(data))}`;
