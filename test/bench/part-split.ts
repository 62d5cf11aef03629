/**
 * `node .ci/node22.cjs tsx test/bench/part-split.ts PART.jsonl.gz [HOT_BYTES]` — where a part's
 * compressed bytes go, by what they carry. Take a part from `npm run bench:archive -- --quick --keep DIR`
 * (e.g. DIR/seeded-1500/job-details-cold/…/part-….jsonl.gz; HOT_BYTES is its index entry's `bytes_in`).
 *
 * Method: the part's blocks are inflated and re-encoded, block by block (same lines in the same
 * blocks, level 9 as the writer), once as stored and once per variant that drops one thing from every
 * job record; the difference is what that thing costs compressed. The filters member is measured as
 * stored. Prints one table; ratios are of HOT_BYTES when given.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { inflateBlock, isFiltersMember } from '../../shared/archive/format';

type Obj = Record<string, unknown>;

/** The part's gzip members: byte ranges found by inflating one at a time. */
const members = (bytes: Buffer): Buffer[] => {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    // A member ends where the next gzip magic starts and the slice inflates; search forward.
    let end = at + 18;
    for (;;) {
      const next = bytes.indexOf(Buffer.from([0x1f, 0x8b, 0x08]), end);
      const stop = next < 0 ? bytes.length : next;
      try {
        inflateBlock(bytes.subarray(at, stop), 'm');
        out.push(bytes.subarray(at, stop));
        at = stop;
        break;
      } catch {
        if (next < 0) throw new Error(`no member at ${at}`);
        end = next + 1;
      }
    }
  }
  return out;
};

const gz = (s: string): number => gzipSync(Buffer.from(s, 'utf8'), { level: 9 }).length;

const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v as Obj)
            .sort()
            .map((k) => [k, sortKeys((v as Obj)[k])]),
        )
      : v;

type Variant = (rec: Obj) => Obj | null;
const drop =
  (...fields: string[]): Variant =>
  (r) =>
    r.type === 'job' ? Object.fromEntries(Object.entries(r).filter(([k]) => !fields.includes(k))) : r;
const dropRow =
  (...fields: string[]): Variant =>
  (r) =>
    r.type === 'job' && r.row && typeof r.row === 'object'
      ? {
          ...r,
          row: Object.fromEntries(Object.entries(r.row as Obj).filter(([k]) => !fields.includes(k))),
        }
      : r;

const VARIANTS: Record<string, Variant> = {
  'platform_data lines': (r) => (r.type === 'platform_data' ? null : r),
  job_id: drop('job_id'),
  'row (whole)': drop('row', 'row_omitted', 'row_reduced', 'row_ttl_after'),
  'row timestamps (created/started/completed_at)': dropRow('created_at', 'started_at', 'completed_at'),
  'row ttl (or row_ttl_after)': (r) => dropRow('ttl')(drop('row_ttl_after')(r) as Obj),
  'row counters (*_items)': dropRow(
    'total_items',
    'processed_items',
    'failed_items',
    'skipped_items',
    'conflict_items',
  ),
  'row status/type/platform': dropRow('job_status', 'job_type', 'platform'),
  'row_omitted + row_reduced': drop('row_omitted', 'row_reduced'),
  'sources (whole)': drop('sources'),
  'sources sizes only': (r) =>
    r.type === 'job' && r.sources && !Array.isArray(r.sources)
      ? { ...r, sources: Object.keys(r.sources as Obj) }
      : r,
  'details.chunk_ids': (r) =>
    r.type === 'job' ? { ...r, details: { ...(r.details as Obj), chunk_ids: [] } } : r,
  'details.failed + skipped (document lists)': (r) =>
    r.type === 'job' ? { ...r, details: { ...(r.details as Obj), failed: {}, skipped: {} } } : r,
  'details.conflict': (r) =>
    r.type === 'job' ? { ...r, details: { ...(r.details as Obj), conflict: {} } } : r,
  'details (whole)': drop('details'),
};

const main = () => {
  const [file, hotArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: part-split.ts PART.jsonl.gz [HOT_BYTES]');
  const part = readFileSync(file);
  const hot = hotArg ? Number(hotArg) : undefined;
  const all = members(part);
  const filters = all.filter((m) => isFiltersMember(m));
  const blocks = all
    .filter((m) => !isFiltersMember(m))
    .map((m) =>
      inflateBlock(m, 'block')
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as Obj),
    );
  const size = (v: Variant | null): number =>
    blocks.reduce((n, recs) => {
      const lines = recs.map((r) => (v ? v(r) : r)).filter((r): r is Obj => r !== null);
      return lines.length === 0 ? n : n + gz(lines.map((r) => `${JSON.stringify(sortKeys(r))}\n`).join(''));
    }, 0);
  const stored = all.filter((m) => !isFiltersMember(m)).reduce((n, m) => n + m.length, 0);
  const base = size(null);
  const filterBytes = filters.reduce((n, m) => n + m.length, 0);
  const pct = (b: number) => (hot ? ` ${((100 * b) / hot).toFixed(1).padStart(5)} % of hot` : '');
  const rows: [string, number][] = [
    ['part', part.length],
    ['blocks (as stored)', stored],
    ['blocks (re-encoded)', base],
    ['filters member', filterBytes],
    ['block count', blocks.length],
  ];
  for (const [k, v] of rows)
    console.log(`${k.padEnd(48)} ${String(v).padStart(9)}${k === 'block count' ? '' : pct(v)}`);
  console.log('what each costs in the blocks (re-encoded without it):');
  for (const [name, v] of Object.entries(VARIANTS)) {
    const d = base - size(v);
    console.log(`  ${name.padEnd(46)} ${String(d).padStart(9)}${pct(d)}`);
  }
};

main();
