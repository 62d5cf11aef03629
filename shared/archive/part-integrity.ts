import { GetObjectCommand, HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { CorruptObjectError, VerificationError } from '../errors';
import { isNotFound, normalizeEtag } from '../s3/objects';
import {
  BlockScanner,
  blockRanges,
  type IndexedPart,
  inflateBlock,
  jobEntries,
  type MonthIndex,
} from './format';

/**
 * Proof that a committed part is still the bytes verify read, before anything relies on it being so
 * (the delete step before removing hot copies; `audit`).
 *
 * - `headCheck` (1 HEAD): size and the ETag recorded at commit. S3 gives every write of a
 *   key a new ETag, so any overwrite — a same-size byte flip included — fails it. (The local S3 stores
 *   the MD5 of every PUT's bytes as its ETag, infra/local/s3rver-entry.cjs, so it fails there too.)
 * - `blockCheck` (1 streamed GET): every block of the part inflates alone (gzip CRC-32 and length of
 *   each member), the blocks tile the object, and every block an index entry points at starts where
 *   the entry says, with its length (`audit --deep`).
 */

/**
 * A part's blocks as the index's entries point at them: offset → compressed length. A settled part
 * (no entries) by its summary: every block's length from byte 0 (`block_bytes`), so every block its
 * directory can name must be where the summary says.
 */
export const pointedBlocks = (index: MonthIndex, partName: string): Map<number, number> => {
  const out = new Map<number, number>();
  const settled = index.parts.find((p) => p.name === partName)?.settled;
  if (settled) {
    for (const r of blockRanges(settled.block_bytes)) out.set(r.offset, r.length);
    return out;
  }
  for (const jobId of Object.keys(index.jobs)) {
    for (const e of jobEntries(index.jobs, jobId)) {
      if (e.part !== partName) continue;
      out.set(e.offset, e.length);
      if (e.platform_data) out.set(e.platform_data.offset, e.platform_data.length);
    }
  }
  return out;
};

/** Fails (VerificationError naming the part) unless the part is stored with its size and ETag. */
export const headCheck = async (s3: S3Client, bucket: string, part: IndexedPart): Promise<void> => {
  let head: { ContentLength?: number; ETag?: string };
  try {
    head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: part.key }));
  } catch (err) {
    if (isNotFound(err)) throw new VerificationError(part.key, 'part object is missing');
    throw err;
  }
  const etag = normalizeEtag(head.ETag);
  if (head.ContentLength !== part.size)
    throw new VerificationError(
      part.key,
      `stored part is ${head.ContentLength} bytes, committed ${part.size}`,
    );
  if (etag !== part.etag)
    throw new VerificationError(
      part.key,
      `stored part has ETag ${etag}, committed ${part.etag}: it was rewritten after its commit`,
    );
};

/** Largest block held while checked (the archiver's blocks are ≤ 96 KB of lines, BLOCK_BYTES, or one long record). */
const MAX_BLOCK_BYTES = 256 * 1024 * 1024;

/**
 * Reads the whole part as a stream and checks every block (see above). Returns the blocks found;
 * throws VerificationError with what is wrong.
 */
export const blockCheck = async (
  s3: S3Client,
  bucket: string,
  part: IndexedPart,
  pointed: ReadonlyMap<number, number>,
): Promise<{ blocks: number }> => {
  const fail = (reason: string): never => {
    throw new VerificationError(part.key, reason);
  };
  let body: (AsyncIterable<Uint8Array> & { destroy?: () => void }) | undefined;
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: part.key }));
    body = out.Body as typeof body;
  } catch (err) {
    if (isNotFound(err)) fail('part object is missing');
    throw err;
  }
  if (!body) return fail('part has no body');
  const scanner = new BlockScanner(MAX_BLOCK_BYTES);
  const found = new Map<number, number>();
  let size = 0;
  const take = (members: Array<{ offset: number; bytes: Buffer }>) => {
    for (const m of members) {
      inflateBlock(m.bytes, `${part.key}@${m.offset}`);
      found.set(m.offset, m.bytes.length);
    }
  };
  try {
    for await (const chunk of body) {
      const buf = Buffer.from(chunk);
      size += buf.length;
      if (size > part.size) fail(`more than the committed ${part.size} bytes`);
      take(scanner.push(buf));
    }
    take(scanner.finish());
  } catch (err) {
    body.destroy?.();
    if (err instanceof VerificationError) throw err;
    if (err instanceof CorruptObjectError) fail(`block ${err.reason}`);
    fail(`block does not decompress: ${(err as Error).message}`);
  }
  if (size !== part.size) fail(`stored part is ${size} bytes, committed ${part.size}`);
  for (const [offset, length] of pointed) {
    if (found.get(offset) !== length)
      fail(`no block of ${length} bytes at byte ${offset}, as the index says`);
  }
  return { blocks: found.size };
};
