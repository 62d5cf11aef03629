import { gzipSync } from 'node:zlib';
import { objectsOf, shopMonth } from './workload';

let hot = 0;
const lines: string[] = [];
for (const j of shopMonth(1, 'big.myshopify.com', '2026-08', 1500)) {
  for (const o of objectsOf(j)) hot += o.body.length;
  lines.push(JSON.stringify({ job_id: j.jobId, flushes: j.flushes, pd: j.platformData }));
}
const all = Buffer.from(lines.join('\n'));
const one = gzipSync(all, { level: 9 }).length;
let blocks = 0;
let cur: string[] = [];
let n = 0;
const flush = () => {
  if (cur.length) blocks += gzipSync(Buffer.from(cur.join('\n')), { level: 9 }).length;
  cur = [];
  n = 0;
};
for (const l of lines) {
  if (n + l.length > 65536) flush();
  cur.push(l);
  n += l.length;
}
flush();
console.log({ hot, raw: all.length, one: one / hot, blocks: blocks / hot });
