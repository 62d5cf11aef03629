import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  commitPart,
  emptyMonthIndex,
  type IndexedJob,
  type MonthIndex,
  parseMonthIndex,
  serializeMonthIndex,
  settledCandidates,
  settlePart,
} from '../../shared/archive/format';

/**
 * The Python reader (shared/python/job_details_archive/format.py) on settled month indexes the
 * TypeScript writer writes: for present and absent ids, the same candidate blocks (block directory and
 * job filter, at k = 7 and thinned to a lower `jk` for a large part), and a damaged job filter named
 * with its index and part.
 */
const ROOT = resolve(__dirname, '../..');
const PYTHON = process.env.PYTHON ?? 'python3';
const KEY = 'job-details-index/s.myshopify.com/2026-01/index.json';
const P1 = 'part-20260201T000000Z-aaaaaaaa.jsonl.gz';

const settledOf = (ids: readonly string[], perBlock: number): MonthIndex => {
  const jobs: Record<string, IndexedJob> = {};
  ids.forEach((id, i) => {
    const b = Math.floor(i / perBlock);
    jobs[id] = {
      part: P1,
      offset: b * 100,
      length: 100,
      completed_at: '2026-01-10T00:00:00.000Z',
      committed_at: 't',
      platform_data: null,
      sources: [],
      deleted_at: 'd',
    };
  });
  const blocks = Math.ceil(ids.length / perBlock);
  const part = {
    name: P1,
    key: `job-details-cold/s.myshopify.com/2026-01/${P1}`,
    size: blocks * 100,
    etag: 'e',
    run_id: 'r',
    committed_at: 't',
    job_count: ids.length,
  };
  return settlePart(commitPart(emptyMonthIndex('s.myshopify.com', '2026-01', 't0'), part, jobs, 't'), P1);
};

const SCRIPT = `
import base64, json, sys
sys.path.insert(0, ${JSON.stringify(resolve(ROOT, 'shared/python'))})
from job_details_archive import format as fmt
from job_details_archive.errors import CorruptObjectError
case = json.loads(sys.stdin.read())
out = {"answers": [], "k": [], "damaged": None}
for c in case["indexes"]:
    index = fmt.parse_month_index(base64.b64decode(c["bytes"]), c["key"])
    out["k"].append(index["parts"][0]["settled"]["job_filter"][0])
    out["answers"].append([[x["block"] for x in fmt.settled_candidates(index, i)] for i in c["ask"]])
try:
    fmt.parse_month_index(base64.b64decode(case["damaged"]), case["key"])
    out["damaged"] = "read"
except CorruptObjectError as err:
    out["damaged"] = str(err)
print(json.dumps(out))
`;

test('Python and TypeScript name the same candidate blocks of settled parts (job filter k = 7 and thinned)', () => {
  const ids = (n: number, p: string) =>
    Array.from({ length: n }, (_, i) => `${p}${String(i).padStart(6, '0')}`);
  const small = ids(300, 'j');
  const large = ids(40_000, 'k');
  const indexes = [
    { index: settledOf(small, 4), ask: [...small, ...small.map((id) => `${id}-x`), 'a', 'z'] },
    {
      index: settledOf(large, 30),
      ask: [
        ...large.filter((_, i) => i % 1000 === 0),
        ...Array.from({ length: 200 }, (_, i) => `k000100-${i}`),
      ],
    },
  ].map(({ index, ask }) => ({ bytes: serializeMonthIndex(index), ask }));
  // The small part with a damaged range (`last` lowered to its last block's id, the first id raised):
  // the ids past either edge that the filter matches name the edge block, in both readers.
  const ranged = JSON.parse(gunzipSync(indexes[0]?.bytes as Buffer).toString('utf8'));
  const dir = ranged.parts[0].dir as string[];
  ranged.parts[0].last = dir[dir.length - 1];
  ranged.parts[0].dir = ['j000002', ...dir.slice(1)];
  const outside = Array.from({ length: 300 }, (_, i) => [`a${i}`, `z${i}`]).flat();
  indexes.push({ bytes: gzipSync(`${JSON.stringify(ranged)}\n`), ask: [...small, ...outside] });
  const ts = indexes.map(({ bytes, ask }) => {
    const back = parseMonthIndex(bytes, KEY);
    return {
      k: back.parts[0]?.settled?.job_filter?.k,
      answers: ask.map((id) => settledCandidates(back, id).map((c) => c.block)),
    };
  });
  // The large part's filter was thinned; absent ids inside its range match it sometimes, not always.
  expect(ts.map((t) => t.k)).toEqual([7, expect.any(Number), 7]);
  // Damaged range: every job still has its block (the edge ones the edge blocks); an absent id
  // outside the range has none unless the filter matches it (then the edge block).
  const edge = ts[2]?.answers ?? [];
  expect(edge.slice(0, 300).every((a) => a.length === 1)).toBe(true);
  expect(edge.slice(0, 2)).toEqual([[0], [0]]);
  expect(edge.slice(297, 300)).toEqual([[74], [74], [74]]);
  const beyond = edge.slice(300);
  expect(beyond.filter((a) => a.length === 0).length).toBeGreaterThan(500);
  expect(beyond.every((a, i) => a.length === 0 || a[0] === (i % 2 === 0 ? 0 : 74))).toBe(true);
  expect(ts[1]?.k).toBeLessThan(7);
  const absent = ts[1]?.answers.slice(40) ?? [];
  expect(absent.some((a) => a.length > 0) && absent.some((a) => a.length === 0)).toBe(true);
  // A job filter cut short.
  const stored = JSON.parse(gunzipSync(indexes[0]?.bytes as Buffer).toString('utf8'));
  stored.parts[0].jf = Buffer.from(stored.parts[0].jf, 'base64').subarray(0, 10).toString('base64');
  const damaged = gzipSync(`${JSON.stringify(stored)}\n`);

  const r = spawnSync(PYTHON, ['-c', SCRIPT], {
    input: JSON.stringify({
      key: KEY,
      indexes: indexes.map(({ bytes, ask }) => ({ key: KEY, bytes: bytes.toString('base64'), ask })),
      damaged: damaged.toString('base64'),
    }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  expect(r.stderr).toBe('');
  const py = JSON.parse(r.stdout) as { answers: number[][][]; k: number[]; damaged: string };
  expect(py.k).toEqual(ts.map((t) => t.k));
  expect(py.answers).toEqual(ts.map((t) => t.answers));
  expect(py.damaged).toContain(KEY);
  expect(py.damaged).toContain(`job filter of part ${P1}`);
  expect(() => parseMonthIndex(damaged, KEY)).toThrow(`job filter of part ${P1}`);
});
