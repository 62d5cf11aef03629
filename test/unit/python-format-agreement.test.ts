import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import {
  compactDetails,
  fenceContains,
  fenceFilter,
  golombFilter,
  golombMayContain,
} from '../../shared/archive/format';
import { details } from '../support/archive-fixture';
import { NUMBERED_EDGE_IDS } from '../support/numbered-ids';

/**
 * The Python reader's format functions (shared/python/job_details_archive/format.py) on what the
 * TypeScript writer writes, for ids at the edges: the same membership answer for every id of a
 * Golomb-coded set or fence and for absent ones, the same ids back from every stored document list,
 * and a damaged filter named with its part and block.
 */
const ROOT = resolve(__dirname, '../..');
const PYTHON = process.env.PYTHON ?? 'python3';

const ODD = [
  ...NUMBERED_EDGE_IDS,
  ' 12',
  '1e3',
  '-1',
  '~',
  '~5',
  '12345678901234567890',
  '9007199254740993',
  '7\n',
  'x'.repeat(5000),
  '\uD800',
  'a\uDC00b',
  '\uD800123',
  'gid://x/\u{1F600}/9',
];
const P = 'gid://shopify/Product/';
const gids = Array.from({ length: 300 }, (_, i) => `${P}${7086727600000 + i * 37}`);

const SCRIPT = `
import base64, json, sys
sys.path.insert(0, ${JSON.stringify(resolve(ROOT, 'shared/python'))})
from job_details_archive import format as fmt
from job_details_archive.errors import CorruptObjectError
case = json.loads(sys.stdin.read())
out = {"sets": [], "lists": [], "damaged": None}
for s in case["sets"]:
    data = base64.b64decode(s["bytes"])
    out["sets"].append([fmt.may_contain(s["kind"], data, d, 5, s["docs"]) for d in s["ask"]])
for lst in case["lists"]:
    out["lists"].append(fmt.expand_details({"failed": {"r": lst}, "skipped": {}, "conflict": {}, "chunk_ids": []}, "w")["failed"]["r"])
d = case["damaged"]
try:
    fmt.block_may_contain("parts/x.jsonl.gz", 100, 50, "g", base64.b64decode(d["bytes"]), d["ask"], 5, d["docs"])
    out["damaged"] = "no error"
except CorruptObjectError as err:
    out["damaged"] = str(err)
import gzip
out["malformed"] = []
for entry in ([0, 1, 0, "g", "AA=="], [0, 1, 1, "g", ""], [0, 1, 1, "f", ""], [0, 1, 2, "g", "AA=="]):
    member = gzip.compress(json.dumps({"type": "doc_filters", "k": 5, "blocks": [entry]}).encode() + b"\\n")
    try:
        fmt.parse_filters_member(member, "parts/x.jsonl.gz", "s", False)
        out["malformed"].append("read")
    except CorruptObjectError as err:
        out["malformed"].append(str(err))
import zlib
out["fences"] = []
for raw in (bytes([1, 5, 0x61, 0x62]), bytes([2, 1, 0x61])):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    try:
        fmt.block_may_contain("parts/x.jsonl.gz", 0, 9, "f", c.compress(raw) + c.flush(), "zz", 5, 1)
        out["fences"].append("no error")
    except CorruptObjectError as err:
        out["fences"].append(str(err))
print(json.dumps(out))
`;

test('Python reads what TypeScript writes: Golomb-coded sets, fences and document lists of odd ids', () => {
  const absent = Array.from({ length: 300 }, (_, i) => `absent-${i}`);
  const sets = [ODD, [...gids, ...ODD], gids, ['only'], ['\uD800']].flatMap((ids) => {
    const set = new Set(ids);
    const ask = [...set, ...absent];
    const g = golombFilter(set);
    const f = fenceFilter(set);
    return [
      {
        kind: 'g',
        docs: set.size,
        bytes: Buffer.from(g).toString('base64'),
        ask,
        ts: ask.map((d) => golombMayContain(g, set.size, d)),
      },
      {
        kind: 'f',
        docs: set.size,
        bytes: Buffer.from(f).toString('base64'),
        ask,
        ts: ask.map((d) => fenceContains(f, d)),
      },
    ];
  });
  // TypeScript itself: every id held.
  for (const s of sets) expect(s.ts.slice(0, s.ask.length - absent.length).every(Boolean)).toBe(true);
  const lists = ODD.flatMap((odd) => [
    [odd, `${P}7086727600000`, `${P}7086727600001`],
    [`${P}7086727600000`, odd, `${P}7086727600001`, odd, `${P}7086727599000`],
    [`${odd}1`, `${odd}2`, `${odd}900`],
  ]);
  const stored = lists.map(
    (l) => compactDetails(details({ chunk_ids: [], failed: { r: l }, skipped: {} })).failed.r,
  );
  const big = new Set(gids);
  const g = golombFilter(big);
  const damaged = {
    bytes: Buffer.from(g.subarray(0, 4)).toString('base64'),
    docs: big.size,
    ask: gids[gids.length - 1],
  };
  const r = spawnSync(PYTHON, ['-c', SCRIPT], {
    cwd: ROOT,
    encoding: 'utf8',
    input: JSON.stringify({ sets, lists: stored, damaged }),
  });
  if (r.error) throw r.error;
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout) as {
    sets: boolean[][];
    lists: unknown[][];
    damaged: string;
    malformed: string[];
    fences: string[];
  };
  sets.forEach((s, i) => {
    expect([s.kind, i, out.sets[i]]).toEqual([s.kind, i, s.ts]);
  });
  lists.forEach((l, i) => {
    expect(out.lists[i]).toEqual(l);
  });
  // Entries that can only be damage (no ids, no bytes, a set too short for its count) are refused.
  expect(out.malformed).toEqual(
    Array(4).fill('corrupt object parts/x.jsonl.gz: document filters are malformed'),
  );
  expect(out.fences).toEqual([
    'corrupt object parts/x.jsonl.gz: document filter of the block at bytes 0-8: truncated',
    'corrupt object parts/x.jsonl.gz: document filter of the block at bytes 0-8: unknown entry tag 2',
  ]);
  expect(out.damaged).toContain('parts/x.jsonl.gz');
  expect(out.damaged).toContain('100-149');
});
