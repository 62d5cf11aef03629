import { gunzipSync, gzipSync } from 'node:zlib';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { memoryOutput } from '../../infra/cli/output';
import { parseSearchOptions, searchCommand } from '../../infra/cli/search';
import { encodeDocFilters, partDocFilters } from '../../shared/archive/format/doc-filter';
import { type FlatDocument, flattenPart, partPlace } from '../../shared/archive/format/flatten';
import { COLD_PREFIX, docFilterKey, monthIndexKey } from '../../shared/archive/format/keys';
import {
  commitPart,
  emptyMonthIndex,
  INDEX_FORMAT_V4,
  type IndexedJob,
  MONTH_INDEX_HEADERS,
  type MonthIndex,
  serializeMonthIndex,
} from '../../shared/archive/format/month-index';
import { documentCandidates } from '../../shared/reader/doc-candidates';
import type { FindDocumentResult } from '../../shared/reader/find-document';
import { readerSettings } from '../../shared/reader/query';
import { JobDetailsReader } from '../../shared/reader/reader';
import { newReadContext } from '../../shared/reader/s3-context';
import {
  cliContextFor,
  daysAgo,
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
    // shared parts: a month with parts and no index is named), then per month 1 GET of the index (its
    // filters in it: small months fit the first read), then 1 GET per block read.
    expect(r.provenance.requests).toBe(4 + r.provenance.monthsSearched + r.provenance.blocksRead);
    expect(r.provenance.warnings).toEqual([]);
    expect(r.provenance.partsScanned).toBe(0);
    expect(r.provenance.partsFiltered).toBeGreaterThan(0);
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

test('a large month: its filters past the first 32 KB cost one more ranged GET, never more', async () => {
  const e = runs.env;
  const shop = 'shop-large-index';
  const part = 'part-20260201T000000Z-aaaaaaaa.jsonl.gz';
  const jobs: Record<string, IndexedJob> = {};
  for (let i = 0; i < 6000; i++)
    jobs[`job-${String(i).padStart(5, '0')}`] = {
      part,
      offset: i * 10,
      length: 10,
      status: 'FAILED',
      completed_at: `${M2}-10T00:00:00.000Z`,
      committed_at: 't',
      counts: { chunk_ids: 1, failed: 1, skipped: 0, conflict: 0 },
      platform_data: null,
      sources: [],
      deleted_at: null,
    };
  const docs = (b: number) => new Set(Array.from({ length: 50 }, (_, i) => `doc-${b}-${i}`));
  const filters = partDocFilters(
    Array.from({ length: 6000 }, (_, b) => ({ offset: b * 10, length: 10, docs: docs(b) })),
  );
  const idx = commitPart(
    emptyMonthIndex(shop, M2, 't'),
    {
      name: part,
      key: `${COLD_PREFIX}${shop}/${M2}/${part}`,
      size: 60_000,
      run_id: 'r',
      committed_at: 't',
      job_count: 6000,
      bytes_in: 1,
      doc_filters: filters,
    },
    jobs,
    't',
  );
  const body = serializeMonthIndex(idx);
  expect(body.length).toBeGreaterThan(48 * 1024); // its filter member starts past the first 32 KB
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
  expect(found?.[0]).toMatchObject({ part, filters: 'index', blocksFiltered: 6000 });
  expect(found?.[0]?.blocks).toContainEqual({ offset: 43210, length: 10 });
  expect(found?.[0]?.blocks.length).toBeLessThan(6000 * 0.02);
  expect(await documentCandidates(ctx, shop, '2001-01', 'x')).toBeNull();
});

/** Rewrites a month's index as an older writer left it: as index@4, its parts without filters. */
const asIndexV4 = async (shop: string, month: string): Promise<MonthIndex> => {
  const e = runs.env;
  const idx = await readIndex(e, shop, month);
  if (!idx) throw new Error(`no index for ${month}`);
  const stripped = { ...idx, parts: idx.parts.map(({ doc_filters: _f, ...p }) => p) };
  const v4 = { ...JSON.parse(gunzipSync(serializeMonthIndex(stripped)).toString()), format: INDEX_FORMAT_V4 };
  await e.s3.send(
    new PutObjectCommand({
      Bucket: e.bucket,
      Key: monthIndexKey(shop, month),
      Body: gzipSync(`${JSON.stringify(v4)}\n`),
      ...MONTH_INDEX_HEADERS,
    }),
  );
  return idx;
};

test('parts written before index@5 stay searchable: through their sidecar, or without filters by a counted scan', async () => {
  const e = runs.env;
  const before = await asIndexV4(SHOP, M3);
  const p = before.parts[0];
  if (!p?.doc_filters || before.parts.length !== 1) throw new Error('expected one part with filters in M3');
  const doc = `${SHOP}-0-doc-0a`;
  // A docfilter@2 sidecar beside the index@4 (what the archive step wrote before index@5).
  const sidecar = docFilterKey(SHOP, M3, p.name);
  await e.s3.send(
    new PutObjectCommand({
      Bucket: e.bucket,
      Key: sidecar,
      Body: encodeDocFilters({ part: p.name, ...p.doc_filters }),
    }),
  );
  const viaSidecar = await reader().findDocument({ shopId: SHOP, docId: doc });
  expect(archivedIds(viaSidecar)).toEqual(bruteForce(doc));
  expect(viaSidecar.provenance.partsScanned).toBe(0);
  // The sidecar's GET comes on top of the month's index GET (after the four Lists).
  expect(viaSidecar.provenance.requests).toBe(
    4 + viaSidecar.provenance.monthsSearched + 1 + viaSidecar.provenance.blocksRead,
  );

  await e.s3.send(new DeleteObjectCommand({ Bucket: e.bucket, Key: sidecar }));
  const r = await reader().findDocument({ shopId: SHOP, docId: doc });
  expect(archivedIds(r)).toEqual(bruteForce(doc));
  expect(r.provenance.partsScanned).toBe(1);
  const io = memoryOutput();
  await searchCommand(cliContextFor(e), parseSearchOptions({ shop: SHOP, doc }), io);
  expect(io.stderr.join('\n')).toMatch(/1 parts have no document filters/);
});
