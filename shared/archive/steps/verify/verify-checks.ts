import { isDeepStrictEqual } from 'node:util';
import { jobPrefix } from '../../../details';
import { CorruptObjectError } from '../../../errors';
import {
  type BlockFilter,
  type ByteRange,
  countDetails,
  decodeLine,
  documentListings,
  type Located,
  type PartDocFilters,
  type PartRecord,
  parseFiltersMember,
  storedDocFilters,
  type VerifiedPart,
} from '../../format';
import type { StagedPart } from '../archive/staged';
import type { PlannedJob } from '../types';

/**
 * Pure checks of the verify step: which record each byte range must hold, whether a decoded member is
 * that record, and the VerifiedPart (exactly what commit adds to the index) built from a manifest the
 * part's bytes were proven to match.
 */
export type Expected =
  | { readonly kind: 'header' }
  | { readonly kind: 'platform_data'; readonly ref: string; readonly sha256: string }
  | { readonly kind: 'job'; readonly jobId: string; readonly entry: StagedPart['jobs'][string] };

/** One record the manifest puts in a block: its line there and what it must be. */
export interface LineCheck {
  readonly id: string;
  readonly line: ByteRange;
  readonly expect: Expected;
}

/** One block (gzip member) of the part and the records it must hold, in line order. */
export type MemberRange = ByteRange & { readonly id: string; readonly lines: readonly LineCheck[] };

/** Every block the manifest declares, in byte order, each with its records in line order. */
export const memberRanges = (m: StagedPart): MemberRange[] => {
  const blocks = new Map<number, { offset: number; length: number; lines: LineCheck[] }>();
  const add = (r: Located, id: string, expect: Expected) => {
    const b = blocks.get(r.offset) ?? { offset: r.offset, length: r.length, lines: [] };
    blocks.set(r.offset, b);
    if (b.length !== r.length) b.length = -1; // two lengths for one block: tilingProblem refuses it
    b.lines.push({ id, line: r.line ?? { offset: -1, length: 0 }, expect });
  };
  add(m.header, 'header', { kind: 'header' });
  for (const [ref, r] of Object.entries(m.platform_data)) {
    add(r, `platform_data ${ref}`, { kind: 'platform_data', ref, sha256: r.sha256 });
  }
  for (const [jobId, entry] of Object.entries(m.jobs))
    add(entry, `job ${jobId}`, { kind: 'job', jobId, entry });
  return [...blocks.values()]
    .sort((a, b) => a.offset - b.offset)
    .map((b) => ({
      offset: b.offset,
      length: b.length,
      id: `block@${b.offset}`,
      lines: b.lines.sort((x, y) => x.line.offset - y.line.offset),
    }));
};

/** The id memberRanges' callers give the part's trailing document filters member. */
export const FILTERS_MEMBER = 'filters';

/** The blocks and, last, the filters member (`FILTERS_MEMBER`, no lines): every member of the part. */
export const partBlocks = (m: StagedPart): MemberRange[] => [
  ...memberRanges(m),
  ...(m.filters ? [{ ...m.filters, id: FILTERS_MEMBER, lines: [] }] : []),
];

/**
 * Why the stored filters member is not the staged filters (`doc_filters`, each already checked
 * against its block's records), or null: it must hold exactly them, as filtersMember writes them.
 */
export const filtersMemberProblem = (m: StagedPart, bytes: Uint8Array, where: string): string | null => {
  if (!m.doc_filters) return 'a filters member but no staged filters';
  let stored: PartDocFilters;
  try {
    stored = parseFiltersMember(bytes, where);
  } catch (err) {
    if (err instanceof CorruptObjectError) return `filters member: ${err.reason}`;
    throw err;
  }
  return isDeepStrictEqual(storedDocFilters(stored), storedDocFilters(m.doc_filters))
    ? null
    : 'the stored document filters differ from the built ones';
};

