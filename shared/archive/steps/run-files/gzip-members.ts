import { constants, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';

/**
 * Run scratch written as gzip members one after the other (RFC 1952; `gzip -dc` reads the whole
 * file): a plan page's planned jobs, one member per shop-month, so a shop-month is a byte range a
 * ranged GET reads and inflates alone. Pure bytes, no I/O. The erasure scrub (shared/erasure/scrub.ts)
 * replaces a member by another of exactly the same length, so every other range stays valid.
 */

/** One member of `body` (empty body: no bytes at all, so an empty range stays empty). */
export const gzipMember = (body: Buffer): Buffer => (body.length === 0 ? Buffer.alloc(0) : gzipSync(body));

const HEADER = 10;
const TRAILER = 8;
const FCOMMENT = 0x10;
/** The shortest member `emptyMemberOf` writes: header, the comment's terminator, an empty deflate block, trailer. */
const MIN_FILLER = HEADER + 1 + 2 + TRAILER;

/**
 * `member` (a member gzipSync wrote: no optional header fields) stretched to exactly `length` bytes
 * with a header comment of spaces (FCOMMENT, which every gzip reader skips); null when it is longer.
 */
const stretched = (member: Buffer, length: number): Buffer | null => {
  if (member.length === length) return member;
  if (member.length + 1 > length || (member[3] ?? 0) !== 0) return null;
  const header = Buffer.from(member.subarray(0, HEADER));
  header[3] = FCOMMENT;
  const comment = Buffer.alloc(length - member.length, 0x20);
  comment[comment.length - 1] = 0;
  return Buffer.concat([header, comment, member.subarray(HEADER)]);
};

/** A member of exactly `length` bytes holding nothing (its header comment pads it); null below 21 bytes. */
export const emptyMemberOf = (length: number): Buffer | null => {
  if (length < MIN_FILLER) return null;
  // An empty deflate stream (one final fixed-Huffman block holding only its end code): 03 00.
  const empty = Buffer.concat([
    Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]),
    Buffer.from([0x03, 0x00]),
    Buffer.alloc(TRAILER),
  ]);
  return stretched(empty, length);
};

/**
 * `body` as one member of exactly `length` bytes (for a member rewritten in place): the smallest of a
 * few zlib settings, stretched by a header comment; null when none is short enough.
 */
export const memberOfLength = (body: Buffer, length: number): Buffer | null => {
  for (const options of [
    {},
    { level: 9 },
    { level: 9, strategy: constants.Z_FILTERED },
    { level: 9, memLevel: 9 },
  ]) {
    const out = stretched(gzipSync(body, options), length);
    if (out) return out;
  }
  return null;
};

/** Where a member's deflate data starts (after its optional header fields); null when the header is cut. */
const deflateStart = (b: Buffer, at: number): number | null => {
  if (!(b[at] === 0x1f && b[at + 1] === 0x8b && b[at + 2] === 0x08)) return null;
  const flags = b[at + 3] ?? 0;
  let p = at + HEADER;
  if (flags & 0x04) p += 2 + b.readUInt16LE(p);
  for (const bit of [0x08, FCOMMENT]) {
    if (!(flags & bit)) continue;
    const zero = b.indexOf(0, p);
    if (zero < 0) return null;
    p = zero + 1;
  }
  if (flags & 0x02) p += 2;
  return p <= b.length ? p : null;
};

/** The member starting at `at`, inflated and checked (CRC-32 and length); null when there is none. */
const memberAt = (b: Buffer, at: number): Member | null => {
  try {
    const p = deflateStart(b, at);
    if (p === null) return null;
    // inflateRaw stops at the end of the deflate stream and says how much of the input it read.
    const { engine } = inflateRawSync(b.subarray(p), { info: true }) as unknown as {
      engine: { bytesWritten: number };
    };
    const end = p + engine.bytesWritten + TRAILER;
    if (end > b.length) return null;
    return { start: at, end, body: gunzipSync(b.subarray(at, end)) };
  } catch {
    return null;
  }
};

/** A member found by `splitMembers`: its byte range and what it holds. */
export interface Member {
  readonly start: number;
  readonly end: number;
  readonly body: Buffer;
}

/**
 * The members of `bytes`, in order; `rest` is where the bytes stop being members (bytes.length when
 * they all are).
 */
export const splitMembers = (bytes: Buffer): { members: Member[]; rest: number } => {
  const members: Member[] = [];
  let start = 0;
  for (let m = memberAt(bytes, start); m; m = memberAt(bytes, start)) {
    members.push(m);
    start = m.end;
  }
  return { members, rest: start };
};
