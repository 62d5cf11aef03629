import { BLOCK_BYTES, candidateBlocks, inflateBlock, isFiltersMember } from '../../shared/archive/format';
import { partBlocks, redactPart } from '../../shared/redact/redact-part';
import { buildPart, details } from '../support/archive-fixture';

/**
 * Redaction rewrites a part's blocks in place (redact-part.ts): a block the writer filled to exactly
 * BLOCK_BYTES of lines grows past it by the notes of its redacted records, as the spec says
 * (docs/archive-format.md, "Parts"), and every other document is still found through the rebuilt
 * filters.
 */
const DOC = 'd';
const jobs = (pad: number) =>
  Array.from({ length: 400 }, (_, i) => ({
    jobId: `job-${String(i).padStart(5, '0')}`,
    details: details({
      chunk_ids: ['p0'],
      failed: { r: [DOC, `keep-${String(i).padStart(5, '0')}-${'y'.repeat(pad)}`] },
    }),
  }));
const blockLines = (m: Buffer) => inflateBlock(m, 'k').toString('utf8');

test("a block filled to the limit grows by its records' notes only, and keeps every other document findable", async () => {
  // Job lines of exactly 1,024 bytes: BLOCK_BYTES / 1,024 of them fill a block.
  const probe = await buildPart({ shopId: 'acme', month: '2026-01', jobs: jobs(0) });
  const line0 = blockLines(partBlocks(probe.bytes, 'k')[1] as Buffer).split('\n')[0] as string;
  const pad = 1023 - Buffer.byteLength(line0);
  const part = await buildPart({ shopId: 'acme', month: '2026-01', jobs: jobs(pad) });
  const all = partBlocks(part.bytes, part.partKey);
  expect(isFiltersMember(all[all.length - 1] as Buffer)).toBe(true);
  const members = all.slice(0, -1);
  const full = members.filter((m) => blockLines(m).length === BLOCK_BYTES);
  expect(full.length).toBeGreaterThan(0);
  const r = redactPart(members, {
    shopId: 'acme',
    docId: DOC,
    at: '2026-11-25T10:00:00.000Z',
    where: part.partKey,
  });
  expect(r.removed).toBe(400);
  // Each redacted record grows by its note less the id removed (`"d",`): the spec's stated excess.
  const note = `,"redacted":[{"at":"2026-11-25T10:00:00.000Z","listings":1}]`.length - '"d",'.length;
  members.forEach((m, i) => {
    const before = blockLines(m);
    const records = before.split('\n').filter((l) => l.includes('"type":"job"')).length;
    expect(Buffer.byteLength(blockLines(r.members[i] as Buffer))).toBe(
      Buffer.byteLength(before) + records * note,
    );
  });
  // A full block now holds more than BLOCK_BYTES of lines (the spec says a redacted block may).
  expect(Math.max(...r.members.map((m) => Buffer.byteLength(blockLines(m))))).toBeGreaterThan(BLOCK_BYTES);
  for (let i = 0; i < 400; i += 37) {
    const id = `keep-${String(i).padStart(5, '0')}-${'y'.repeat(pad)}`;
    expect(candidateBlocks(r.filters, id, 'k').length).toBeGreaterThan(0);
  }
});
