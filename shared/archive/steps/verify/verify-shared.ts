import { CorruptObjectError } from '../../../errors';
import { type ByteRange, type Located, partDocFilters, shopLines } from '../../format';
import type { StagedPart } from '../archive/staged';
import { checkedBlockDocs, linesProblem, memberRanges } from './verify-checks';

/**
 * One shop's records in a shared part whose blocks are cut across shops (shared-blocks.ts): its
 * manifest as built alone (`staged`, proven against the segment's own bytes), each record moved by
 * `relocate` to the block it now lies in, checked against the STORED blocks as verify checks a part:
 * each of the shop's blocks is a block of the part, the shop's lines in it (its header's framing)
 * are exactly its records in order, each decodes to the expected record with the expected digest, its
 * header is the first of them. Returns the manifest at the part's offsets, the document filters
 * rebuilt per block from the shop's stored records. Pure; throws through `fail`.
 */
export const relocatedManifest = (
  staged: StagedPart,
  part: {
    readonly size: number;
    readonly sha256: string;
    readonly blocks: readonly ByteRange[];
    /** The shared part's filters member (none: no shop's block lists a document). */
    readonly filters?: ByteRange | undefined;
  },
  inflated: (block: ByteRange) => Buffer,
  relocate: (at: Located) => Located,
  where: string,
  fail: (reason: string) => never,
): StagedPart => {
  const { filters: _own, ...rest } = staged;
  const m: StagedPart = {
    ...rest,
    ...(part.filters ? { filters: part.filters } : {}),
    size: part.size,
    sha256: part.sha256,
    header: relocate(staged.header),
    platform_data: Object.fromEntries(
      Object.entries(staged.platform_data).map(([ref, r]) => [ref, { ...relocate(r), sha256: r.sha256 }]),
    ),
    jobs: Object.fromEntries(Object.entries(staged.jobs).map(([id, e]) => [id, { ...e, ...relocate(e) }])),
  };
  const blocks = new Map(part.blocks.map((b) => [b.offset, b]));
  const docs: Array<ByteRange & { docs: Set<string> }> = [];
  for (const [i, range] of memberRanges(m).entries()) {
    if (part.filters && range.offset >= part.filters.offset) fail(`${range.id}: lies in the filters member`);
    const b = blocks.get(range.offset);
    if (!b || b.length !== range.length) fail(`${range.id}: not a block of the part`);
    let text: Buffer;
    try {
      text = inflated(range);
    } catch (err) {
      if (err instanceof CorruptObjectError) fail(`${range.id}: ${err.reason}`);
      throw err;
    }
    const own = shopLines(text, staged.shop_id);
    const base = own.byteOffset - text.byteOffset;
    const lines = range.lines.map((l) => ({ ...l, line: { ...l.line, offset: l.line.offset - base } }));
    const tiles = linesProblem({ ...range, lines }, own.length, i === 0);
    if (tiles) fail(tiles);
    const found = checkedBlockDocs(m, own, lines, where, fail);
    docs.push({ offset: range.offset, length: range.length, docs: found });
  }
  const filters = partDocFilters(docs);
  return { ...m, ...(filters.blocks.length > 0 ? { doc_filters: filters } : {}) };
};
