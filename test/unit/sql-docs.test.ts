import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DOCUMENTED_QUERIES } from '../../shared/sql/queries';

/** docs/search-and-sql.md shows each documented query exactly as shared/sql/queries.ts holds it. */
const doc = readFileSync(path.join(__dirname, '../../docs/search-and-sql.md'), 'utf8');

const shown = (): Map<string, string> => {
  const out = new Map<string, string>();
  for (const m of doc.matchAll(/<!-- query: ([a-z-]+) -->\n[^\n]*\n\n```sql\n([\s\S]*?)\n```/g)) {
    if (m[1] && m[2] !== undefined) out.set(m[1], m[2]);
  }
  return out;
};

test('every documented query is in the docs, verbatim, and the docs show no other', () => {
  const blocks = shown();
  expect([...blocks.keys()].sort()).toEqual(DOCUMENTED_QUERIES.map((q) => q.name).sort());
  for (const q of DOCUMENTED_QUERIES) expect(blocks.get(q.name)).toBe(q.sql);
  // Every ```sql block of the page is one of them.
  expect(doc.match(/```sql\n/g)).toHaveLength(DOCUMENTED_QUERIES.length);
});
