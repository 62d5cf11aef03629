import { gzipSync } from 'node:zlib';
import { gunzipSync as inflateGzip, gzipSync as deflateGzip } from 'fflate';
import { CorruptObjectError } from '../errors';
import type { ByteRange } from './month-index';
import { canonicalJson, sha256Hex } from './canonical-json';
import type { PartRecord, StoredJobRecord } from './records';
import { parsePartRecord } from './record-shape';

/**
 * Pure byte logic of parts: one record → one JSONL line → one gzip member. No I/O here; the archive
 * step streams these members into a multipart upload and the reader decodes one from a ranged GET.
 */
export interface EncodedMember {
  /** The gzip member bytes, written to the part as is. */
  readonly member: Buffer;
  /** sha256 of the uncompressed line (JSON + "\n"): the record digest kept in the index. */
  readonly sha256: string;
  /** Uncompressed length of the line. */
  readonly lineBytes: number;
}

// part@1 encoding (one member per record), kept for tests that build v1 members. Fixed level and
// Node's zero mtime make members byte-identical for identical records.
const GZIP_LEVEL = 9; // parts are written once and kept for years: spend the CPU

export const encodeMember = (record: PartRecord): EncodedMember => {
  const line = Buffer.from(`${canonicalJson(record)}\n`, 'utf8');
  return { member: gzipSync(line, { level: GZIP_LEVEL }), sha256: sha256Hex(line), lineBytes: line.length };
};

const isGzip = (b: Uint8Array): boolean => b.length >= 18 && b[0] === 0x1f && b[1] === 0x8b;

/**
 * Blocks (part@2): many records' lines share one gzip member of about BLOCK_BYTES uncompressed, so
 * the archive compresses across jobs, yet a record is still one ranged GET of one block away. A
 * line longer than that is a block of its own. The part stays a standard JSONL.gz.
 */
export const BLOCK_BYTES = 64 * 1024;

/** A block: one gzip member (fflate, deterministic: mtime 0, no name) of whole JSONL lines. */
export const encodeBlock = (lines: Uint8Array): Uint8Array =>
  deflateGzip(lines, { level: GZIP_LEVEL, mtime: 0 });

/** The line of one record, and its digest (kept in the index and the manifest). */
export const encodeLine = (record: PartRecord | StoredJobRecord): { line: Buffer; sha256: string } => {
  const line = Buffer.from(`${canonicalJson(record)}\n`, 'utf8');
  return { line, sha256: sha256Hex(line) };
};

/** Inflates one member (a ranged GET's bytes); `where` names it in errors. */
export const inflateMember = (bytes: Uint8Array, where: string): Buffer => {
  if (!isGzip(bytes)) throw new CorruptObjectError(where, 'not a gzip member');
  try {
    return Buffer.from(inflateGzip(bytes));
  } catch (err) {
    throw new CorruptObjectError(where, 'gzip member does not decompress', { cause: err });
  }
};

/** The record on one line (exactly one JSONL line, newline-terminated). */
export const decodeLine = (line: Buffer, where: string): { record: PartRecord; sha256: string } => {
  const text = line.toString('utf8');
  if (!text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) {
    throw new CorruptObjectError(where, 'a record must be exactly one JSONL line');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CorruptObjectError(where, 'member is not JSON', { cause: err });
  }
  return { record: parsePartRecord(value, where), sha256: sha256Hex(line) };
};

/**
 * The record at `line` of a member (part@2), or the member's only line when `line` is absent
 * (part@1, where every member held exactly one record).
 */
export const decodeMember = (
  bytes: Uint8Array,
  where: string,
  line?: ByteRange,
): { record: PartRecord; sha256: string } => {
  const inflated = inflateMember(bytes, where);
  if (line === undefined) {
    if (inflated.indexOf(0x0a) !== inflated.length - 1) {
      throw new CorruptObjectError(where, 'a member must hold exactly one JSONL line');
    }
    return decodeLine(inflated, where);
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
  );
};

/** Content reference of a platform-data payload: equal payloads share one record in a part. */
export const platformDataRef = (data: unknown): string => `sha256:${sha256Hex(canonicalJson(data))}`;
