import { gunzipSync } from 'node:zlib';
import {
  DOCUMENT_COLUMNS,
  documentsViewSql,
  flattenPart,
  JOB_COLUMNS,
  jobsViewSql,
  keyedSource,
  metaFromRow,
  PartBuilder,
  partKey,
  partPlace,
  projectedSource,
  sharedSource,
} from '../../shared/archive/format';
import { details } from '../support/archive-fixture';

const SHOP = 'acme.myshopify.com';
const PART = 'part-20260215T030000Z-abcdefgh.jsonl.gz';
const KEY = partKey(SHOP, '2026-01', PART);

const row = (jobId: string, status: string, completedAt: string) => ({
  pk: `SHOP#${SHOP}`,
  sk: `JOB#${jobId}`,
  job_id: jobId,
  job_status: status,
  created_at: '2026-01-10T09:00:00.000Z',
  started_at: '2026-01-10T09:01:00.000Z',
  completed_at: completedAt,
  last_updated: completedAt,
  status_created_at: completedAt,
  job_type: 'full_sync',
  platform: 'shopify',
  total_items: 5,
  processed_items: 2,
  failed_items: 2,
  skipped_items: 1,
  conflict_items: 0,
});

/** A part@4 as the archiver writes it (rows kept, so meta and identity attributes are implied). */
const part = async (): Promise<Buffer> => {
  const out: Buffer[] = [];
  const b = new PartBuilder(
    { shopId: SHOP, month: '2026-01', partName: PART, partKey: KEY, runId: 'r1', createdAt: 't' },
    async (m) => {
      out.push(m);
    },
  );
  await b.writeHeader();
  const r1 = row('j1', 'FAILED', '2026-01-10T10:00:00.000Z');
  await b.addJob({
    jobId: 'j1',
    meta: metaFromRow(r1),
    details: details({
      chunk_ids: ['p0', 'p1'],
      failed: { timeout: ['d1', 'd2'] },
      skipped: { unchanged: ['d3'] },
      conflict: { version: [{ doc_id: 'd1', existing_version: 2 }] },
    }),
    platformData: { indexer: 1 },
    sources: [],
    row: { row: r1, reduced: {} },
  });
  // Row expired before archival: the meta is whole in the record.
  await b.addJob({
    jobId: 'j2',
    meta: { ...metaFromRow(row('j2', 'COMPLETED', '2026-01-11T10:00:00.000Z')), retry_count: 1 },
    details: details({ chunk_ids: ['p0'] }),
    platformData: null,
    sources: [],
    row: null,
  });
  await b.finish();
  return Buffer.concat(out);
};

const lines = (gz: Buffer) =>
  gunzipSync(gz)
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

