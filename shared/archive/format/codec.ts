import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * The archive's block codec: one gzip member per block (parts and month indexes alike). node:zlib,
 * chosen by measurement (`npm run bench:archive`, "Codec"): on the same 64 KB blocks it keeps ~8%
 * fewer bytes than fflate at level 9 (at any `mem` setting) and deflates and inflates faster. Level 8,
 * not 9: on the bench's parts (seeded-1500, month-100, fleet-300) level 9 keeps 0.00–0.16 % fewer
 * bytes and takes up to 1.4× as long (level 7: 0.3–1.4 % more bytes; level 6: 1.2–2.6 %), and the
 * deflate of the blocks is the archive step's largest single CPU item after the SDK. Node's gzip
 * header has mtime 0 and no name, so equal input gives equal bytes.
 */
export const GZIP_LEVEL = 8;

/**
 * A packed group's segment (pack-month.ts) is built as a part in memory and inflated again at once,
 * when the batch cuts the segments' lines into the shared part's blocks: its members are never
 * stored, so they are deflated for speed (level 1: a tenth of level 9's time, ~15 % more bytes held
 * in memory until the batch uploads the shared part).
 */
export const SEGMENT_LEVEL = 1;

export const deflateBlock = (bytes: Uint8Array, level: number = GZIP_LEVEL): Buffer =>
  gzipSync(bytes, { level });

/** Inflates every member of `bytes` (throws on anything that is not whole gzip). */
export const inflateBlocks = (bytes: Uint8Array): Buffer => gunzipSync(bytes);
