import { deflateBlock } from './codec';
import {
  INDEX_BLOCK_BYTES,
  INDEX_HEADER_BYTES,
  type IndexBlock,
  type IndexedJob,
  type IndexedPart,
  JOB_FILTER_K,
  JOB_FILTER_MIN_K,
  jobEntries,
  type MonthIndex,
  type SettledPart,
  storedCompletion,
} from './month-index';
import { blockDirectory, commonValue, partBlocks, thinJobFilter } from './month-index-settle';
import { INDEX_FORMAT } from './version';

/** The month index's bytes as the archiver writes them (docs/archive-format.md, "Month index"). */

const gzipLine = (value: unknown): Buffer => deflateBlock(Buffer.from(`${JSON.stringify(value)}\n`, 'utf8'));

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * An entry as stored: its part by position in `parts` (absent: 0), its block (absent: 0)
 * and its platform data's (`pd_block`: absent when in the job's own block, as most are; `null`: none)
 * by number in that part's `block_bytes`, its
 * completion (`completed`: milliseconds from the month's start, storedCompletion); no status or
 * counts (the job record's), no line ranges (a lookup finds the record in the block by id), no
 * digest, no platform ref; commit and delete times only when they differ from the part's; sources
 * only until they are deleted.
 */
const storedEntry = (
  e: IndexedJob,
  month: string,
  part: {
    ordinal: number;
    committed_at: string;
    deleted_at: string | null;
    deleted_by: string | null;
    numbers: Map<number, number>;
  },
): Record<string, unknown> => ({
  // Part 0 and block 0 (most entries of most months) go without saying.
  ...(part.ordinal !== 0 ? { part: part.ordinal } : {}),
  ...(part.numbers.get(e.offset) !== 0 ? { block: part.numbers.get(e.offset) } : {}),
  // Platform data in the job's own block (most: a payload is written once per block using it) goes
  // without saying; none is null.
  ...(e.platform_data === null
    ? { pd_block: null }
    : e.platform_data.offset !== e.offset
      ? { pd_block: part.numbers.get(e.platform_data.offset) }
      : {}),
  completed: storedCompletion(month, e.completed_at),
  ...(e.sources.length > 0 ? { sources: e.sources } : {}),
  ...(e.deleted_at !== part.deleted_at ? { deleted_at: e.deleted_at } : {}),
  ...((e.deleted_by ?? null) !== part.deleted_by ? { deleted_by: e.deleted_by ?? null } : {}),
  ...(e.objects_deleted !== undefined ? { deleted: e.objects_deleted } : {}),
  ...(e.committed_at !== part.committed_at ? { committed_at: e.committed_at } : {}),
  ...(e.rearchive !== undefined ? { rearchive: e.rearchive } : {}),
});

/** A part's fields as stored, with its blocks' lengths and its delete (shared by settled and unsettled parts). */
const storedPart = (
  p: IndexedPart,
  lengths: readonly number[],
  deletedAt: string | null,
  deletedBy: string | null,
): Record<string, unknown> => {
  // One block, all of the part before its filters member: `block_bytes` goes without saying.
  const oneBlock = lengths.length === 1 && lengths[0] === p.size - (p.filters?.length ?? 0);
  return {
    name: p.name,
    size: p.size,
    etag: p.etag,
    run_id: p.run_id,
    committed_at: p.committed_at,
    job_count: p.job_count,
    ...(p.shared ? { shared: true } : {}),
    deleted_at: deletedAt,
    ...(deletedAt !== null && deletedBy !== p.run_id ? { deleted_by: deletedBy } : {}),
    ...(oneBlock ? {} : { block_bytes: lengths }),
    ...(p.filters ? { filters_bytes: p.filters.length } : {}),
  };
};

/** A settled part as stored: the part, its summary, no entries (docs/archive-format.md, "Settled parts"). */
const storedSettled = (p: IndexedPart, s: SettledPart): Record<string, unknown> => ({
  ...storedPart(p, s.block_bytes, s.deleted_at, s.deleted_by),
  dir: s.dir,
  last: s.last,
  ...(s.dir_pd !== undefined && s.dir_pd.length > 0 ? { dir_pd: s.dir_pd } : {}),
  ...(s.job_filter !== undefined
    ? {
        jf: Buffer.from(s.job_filter.bytes).toString('base64'),
        ...(s.job_filter.k !== JOB_FILTER_K ? { jk: s.job_filter.k } : {}),
      }
    : {}),
});

/**
 * The settled parts' job filters thinned until the header member (gzipped, without its jobs) fits
 * INDEX_HEADER_BYTES: the largest filter first, its Rice parameter lowered by one (twice the false
 * matches, ~1 bit a job less) down to JOB_FILTER_MIN_K, then left out (the part's directory alone
 * still names one block a job). The index itself when it fits.
 */
const withinHeaderBytes = (index: MonthIndex, headerOf: (i: MonthIndex) => unknown): MonthIndex => {
  let current = index;
  for (;;) {
    if (!current.parts.some((p) => p.settled?.job_filter)) return current;
    if (gzipLine(headerOf(current)).length <= INDEX_HEADER_BYTES) return current;
    let at = -1;
    current.parts.forEach((p, i) => {
      const size = p.settled?.job_filter?.bytes.length ?? -1;
      if (size >= 0 && (at < 0 || size > (current.parts[at]?.settled?.job_filter?.bytes.length ?? -1)))
        at = i;
    });
    const p = current.parts[at] as IndexedPart & { settled: SettledPart };
    const f = p.settled.job_filter as NonNullable<SettledPart['job_filter']>;
    const { job_filter: _f, ...rest } = p.settled;
    const settled: SettledPart =
      f.k > JOB_FILTER_MIN_K ? { ...rest, job_filter: thinJobFilter(f, p.job_count) } : rest;
    current = { ...current, parts: current.parts.map((q, i) => (i === at ? { ...p, settled } : q)) };
  }
};

/** Each part as stored, with what its entries need (its common delete, block numbers, position). */
const storedParts = (index: MonthIndex) => {
  const all = Object.values(index.jobs).flat();
  const byPart = new Map<string, IndexedJob[]>();
  for (const e of all) {
    const of = byPart.get(e.part);
    if (of) of.push(e);
    else byPart.set(e.part, [e]);
  }
  const idsByPart = new Map<string, Array<{ id: string; e: IndexedJob }>>();
  for (const [id, list] of Object.entries(index.jobs))
    for (const e of list) {
      const of = idsByPart.get(e.part);
      if (of) of.push({ id, e });
      else idsByPart.set(e.part, [{ id, e }]);
    }
  const parts = index.parts.map((p, ordinal) => {
    const entries = byPart.get(p.name) ?? [];
    if (p.settled) {
      if (entries.length > 0)
        throw new Error(`index: part ${p.name} is settled, yet ${entries.length} entries point at it`);
      return {
        stored: storedSettled(p, p.settled),
        common: { deleted_at: p.settled.deleted_at, deleted_by: p.settled.deleted_by },
        numbers: new Map<number, number>(),
        ordinal,
      };
    }
    const { lengths, numbers } = partBlocks(
      entries.flatMap((e) => (e.platform_data ? [e, e.platform_data] : [e])),
    );
    // What most entries share; entries equal to it say nothing. The deleting run is most often the
    // committing one, and a part is most often one block: both left out then.
    const deletedAt = commonValue(entries.map((e) => e.deleted_at));
    const deletedBy = deletedAt === null ? null : commonValue(entries.map((e) => e.deleted_by));
    // An unsettled part that meets the condition (deleted, not yet settled by the model) keeps its
    // entries and also gets its directory: a lookup may probe by it, the entries being the records'.
    const directory = blockDirectory(p, idsByPart.get(p.name) ?? [], lengths, numbers, {
      deleted_at: deletedAt,
      deleted_by: deletedBy,
    });
    return {
      stored: {
        ...storedPart(p, lengths, deletedAt, deletedBy),
        ...(directory ?? {}),
      },
      common: { deleted_at: deletedAt, deleted_by: deletedBy },
      numbers,
      ordinal,
    };
  });
  return parts;
};

/**
 * The index as stored (`Content-Encoding: gzip`): JSONL in gzip members. The first member is
 * the header — format, shop, month, parts (each with its blocks' lengths) — and either the jobs
 * themselves (a month whose entries fit in one block) or `blocks`: the byte range and job id range of
 * each further member, each holding the entries of a run of job ids in code-point order, ≤
 * INDEX_BLOCK_BYTES of JSON. Document filters are not here: each part carries its own, in its
 * filters member (docs/archive-format.md, "Parts"). `gzip -dc` reads it all; a lookup reads the header and one block (shared/reader/archive-reads.ts).
 */
export const serializeMonthIndex = (input: MonthIndex): Buffer => {
  let index = input;
  let parts = storedParts(index);
  const { jobs: _jobs, parts: _parts, ...head } = index;
  const headerOf = (ps: ReturnType<typeof storedParts>) => ({
    ...head,
    format: INDEX_FORMAT,
    parts: ps.map((p) => p.stored),
  });
  // Job filters thinned (or left out) while they would take the header past INDEX_HEADER_BYTES.
  if (
    index.parts.some((p) => p.settled?.job_filter) &&
    gzipLine(headerOf(parts)).length > INDEX_HEADER_BYTES
  ) {
    index = withinHeaderBytes(index, (i) => headerOf(storedParts(i)));
    parts = storedParts(index);
  }
  // Each part's view for its entries, built once (not once per entry).
  const partOf = new Map(
    index.parts.map((p, i) => {
      const { common, numbers } = parts[i] as (typeof parts)[number];
      return [p.name, { committed_at: p.committed_at, ...common, numbers, ordinal: i }];
    }),
  );
  const ids = Object.keys(index.jobs).sort(byCodePoint);
  const chunks: Array<Record<string, unknown>> = [];
  let current: Record<string, unknown> = {};
  let size = 0;
  for (const id of ids) {
    const entries = jobEntries(index.jobs, id).map((e) => {
      const p = partOf.get(e.part);
      if (!p) throw new Error(`index: entry of job ${id} names part ${e.part}, which is not in the index`);
      return storedEntry(e, index.month, p);
    });
    const bytes = JSON.stringify(id).length + JSON.stringify(entries).length + 2;
    if (size > 0 && size + bytes > INDEX_BLOCK_BYTES) {
      chunks.push(current);
      current = {};
      size = 0;
    }
    current[id] = entries;
    size += bytes;
  }
  if (size > 0 || chunks.length === 0) chunks.push(current);
  const header = headerOf(parts);
  if (chunks.length === 1) return gzipLine({ ...header, jobs: chunks[0] });
  const members = chunks.map((jobs) => gzipLine({ jobs }));
  let offset = 0;
  const blocks: IndexBlock[] = chunks.map((jobs, i) => {
    const keys = Object.keys(jobs);
    const length = (members[i] as Buffer).length;
    const b = { first: keys[0] as string, last: keys[keys.length - 1] as string, offset, length };
    offset += length;
    return b;
  });
  return Buffer.concat([gzipLine({ ...header, blocks }), ...members]);
};

/** Object headers of a stored index. */
export const MONTH_INDEX_HEADERS = { ContentType: 'application/json', ContentEncoding: 'gzip' } as const;
