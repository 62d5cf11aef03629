import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * The archive's block codec: one gzip member per block (parts and month indexes alike). node:zlib at
 * level 9, chosen by measurement (`npm run bench:archive`, "Codec"): on the same 64 KB blocks it keeps
 * ~8% fewer bytes than fflate at level 9 (at any `mem` setting) and deflates and inflates faster —
 * bytes at rest are what a cold tier is judged by. Node's gzip header has mtime 0 and no name, so
 * equal input gives equal bytes.
 */
export const GZIP_LEVEL = 9; // written once, kept for years: spend the CPU

export const deflateBlock = (bytes: Uint8Array): Buffer => gzipSync(bytes, { level: GZIP_LEVEL });

/** Inflates every member of `bytes` (throws on anything that is not whole gzip). */
export const inflateBlocks = (bytes: Uint8Array): Buffer => gunzipSync(bytes);