/** Why a block's declared lines do not tile its inflated bytes exactly (no gap, no overlap), or null. */
export const linesProblem = (b: MemberRange, inflatedLength: number, first: boolean): string | null => {
  let at = 0;
  for (const l of b.lines) {
    if (l.line.offset !== at)
      return `${b.id}: expected a line at byte ${at}, found ${l.id} at ${l.line.offset}`;
    if (l.line.length <= 0) return `${b.id}: empty line for ${l.id}`;
    at += l.line.length;
  }
  if (at !== inflatedLength)
    return `${b.id}: lines end at byte ${at} but the block inflates to ${inflatedLength}`;
  if (first !== (b.lines[0]?.expect.kind === 'header'))
    return 'the part header must be the first line of the first block';
  return null;
};

/** Why the manifest does not match the run's plan, or null. */
export const planProblem = (
  m: StagedPart,
  planned: readonly PlannedJob[],
  archivedCount: number,
): string | null => {
  const jobIds = Object.keys(m.jobs);
  if (jobIds.length !== archivedCount)
    return `manifest has ${jobIds.length} jobs, archive reported ${archivedCount}`;
  const byId = new Map(planned.map((j) => [j.job_id, j]));
  for (const [jobId, e] of Object.entries(m.jobs)) {
    const p = byId.get(jobId);
    if (!p) return `job ${jobId} was not planned`;
    if (p.completed_at !== e.completed_at || p.status !== e.status)
      return `job ${jobId} differs from its plan`;
  }
  // One pass over the jobs, not one per record (a part holds hundreds of each).
  const used = new Set(Object.values(m.jobs).map((e) => e.platform_data_ref));
  for (const [ref, r] of Object.entries(m.platform_data)) {
    if (!used.has(ref)) return `platform data ${ref} is not used`;
    if (!r.sha256) return `platform data ${ref} has no digest`;
  }
  return null;
};

/** Why `record` (with line digest `sha256`) is not what `expect` says, or null. */
export const recordProblem = (
  m: StagedPart,
  expect: Expected,
  record: PartRecord,
  sha256: string,
): string | null => {
  switch (expect.kind) {
    case 'header':
      if (record.type !== 'part') return 'first member is not the part header';
      if (record.shop_id !== m.shop_id || record.month !== m.month) return 'header names another part';
      if (record.run_id !== m.run_id) return 'header has another run';
      return null;
    case 'platform_data':
      if (record.type !== 'platform_data' || record.ref !== expect.ref)
        return `expected platform data ${expect.ref}`;
      // The line digest proves the payload.
      if (sha256 !== expect.sha256) return `platform data ${expect.ref}: digest differs`;
      return null;
    case 'job': {
      const { jobId, entry } = expect;
      if (record.type !== 'job' || record.job_id !== jobId) return `expected the record of job ${jobId}`;
      // A line's own shop_id (shared parts' segments) when it has one, else the part's: a line naming
      // another shop than its segment's header is refused here.
      if (record.shop_id !== m.shop_id) return `job ${jobId}: record names shop ${record.shop_id}`;
      if (sha256 !== entry.sha256) return `job ${jobId}: record digest differs`;
      if (record.job.completed_at !== entry.completed_at || record.job.status !== entry.status) {
        return `job ${jobId}: status or completed_at differs`;
      }
      if (!isDeepStrictEqual(countDetails(record.details), entry.counts))
        return `job ${jobId}: detail counts differ`;
      if (record.platform_data_ref !== entry.platform_data_ref)
        return `job ${jobId}: platform data ref differs`;
      if (entry.platform_data_ref !== null) {
        const pd = m.platform_data[entry.platform_data_ref];
        const before =
          pd !== undefined &&
          (pd.offset < entry.offset ||
            (pd.offset === entry.offset && (pd.line?.offset ?? 0) < (entry.line?.offset ?? 0)));
        if (!before) return `job ${jobId}: its platform data is not stored before it`;
      }
      // Records name each source by key and size (the manifest keeps ETag and digest).
      const norm = (s: readonly { key: string; size: number }[]) => s.map(({ key, size }) => ({ key, size }));
      if (!isDeepStrictEqual(norm(record.sources), norm(entry.sources)))
        return `job ${jobId}: sources differ from what was read`;
      const prefix = jobPrefix(jobId);
      if (entry.sources.some((s) => !s.key.startsWith(prefix)))
        return `job ${jobId}: a source lies outside its prefix`;
      return null;
    }
  }
};