describe('flattenPart', () => {
  it('skips header and platform-data lines and restores implied fields into job rows', async () => {
    const at = partPlace(KEY);
    expect(at).toEqual({ shopId: SHOP, month: '2026-01', part: PART });
    const { jobs, documents } = flattenPart(lines(await part()), at ?? ({} as never), KEY);
    expect(jobs).toEqual([
      {
        shop_id: SHOP,
        month: '2026-01',
        part: PART,
        job_id: 'j1',
        status: 'FAILED',
        completed_at: '2026-01-10T10:00:00.000Z',
        created_at: '2026-01-10T09:00:00.000Z',
        started_at: '2026-01-10T09:01:00.000Z',
        job_type: 'full_sync',
        platform: 'shopify',
        total_items: 5,
        processed_items: 2,
        failed_items: 2,
        skipped_items: 1,
        conflict_items: 0,
        retry_count: null,
        error_message: null,
        chunks: 2,
        failed: 2,
        skipped: 1,
        conflict: 1,
        platform_data_ref: '1',
      },
      expect.objectContaining({ job_id: 'j2', status: 'COMPLETED', retry_count: 1, platform_data_ref: null }),
    ]);
    expect(documents.map((d) => [d.job_id, d.kind, d.reason, d.doc_id, d.status])).toEqual([
      ['j1', 'failed', 'timeout', 'd1', 'FAILED'],
      ['j1', 'failed', 'timeout', 'd2', 'FAILED'],
      ['j1', 'skipped', 'unchanged', 'd3', 'FAILED'],
      ['j1', 'conflict', 'version', 'd1', 'FAILED'],
    ]);
  });

  it("attributes a shared part's job lines to the shop the line names, else its segment header's", async () => {
    const segment = async (shopId: string, shopOnLines: boolean) => {
      const out: Buffer[] = [];
      const b = new PartBuilder(
        { shopId, month: '2026-01', partName: PART, partKey: KEY, runId: 'r1', createdAt: 't', shopOnLines },
        async (m) => {
          out.push(m);
        },
      );
      await b.writeHeader();
      const r = { ...row(`${shopId}-j`, 'FAILED', '2026-01-10T10:00:00.000Z'), pk: `SHOP#${shopId}` };
      await b.addJob({
        jobId: `${shopId}-j`,
        meta: metaFromRow(r),
        details: details({ chunk_ids: ['p0'], failed: { timeout: ['d1'] } }),
        platformData: null,
        sources: [],
        row: { row: r, reduced: {} },
      });
      await b.finish();
      return lines(Buffer.concat(out));
    };
    const withShop = await segment('s1', true);
    expect(withShop[1]).toMatchObject({ type: 'job', shop_id: 's1' });
    const without = await segment('s2', false);
    expect(without[1]).not.toHaveProperty('shop_id');
    const at = partPlace(`job-details-cold/_shared/2026-01/${PART}`);
    expect(at?.shopId).toBe('_shared');
    const { jobs, documents } = flattenPart([...withShop, ...without], at ?? ({} as never), 'shared');
    expect(jobs.map((j) => [j.shop_id, j.job_id])).toEqual([
      ['s1', 's1-j'],
      ['s2', 's2-j'],
    ]);
    expect(documents.map((d) => d.shop_id)).toEqual(['s1', 's2']);
  });

  it('names the line of a malformed record', () => {
    const at = { shopId: SHOP, month: '2026-01', part: PART };
    expect(() => flattenPart([{ type: 'job' }], at, KEY)).toThrow(/line 1/);
  });
});

describe('the Athena views', () => {
  it('select every flattened column, in the order of the TypeScript rows', async () => {
    const at = { shopId: SHOP, month: '2026-01', part: PART };
    const { jobs, documents } = flattenPart(lines(await part()), at, KEY);
    expect(JOB_COLUMNS.map((c) => c.name)).toEqual(Object.keys(jobs[0] ?? {}));
    expect(DOCUMENT_COLUMNS.map((c) => c.name).sort()).toEqual(Object.keys(documents[0] ?? {}).sort());
    for (const src of [projectedSource('parts'), sharedSource('parts_shared'), keyedSource('parts_fleet')]) {
      const sql = jobsViewSql(src);
      for (const c of JOB_COLUMNS) expect(sql).toContain(` AS ${c.name}`);
      expect(sql).not.toMatch(/\{(shop|month|kind|doc)\}/);
      const docs = documentsViewSql(src);
      expect(docs.split('UNION ALL')).toHaveLength(3);
      expect(docs).not.toMatch(/\{(shop|month|kind|doc)\}/);
      expect(docs).toContain("'conflict' AS kind");
      expect(docs).toContain('d.item.doc_id AS doc_id');
    }
    // Fleet: the key's shop, or a shared part's line's own shop_id (lines without one are left out).
    const fleet = jobsViewSql(keyedSource('parts_fleet'));
    expect(fleet).toContain(
      `CASE WHEN regexp_extract(j."$path", '/job-details-cold/([^/]+)/', 1) = '_shared' THEN j.shop_id ELSE regexp_extract(j."$path", '/job-details-cold/([^/]+)/', 1) END AS shop_id`,
    );
    expect(fleet).toContain(
      `WHERE j.type = 'job' AND (regexp_extract(j."$path", '/job-details-cold/([^/]+)/', 1) <> '_shared' OR j.shop_id IS NOT NULL)`,
    );
    // Several sources: one UNION ALL branch each (per kind for documents).
    const two = [projectedSource('parts'), sharedSource('parts_shared')];
    expect(jobsViewSql(...two).split('UNION ALL')).toHaveLength(2);
    expect(documentsViewSql(...two).split('UNION ALL')).toHaveLength(6);
    // A string meta field the row left out as equal to its completed_at reads completed_at.
    expect(jobsViewSql(two[0] as never)).toContain(
      `COALESCE(j.job.started_at, j."row".started_at, CASE WHEN contains(j.row_omitted, 'started_at') THEN j."row".completed_at END) AS started_at`,
    );
  });
});
