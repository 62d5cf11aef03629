import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { memoryOutput } from '../../infra/cli/output';
import { parseSearchOptions, searchCommand } from '../../infra/cli/search';
import {
  COLD_PREFIX,
  commitPart,
  emptyMonthIndex,
  type FlatDocument,
  filtersMember,
  flattenPart,
  INDEX_FIRST_READ_BYTES,
  type IndexedJob,
  MONTH_INDEX_HEADERS,
  monthIndexKey,
  partDocFilters,
  partPlace,
  serializeMonthIndex,
} from '../../shared/archive/format';
import { documentCandidates } from '../../shared/reader/doc-candidates';
import type { FindDocumentResult } from '../../shared/reader/find-document';
import { readerSettings } from '../../shared/reader/query';
import { JobDetailsReader } from '../../shared/reader/reader';
import { newReadContext } from '../../shared/reader/s3-context';
import {
  cliContextFor,
  daysAgo,
  getBytes,
  inMonth,
  listKeys,
  monthOfDate,
  partLines,
  readIndex,
  runLocal,
  type SeededJob,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';

/**
 * Find by document on the embedded stack: jobs archived by the synthesized state machine (local
 * runner, real handlers) plus jobs still hot, searched by document and held against a brute-force
 * pass over every part and every hot job.
 */
jest.setTimeout(240_000);

const runs = setUpMachineRuns();
const SHOP = 'shop-a';
const M2 = monthOfDate(inMonth(2, 1));
const M3 = monthOfDate(inMonth(3, 1));
let archivedDocs: FlatDocument[] = [];
let hotJob: SeededJob;

const reader = () => new JobDetailsReader(runs.env.s3, runs.env.bucket);
const jobsTable = () => ({ ddb: runs.env.ddb, table: runs.env.table });

beforeAll(async () => {
  const e = runs.env;
  for (let i = 0; i < 4; i++) {
    await seedTerminalJob(e, { shopId: SHOP, completedAt: inMonth(2, 3 + i), status: 'FAILED' });
    await seedTerminalJob(e, {
      shopId: SHOP,
      completedAt: inMonth(3, 3 + i),
      status: i % 2 ? 'CONFLICT' : 'FAILED',
    });
  }
  await seedTerminalJob(e, { shopId: 'shop-b', completedAt: inMonth(2, 3), status: 'FAILED' });
  const r = await runLocal(runs.env, { input: {}, definition: runs.definition });
  expect(r.handlerErrors).toEqual([]);
  expect(r.status).toBe('SUCCEEDED');
  // Completed yesterday: not archived, found through the table and its hot objects.
  hotJob = await seedTerminalJob(e, { shopId: SHOP, completedAt: daysAgo(1), status: 'FAILED' });
  for (const key of await listKeys(e.s3, e.bucket, COLD_PREFIX)) {
    const at = partPlace(key);
    if (at?.shopId === SHOP) archivedDocs.push(...flattenPart(await partLines(e, key), at, key).documents);
  }
  expect(new Set(archivedDocs.map((d) => d.job_id)).size).toBe(8);
});

afterAll(() => {
  archivedDocs = [];
});

/** What a brute-force scan of the parts says about a document (archive side). */
const bruteForce = (docId: string, months?: string[]) =>
  [
    ...new Set(
      archivedDocs
        .filter((d) => d.doc_id === docId && (!months || months.includes(d.month)))
        .map((d) => d.job_id),
    ),
  ].sort();

const archivedIds = (r: FindDocumentResult) =>
  r.jobs
    .filter((j) => j.sources.includes('archive'))
    .map((j) => j.jobId)
    .sort();

test('no false negatives: every document of the shop finds exactly the jobs a scan finds', async () => {
  const docs = [...new Set(archivedDocs.map((d) => d.doc_id))];
  expect(docs.length).toBeGreaterThan(5);
  for (const doc of docs) {
    const r = await reader().findDocument({ shopId: SHOP, docId: doc });
    expect(archivedIds(r)).toEqual(bruteForce(doc));
    // 4 Lists (the shop's index prefix, the months with a shared index, the shop's parts and the
    // shared parts: a month with parts and no index is named), then per month 1 GET of the index and
    // 1 ranged GET of each part's filters member (in the part's class), then 1 GET per block read.
    expect(r.provenance.requests).toBe(
      4 + r.provenance.monthsSearched + r.provenance.partsFiltered + r.provenance.blocksRead,
    );
    expect(r.provenance.warnings).toEqual([]);
    expect(r.provenance.partsFiltered).toBe(r.provenance.monthsSearched);
    expect(r.provenance.partsNotSearched).toEqual([]);
  }
});

test('hot and archived jobs together, newest first, with reasons and provenance; the CLI prints the same', async () => {
  const doc = `${SHOP}-0-doc-0a`; // every FAILED job's first flush lists it
  const r = await reader().findDocument({ shopId: SHOP, docId: doc }, jobsTable());
  const times = r.jobs.map((j) => j.completedAt ?? '');
  expect(times).toEqual([...times].sort().reverse());
  expect(r.jobs[0]).toMatchObject({
    jobId: hotJob.jobId,
    status: 'FAILED',
    sources: ['hot'],
    listings: [{ kind: 'failed', reason: 'timeout' }],
  });
  expect(archivedIds(r)).toEqual(bruteForce(doc));
  expect(r.provenance.hot).toMatchObject({ searched: true, queryPages: 1, rows: 9 });
  expect(r.provenance.bytes).toBeGreaterThan(0);

  const io = memoryOutput();
  const ctx = cliContextFor(runs.env);
  const out = await searchCommand(ctx, parseSearchOptions({ shop: SHOP, doc, json: true }), io);
  expect(io.json<FindDocumentResult>().jobs).toEqual(out.jobs);
  expect(out.jobs.map((j) => j.jobId)).toEqual(r.jobs.map((j) => j.jobId));
  const text = memoryOutput();
  await searchCommand(ctx, parseSearchOptions({ shop: SHOP, doc }), text);
  expect(text.stdout[0]).toContain(hotJob.jobId);
  expect(text.stderr.join('\n')).toMatch(/S3 requests/);
});

test('--from / --to bound the months searched', async () => {
  const doc = `${SHOP}-1-doc-1a`;
  const r = await reader().findDocument({ shopId: SHOP, docId: doc, from: M2, to: M2 });
  expect(r.provenance.monthsSearched).toBe(1);
  expect(archivedIds(r)).toEqual(bruteForce(doc, [M2]));
  expect(r.jobs.every((j) => j.month === M2)).toBe(true);
  expect(() => parseSearchOptions({ shop: SHOP, doc, from: '2026-3' })).toThrow(/from/);
  expect(() => parseSearchOptions({ shop: SHOP, doc, from: M2, to: M3 })).toThrow(/after/);
});

test("a large month: the index's first read and the part's filters member, never more", async () => {
  const e = runs.env;
  const shop = 'shop-large-index';
  const part = 'part-20260201T000000Z-aaaaaaaa.jsonl.gz';
  const key = `${COLD_PREFIX}${shop}/${M2}/${part}`;
  const jobs: Record<string, IndexedJob> = {};
  for (let i = 0; i < 6000; i++)
    jobs[`job-${String(i).padStart(5, '0')}`] = {
      part,
      offset: i * 10,
      length: 10,
      completed_at: `${M2}-10T00:00:00.000Z`,
      committed_at: 't',
      platform_data: null,
      // Not deleted yet: each entry keeps its hot object's ETag (what makes this index large).
      sources: [
        {
          key: `job-details/job-${i}/f.json.gz`,
          size: i,
          etag: createHash('md5').update(String(i)).digest('hex'),
        },
      ],
      deleted_at: null,
    };
  const docs = (b: number) => new Set(Array.from({ length: 50 }, (_, i) => `doc-${b}-${i}`));
  const filters = partDocFilters(
    Array.from({ length: 6000 }, (_, b) => ({ offset: b * 10, length: 10, docs: docs(b) })),
  );
  // The part: its blocks (bytes a search never reads here), then its filters member.
  const tail = filtersMember(filters);
  await e.s3.send(
    new PutObjectCommand({ Bucket: e.bucket, Key: key, Body: Buffer.concat([Buffer.alloc(60_000), tail]) }),
  );
  const idx = commitPart(
    emptyMonthIndex(shop, M2, 't'),
    {
      name: part,
      key,
      size: 60_000 + tail.length,
      run_id: 'r',
      committed_at: 't',
      job_count: 6000,
      bytes_in: 1,
      etag: 'e',
      filters: { offset: 60_000, length: tail.length },
    },
    jobs,
    't',
  );
  const body = serializeMonthIndex(idx);
  expect(body.length).toBeGreaterThan(INDEX_FIRST_READ_BYTES); // the index alone is past a lookup's first read
  await e.s3.send(
    new PutObjectCommand({
      Bucket: e.bucket,
      Key: monthIndexKey(shop, M2),
      Body: body,
      ...MONTH_INDEX_HEADERS,
    }),
  );
  const ctx = newReadContext(e.s3, e.bucket, readerSettings({}));
  const found = await documentCandidates(ctx, shop, M2, 'doc-4321-7');
  expect(ctx.ledger.requests).toBe(2);
  expect(found).toHaveLength(1);
  expect(found?.[0]).toMatchObject({ part, filters: 'part', blocksFiltered: 6000 });
  expect(found?.[0]?.blocks).toContainEqual({ offset: 43210, length: 10 });
  expect(found?.[0]?.blocks.length).toBeLessThan(6000 * 0.02);
  expect(await documentCandidates(ctx, shop, '2001-01', 'x')).toBeNull();
});

test('the filters lie in the parts, in their class: no month index holds a filter byte, every part names its member', async () => {
  const e = runs.env;
  for (const month of [M2, M3]) {
    const idx = await readIndex(e, SHOP, month);
    if (!idx) throw new Error(`no index for ${month}`);
    for (const p of idx.parts) {
      expect(p.filters).toBeDefined();
      const text = gunzipSync(await getBytes(e.s3, e.bucket, monthIndexKey(SHOP, month))).toString();
      expect(text).not.toContain('"docs');
      // The part's last line is its filters.
      const lines = await partLines(e, p.key);
      expect(lines[lines.length - 1]).toMatchObject({ type: 'doc_filters' });
    }
  }
});
