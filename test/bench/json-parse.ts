/**
 * `npm run bench:json` — what the lossless, depth-bounded parser (`parseJsonExact`, shared/details/
 * json.ts) costs against plain `JSON.parse`, on payloads shaped like flush objects: ids and counters
 * only (the fast path: no number a float64 could round), with versions beyond 2^53 (the reviver
 * keeps their text), and a platform-data-like object with decimals and timestamps (the pre-check
 * sends it down the reviver path though every number is exact). Prints one line per case and a last
 * line of JSON `{case: {plainMbS, exactMbS, ratio}}`. No I/O; pure CPU.
 */
import { parseJsonExact } from '../../shared/details/json';

const docIds = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag}-${i.toString(36)}-gid`);

const cases: Record<string, string> = {
  'failed ids (fast path)': JSON.stringify({
    chunk_ids: ['p0', 'p1'],
    conflict: {},
    failed: { timeout: docIds(20_000, 'shopify-product') },
    skipped: { unpublished: docIds(5_000, 'x') },
  }),
  'conflicts, versions > 2^53 (reviver)': JSON.stringify({
    chunk_ids: ['p0'],
    conflict: {
      version_conflict: docIds(10_000, 'd').map((doc_id, i) => ({
        doc_id,
        existing_version: 0, // replaced below by an exact 19-digit text
        incoming_version: i,
        message: 'stale write',
      })),
    },
    failed: {},
    skipped: {},
  }).replaceAll('"existing_version":0', '"existing_version":9223372036854775807'),
  'platform data, decimals + timestamps (reviver, all exact)': JSON.stringify({
    indexer: { batch_size: 50, ratio: 0.25, started: '2026-03-01T10:01:00.000Z' },
    stats: Array.from({ length: 5_000 }, (_, i) => ({ at: '2026-03-01T10:01:00.000Z', ms: i * 1.5, n: i })),
  }),
};

const mbPerSecond = (text: string, parse: (t: string) => unknown): number => {
  const bytes = Buffer.byteLength(text);
  for (let i = 0; i < 5; i++) parse(text); // warm up
  let n = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < 1e9) {
    parse(text);
    n++;
    elapsed = Number(process.hrtime.bigint() - start);
  }
  return (bytes * n) / (elapsed / 1e9) / 1e6;
};

const out: Record<string, { plainMbS: number; exactMbS: number; ratio: number }> = {};
for (const [name, text] of Object.entries(cases)) {
  const plain = mbPerSecond(text, (t) => JSON.parse(t));
  const exact = mbPerSecond(text, (t) => parseJsonExact(t, 'bench'));
  const r = {
    plainMbS: Math.round(plain),
    exactMbS: Math.round(exact),
    ratio: Number((plain / exact).toFixed(2)),
  };
  out[name] = r;
  console.log(
    `${name.padEnd(58)} ${(Buffer.byteLength(text) / 1e6).toFixed(2)} MB  JSON.parse ${r.plainMbS} MB/s  parseJsonExact ${r.exactMbS} MB/s  ×${r.ratio}`,
  );
}
console.log(JSON.stringify(out));
