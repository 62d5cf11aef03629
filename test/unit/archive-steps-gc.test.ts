import { pendingPrefix, stagedDocsByPart } from '../../shared/archive/format';

test('staging docs are grouped by part name; anything else under the prefix is ignored', () => {
  const prefix = pendingPrefix('shop', '2026-01');
  const p1 = 'part-20260101T000000Z-aaaaaaaa.jsonl.gz';
  const p2 = 'part-20260102T000000Z-bbbbbbbb.jsonl.gz';
  const o = (name: string) => ({ key: `${prefix}${name}`, size: 1, etag: 'e', lastModified: undefined });
  const byPart = stagedDocsByPart(prefix, [o(`${p1}.json`), o(`${p2}.json`), o('notes.txt'), o('x.json')]);
  expect([...byPart.keys()]).toEqual([p1, p2]);
  expect(byPart.get(p1)?.pending?.key).toBe(`${prefix}${p1}.json`);
  expect(byPart.get(p2)?.pending?.key).toBe(`${prefix}${p2}.json`);
});
