import { inflateRawSync } from 'node:zlib';

/**
 * Pure byte logic: finds where gzip members end in a part without an index or a manifest (rebuilding a
 * lost month index). Gunzip itself runs straight across member boundaries, so each member's header is
 * parsed here and its deflate stream inflated raw: zlib stops at the stream's end and reports how many
 * input bytes it consumed; the 8-byte trailer (CRC32, ISIZE) follows.
 */

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;

/** Bytes of the header at the start of `buf`; null: not all of it is here yet; 'bad': not a gzip member. */
const headerLength = (buf: Uint8Array): number | null | 'bad' => {
  if (buf.length < 10) return null;
  if (buf[0] !== 0x1f || buf[1] !== 0x8b || buf[2] !== 8) return 'bad';
  const flags = buf[3] ?? 0;
  let at = 10;
  if (flags & FEXTRA) {
    if (buf.length < at + 2) return null;
    at += 2 + ((buf[at] ?? 0) | ((buf[at + 1] ?? 0) << 8));
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const end = buf.indexOf(0, at);
    if (end < 0) return null;
    at = end + 1;
  }
  if (flags & FHCRC) at += 2;
  return buf.length < at ? null : at;
};

interface InflateInfo {
  readonly engine: { readonly bytesWritten: number };
}

export type MemberLength =
  | { readonly length: number }
  | { readonly incomplete: true }
  | { readonly bad: string };

/** Length of the gzip member at the start of `buf` (which may hold more after it). */
export const gzipMemberLength = (buf: Buffer): MemberLength => {
  const header = headerLength(buf);
  if (header === 'bad') return { bad: 'not a gzip member' };
  if (header === null) return { incomplete: true };
  let consumed: number;
  try {
    // `info: true` returns { buffer, engine }; @types/node does not model that overload.
    const r = inflateRawSync(buf.subarray(header), { info: true }) as unknown as InflateInfo;
    consumed = r.engine.bytesWritten;
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (e.code === 'Z_BUF_ERROR') return { incomplete: true };
    return { bad: `deflate stream does not decompress (${e.message ?? String(err)})` };
  }
  const length = header + consumed + 8;
  return buf.length < length ? { incomplete: true } : { length };
};

/**
 * Cuts a byte stream into gzip members, chunk by chunk: holds at most one member plus one chunk.
 * An incomplete member is retried only once the buffer has doubled, so a large member costs
 * O(its size) inflate work, not O(size² / chunk).
 */
export class BlockScanner {
  private buffer: Buffer = Buffer.alloc(0);
  private position = 0;
  private retryAt = 0;

  constructor(private readonly maxMemberBytes: number) {}

  /** Members completed by this chunk, with their offsets in the stream. Throws `Error` on a bad member. */
  push(chunk: Buffer): Array<{ offset: number; bytes: Buffer }> {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const out: Array<{ offset: number; bytes: Buffer }> = [];
    while (this.buffer.length > 0 && this.buffer.length >= this.retryAt) {
      const r = gzipMemberLength(this.buffer);
      if ('bad' in r) throw new Error(`at byte ${this.position}: ${r.bad}`);
      if ('incomplete' in r) {
        if (this.buffer.length > this.maxMemberBytes) {
          throw new Error(`at byte ${this.position}: member longer than ${this.maxMemberBytes} bytes`);
        }
        this.retryAt = this.buffer.length * 2;
        break;
      }
      if (r.length > this.maxMemberBytes) {
        throw new Error(`at byte ${this.position}: member longer than ${this.maxMemberBytes} bytes`);
      }
      out.push({ offset: this.position, bytes: this.buffer.subarray(0, r.length) });
      this.position += r.length;
      this.buffer = this.buffer.subarray(r.length);
      this.retryAt = 0;
    }
    return out;
  }

  /** Call at the end of the stream: the last member must be complete. */
  finish(): Array<{ offset: number; bytes: Buffer }> {
    this.retryAt = 0;
    const out = this.buffer.length > 0 ? this.push(Buffer.alloc(0)) : [];
    if (this.buffer.length > 0) {
      throw new Error(`at byte ${this.position}: truncated member (${this.buffer.length} bytes left)`);
    }
    return out;
  }
}
