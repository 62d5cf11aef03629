import {
  BlockSlicer,
  decodeLine,
  inflateBlock,
  PartBuilder,
  type PartRecord,
} from '../../shared/archive/format';
import type { StagedPart } from '../../shared/archive/steps/archive/staged';
import type { PlannedJob } from '../../shared/archive/steps/types';
import {
  FILTERS_MEMBER,
  filterProblem,
  filtersMemberProblem,
  linesProblem,
  memberRanges,
  partBlocks,
  planProblem,
  recordProblem,
  toVerifiedPart,
} from '../../shared/archive/steps/verify/verify-checks';

const meta = (completedAt: string) => ({
  status: 'FAILED',
  created_at: null,
  started_at: null,
  completed_at: completedAt,
  job_type: null,
  platform: null,
  total_items: 1,
  processed_items: 0,
  failed_items: 1,
  skipped_items: 0,
  conflict_items: 0,
  retry_count: null,
  error_message: null,
});

/** A real part built in memory, and its manifest as the archive step stages it. */
const build = async () => {
  const members: Buffer[] = [];
  const b = new PartBuilder(
    { shopId: 's', month: '2026-01', partName: 'p.jsonl.gz', partKey: 'k', runId: 'r', createdAt: 't' },
    async (m) => {
      members.push(m);
    },
  );
  await b.writeHeader();
  const details = { chunk_ids: ['p0'], failed: { x: ['d1'] }, skipped: {}, conflict: {} };
  await b.addJob({
    jobId: 'a',
    meta: meta('2026-01-02T00:00:00.000Z'),
    details,
    platformData: { v: 1 },
    sources: [{ key: 'job-details/a/f.json.gz', size: 3, etag: 'e', sha256: 'h' }],
  });
  await b.addJob({
    jobId: 'b',
    meta: meta('2026-01-03T00:00:00.000Z'),
    details,
    platformData: { v: 1 },
    sources: [],
  });
  const staged: StagedPart = { ...(await b.finish()), etag: 'etag' };
  return { bytes: Buffer.concat(members), staged };
};

/** Every record of the part: each block inflated alone, each declared line decoded. */
const records = (bytes: Buffer, staged: StagedPart) =>
  memberRanges(staged).flatMap((b) => {
    const inflated = inflateBlock(bytes.subarray(b.offset, b.offset + b.length), 'k');
    return b.lines.map((r) => ({
      r,
      ...decodeLine(inflated.subarray(r.line.offset, r.line.offset + r.line.length), 'k', 's'),
    }));
  });

const plannedOf = (s: StagedPart): PlannedJob[] =>
  Object.entries(s.jobs).map(
    ([job_id, e]) => ({ job_id, status: e.status, completed_at: e.completed_at }) as PlannedJob,
  );

test('the blocks of a built part tile it; its lines, in order: header, shared platform data, jobs', async () => {
  const { bytes, staged } = await build();
  const ranges = memberRanges(staged);
  expect(ranges).toHaveLength(1);
  expect(ranges.flatMap((r) => r.lines.map((l) => l.expect.kind))).toEqual([
    'header',
    'platform_data',
    'job',
    'job',
  ]);
  // The blocks, then the filters member (no lines): every member of the part, tiling it.
  expect(BlockSlicer.tilingProblem(ranges, bytes.length)).toMatch(/members end at byte/);
  expect(partBlocks(staged).map((m) => m.id)).toEqual([ranges[0]?.id, FILTERS_MEMBER]);
  expect(BlockSlicer.tilingProblem(partBlocks(staged), bytes.length)).toBeNull();
  const tail = staged.filters;
  if (!tail) throw new Error('no filters member');
  expect(filtersMemberProblem(staged, bytes.subarray(tail.offset), 'k')).toBeNull();
  expect(filtersMemberProblem(staged, bytes.subarray(0, ranges[0]?.length), 'k')).toMatch(/filters member/);
  expect(
    filtersMemberProblem({ ...staged, doc_filters: { k: 7, blocks: [] } }, bytes.subarray(tail.offset), 'k'),
  ).toMatch(/differ from the built ones/);
  const [block] = ranges;
  if (!block) throw new Error('no block');
  const inflated = inflateBlock(bytes.subarray(block.offset, block.offset + block.length), 'k');
  expect(linesProblem(block, inflated.length, true)).toBeNull();
  expect(linesProblem(block, inflated.length + 1, true)).toMatch(/lines end at byte/);
  expect(linesProblem(block, inflated.length, false)).toMatch(/header must be the first line/);
  const gap = { ...block, lines: block.lines.slice(1) };
  expect(linesProblem(gap, inflated.length, false)).toMatch(/expected a line at byte 0/);
});

test('every member of a good part is exactly its expected record', async () => {
  const { bytes, staged } = await build();
  for (const { r, record, sha256 } of records(bytes, staged))
    expect(recordProblem(staged, r.expect, record, sha256)).toBeNull();
});

test.each<[string, (rec: PartRecord) => PartRecord, RegExp]>([
  [
    'another job in its place',
    (rec) => ({ ...rec, job_id: 'zz' }) as PartRecord,
    /expected the record of job a/,
  ],
  ['another shop', (rec) => ({ ...rec, shop_id: 'other' }) as PartRecord, /record names shop other/],
  [
    'other detail counts',
    (rec) => ({ ...rec, details: { chunk_ids: [], failed: {}, skipped: {}, conflict: {} } }) as PartRecord,
    /detail counts differ/,
  ],
  ['other sources', (rec) => ({ ...rec, sources: [] }) as PartRecord, /sources differ/],
  [
    'another completion',
    (rec) => ({ ...rec, job: { ...(rec as { job: object }).job, completed_at: 'x' } }) as PartRecord,
    /completed_at differs/,
  ],
])('a job record with %s is rejected', async (_what, change, reason) => {
  const { bytes, staged } = await build();
  const job = records(bytes, staged).find((x) => x.r.expect.kind === 'job');
  if (!job) throw new Error('no job');
  expect(recordProblem(staged, job.r.expect, change(job.record), job.sha256)).toMatch(reason);
});

