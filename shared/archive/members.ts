import { gunzipSync, gzipSync } from 'node:zlib';
import { CorruptObjectError } from '../errors';
import { canonicalJson, sha256Hex } from './canonical-json';
import type { PartRecord } from './records';
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

// Fixed level and Node's zero mtime make members byte-identical for identical records.
const GZIP_LEVEL = 9; // parts are written once and kept for years: spend the CPU

export const encodeMember = (record: PartRecord): EncodedMember => {
  const line = Buffer.from(`${canonicalJson(record)}\n`, 'utf8');
  return { member: gzipSync(line, { level: GZIP_LEVEL }), sha256: sha256Hex(line), lineBytes: line.length };
};

const isGzip = (b: Uint8Array): boolean => b.length >= 18 && b[0] === 0x1f && b[1] === 0x8b;

/** Decompress ONE member (a ranged GET's bytes) into its record; `where` names it in errors. */
export const decodeMember = (bytes: Uint8Array, where: string): { record: PartRecord; sha256: string } => {
  if (!isGzip(bytes)) throw new CorruptObjectError(where, 'not a gzip member');
  let line: Buffer;
  try {
    line = gunzipSync(bytes);
  } catch (err) {
    throw new CorruptObjectError(where, 'gzip member does not decompress', { cause: err });
  }
  const text = line.toString('utf8');
  if (!text.endsWith('\n') || text.indexOf('\n') !== text.length - 1) {
    throw new CorruptObjectError(where, 'a member must hold exactly one JSONL line');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CorruptObjectError(where, 'member is not JSON', { cause: err });
  }
  return { record: parsePartRecord(value, where), sha256: sha256Hex(line) };
};

/** Content reference of a platform-data payload: equal payloads share one record in a part. */
export const platformDataRef = (data: unknown): string => `sha256:${sha256Hex(canonicalJson(data))}`;