/**
 * Why a block's staged document filter does not describe its stored records (`docs`: the distinct
 * document ids of the block's job records), or null: a block listing documents has exactly one
 * filter, counting them; one listing none has none. The filter bytes are not rebuilt here: the builder
 * made them from these very records (the part's bytes are proven to be what it wrote), and a block of
 * 60,000 ids costs seconds to filter.
 */
export const filterProblem = (
  staged: BlockFilter | undefined,
  range: ByteRange,
  docs: ReadonlySet<string>,
): string | null => {
  if (docs.size === 0)
    return staged ? `block@${range.offset}: a document filter for a block that lists no document` : null;
  if (!staged) return `block@${range.offset}: no document filter for its ${docs.size} documents`;
  if (staged.length !== range.length || staged.docs !== docs.size || staged.bytes.length === 0)
    return `block@${range.offset}: document filter counts ${staged.docs} documents, its records list ${docs.size}`;
  return null;
};

/** The verified part: index entries of the part and its jobs (commit adds committed_at / deleted_at). */
export const toVerifiedPart = (m: StagedPart): VerifiedPart => ({
  part: {
    name: m.part,
    key: m.part_key,
    size: m.size,
    etag: m.etag,
    sha256: m.sha256,
    run_id: m.run_id,
    job_count: Object.keys(m.jobs).length,
    bytes_in: m.bytes_in,
    ...(m.filters ? { filters: m.filters } : {}),
  },
  jobs: Object.fromEntries(
    Object.entries(m.jobs).map(([jobId, e]) => {
      const pd = e.platform_data_ref === null ? undefined : m.platform_data[e.platform_data_ref];
      return [
        jobId,
        {
          part: m.part,
          offset: e.offset,
          length: e.length,
          ...(e.line ? { line: e.line } : {}),
          sha256: e.sha256,
          completed_at: e.completed_at,
          platform_data:
            pd && e.platform_data_ref
              ? {
                  offset: pd.offset,
                  length: pd.length,
                  ...(pd.line ? { line: pd.line } : {}),
                  ref: e.platform_data_ref,
                }
              : null,
          sources: e.sources.map(({ key, size, etag }) => ({ key, size, etag })),
        },
      ];
    }),
  ),
});

/**
 * Each line of an inflated block (offsets relative to `bytes`) decoded and checked against what the
 * manifest expects there; returns the document ids its job records list (what its filter must hold).
 * Throws through `fail` at the first mismatch.
 */
export const checkedBlockDocs = (
  m: StagedPart,
  bytes: Buffer,
  lines: readonly LineCheck[],
  where: string,
  fail: (reason: string) => never,
): Set<string> => {
  const docs = new Set<string>();
  for (const l of lines) {
    let decoded: ReturnType<typeof decodeLine>;
    try {
      decoded = decodeLine(bytes.subarray(l.line.offset, l.line.offset + l.line.length), where, m.shop_id);
    } catch (err) {
      if (err instanceof CorruptObjectError) fail(`${l.id}: ${err.reason}`);
      throw err;
    }
    const problem = recordProblem(m, l.expect, decoded.record, decoded.sha256);
    if (problem) fail(problem);
    if (decoded.record.type === 'job')
      for (const d of documentListings(decoded.record.details)) docs.add(d.doc_id);
  }
  return docs;
};