test('a record whose digest is not the manifest’s is rejected', async () => {
  const { bytes, staged } = await build();
  const [header, pd, job] = records(bytes, staged);
  if (!header || !pd || !job) throw new Error('missing');
  expect(recordProblem(staged, job.r.expect, job.record, '0'.repeat(64))).toMatch(/record digest differs/);
  expect(recordProblem(staged, pd.r.expect, pd.record, 'x')).toMatch(/digest differs/);
  expect(
    recordProblem(staged, pd.r.expect, { type: 'platform_data', ref: '2', data: { v: 1 } }, pd.sha256),
  ).toMatch(/expected platform data 1/);
  expect(
    recordProblem(
      staged,
      header.r.expect,
      { ...(header.record as object), run_id: 'other' } as PartRecord,
      header.sha256,
    ),
  ).toMatch(/another run/);
  expect(recordProblem(staged, header.r.expect, job.record, job.sha256)).toMatch(/not the part header/);
});

test('a source outside the job’s own prefix is rejected (delete must never reach another job)', async () => {
  const { bytes, staged } = await build();
  const evil: StagedPart = {
    ...staged,
    jobs: {
      ...staged.jobs,
      a: {
        ...(staged.jobs.a as StagedPart['jobs'][string]),
        sources: [{ key: 'job-details/b/f.json.gz', size: 3, etag: 'e', sha256: 'h' }],
      },
    },
  };
  const job = records(bytes, evil).find((x) => x.r.id === 'job a');
  if (!job) throw new Error('no job');
  const rec = { ...(job.record as object), sources: evil.jobs.a?.sources } as unknown as PartRecord;
  expect(recordProblem(evil, job.r.expect, rec, job.sha256)).toMatch(/outside its prefix/);
});

describe('planProblem', () => {
  test('a manifest of planned jobs with the archive’s count is fine', async () => {
    const { staged } = await build();
    expect(planProblem(staged, plannedOf(staged), 2)).toBeNull();
  });
  test('a count other than the archive reported', async () => {
    const { staged } = await build();
    expect(planProblem(staged, plannedOf(staged), 3)).toMatch(/manifest has 2 jobs, archive reported 3/);
  });
  test('an unplanned job, or one planned with another completion', async () => {
    const { staged } = await build();
    expect(planProblem(staged, plannedOf(staged).slice(1), 2)).toMatch(/job a was not planned/);
    const moved = plannedOf(staged).map((j) => ({ ...j, completed_at: 'other' }));
    expect(planProblem(staged, moved, 2)).toMatch(/differs from its plan/);
  });
  test('platform data no job uses, or without a digest', async () => {
    const { staged } = await build();
    const ref = staged.jobs.a?.platform_data_ref as string;
    const pd = staged.platform_data[ref];
    if (!pd) throw new Error('the fixture has platform data');
    const unused = { ...staged, platform_data: { ...staged.platform_data, '99': pd } };
    expect(planProblem(unused, plannedOf(staged), 2)).toMatch(/platform data 99 is not used/);
    const bare = { ...staged, platform_data: { [ref]: { ...pd, sha256: '' } } };
    expect(planProblem(bare, plannedOf(staged), 2)).toMatch(/has no digest/);
  });
});

test('the verified part is exactly the index entries commit adds', async () => {
  const { staged } = await build();
  const v = toVerifiedPart(staged);
  expect(v.part).toEqual({
    name: 'p.jsonl.gz',
    key: 'k',
    size: staged.size,
    etag: 'etag',
    sha256: staged.sha256,
    run_id: 'r',
    job_count: 2,
    bytes_in: 3,
    filters: staged.filters,
  });
  const pdRef = staged.jobs.a?.platform_data_ref as string;
  expect(v.jobs.a).toEqual({
    part: 'p.jsonl.gz',
    offset: staged.jobs.a?.offset,
    length: staged.jobs.a?.length,
    line: staged.jobs.a?.line,
    sha256: staged.jobs.a?.sha256,
    completed_at: '2026-01-02T00:00:00.000Z',
    platform_data: {
      ref: pdRef,
      offset: staged.platform_data[pdRef]?.offset,
      length: staged.platform_data[pdRef]?.length,
      line: staged.platform_data[pdRef]?.line,
    },
    sources: [{ key: 'job-details/a/f.json.gz', size: 3, etag: 'e' }],
  });
  expect(v.jobs.b?.platform_data?.ref).toBe(pdRef); // shared, stored once
});

test('a staged document filter must describe its block’s stored records', async () => {
  const { staged } = await build();
  const f = staged.doc_filters?.blocks[0];
  if (!f) throw new Error('no filter');
  const range = { offset: f.offset, length: f.length };
  // Both jobs list d1: one distinct document.
  expect(filterProblem(f, range, new Set(['d1']))).toBeNull();
  expect(filterProblem(f, range, new Set(['d1', 'd2']))).toMatch(/counts 1 documents, its records list 2/);
  expect(filterProblem(undefined, range, new Set(['d1']))).toMatch(/no document filter for its 1 documents/);
  expect(filterProblem(f, range, new Set())).toMatch(/lists no document/);
  expect(filterProblem(undefined, range, new Set())).toBeNull();
});
