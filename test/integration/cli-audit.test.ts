/**
 * `jobarchive audit` in-process against the jest stack: a seeded fleet plus hand-made damage —
 * an orphan hot prefix (no row, no index), a stray part no index commits, an index entry marked
 * deleted whose source is still there, and an index part whose object is gone.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { type AuditResult, auditCommand } from '../../infra/cli/audit';
import { type CliContext, makeContext } from '../../infra/cli/context';
import { memoryOutput } from '../../infra/cli/output';
import { seedCommand } from '../../infra/cli/seed';
import {
  commitPart,
  emptyMonthIndex,
  markDeleted,
  monthIndexKey,
  partKey,
  serializeMonthIndex,
} from '../../shared/archive/format';
import { parseConfig } from '../../shared/config';
import { JobDetailsStore } from '../../shared/details/store';
import { freshBucket, freshTable, testDdb, testS3 } from '../support/local';

const NOW = new Date('2026-05-10T12:00:00.000Z');
const SHOP = 'damaged.myshopify.com';
const ORPHAN_SHOP = 'lost.myshopify.com';
const STRAY = 'part-20260415T030000Z-strayxyz.jsonl.gz';
const GONE = 'part-20260415T030000Z-gonegone.jsonl.gz';

const s3 = testS3();
let ctx: CliContext;
let seededJobs: number;
let hotSeeded: number;

beforeAll(async () => {
  ctx = makeContext({
    ddb: testDdb(),
    s3,
    table: await freshTable(),
    bucket: await freshBucket(),
    cfg: parseConfig(process.env),
    now: () => NOW,
  });
  const seeded = await seedCommand(
    ctx,
    { shops: 2, jobsPerShop: 3, months: 2, seed: 3, concurrency: 4, json: false },
    memoryOutput(),
  );
  seededJobs = seeded.jobs.length;
  const store = new JobDetailsStore(s3, ctx.bucket);
  hotSeeded = 0;
  for (const j of seeded.jobs) if ((await store.listJobObjects(j.jobId)).length > 0) hotSeeded++;

  const payload = { chunk_ids: ['p0'], failed: { mapping_error: ['doc-1'] }, skipped: {}, conflict: {} };
  // An orphan: hot objects of a job that has no row and is in no index.
  await store.writeFlush(ORPHAN_SHOP, 'orphanjob0001', 'aaaaaaaaaaaaaaaa', payload);
  await store.writePlatformData(ORPHAN_SHOP, 'orphanjob0001', { a: 1 });
  // A job archived and marked deleted, whose flush object is still there (same bytes).
  const kept = await store.writeFlush(SHOP, 'archivedjob01', 'bbbbbbbbbbbbbbbb', payload);
  // A part no index commits.
  await s3.send(
    new PutObjectCommand({ Bucket: ctx.bucket, Key: partKey(SHOP, '2026-03', STRAY), Body: 'x' }),
  );

  // Committed after the flush object was written (as an archival of it would be), deleted after that.
  const at = new Date(Date.now() + 60_000).toISOString();
  let index = commitPart(
    emptyMonthIndex(SHOP, '2026-03', at),
    {
      name: GONE,
      key: partKey(SHOP, '2026-03', GONE),
      size: 10,
      etag: 'e',
      sha256: 's',
      run_id: 'r1',
      committed_at: at,
      job_count: 1,
      bytes_in: kept.size,
    },
    {
      archivedjob01: {
        part: GONE,
        offset: 0,
        length: 10,
        sha256: 's',
        completed_at: '2026-03-02T00:00:00.000Z',
        committed_at: at,
        platform_data: null,
        sources: [{ key: kept.key, size: kept.size, etag: (kept.etag ?? '').replace(/"/g, '') }],
        deleted_at: null,
      },
    },
    at,
  );
  index = markDeleted(
    index,
    [{ jobId: 'archivedjob01', part: GONE }],
    new Date(Date.now() + 120_000).toISOString(),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: ctx.bucket,
      Key: monthIndexKey(SHOP, '2026-03'),
      Body: serializeMonthIndex(index),
    }),
  );
});

it('counts hot jobs of the fleet and finds the orphan, attributed to its shop by metadata', async () => {
  const io = memoryOutput();
  const r = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: true }, io);
  const printed = io.json<AuditResult>();
  expect(printed.totals).toEqual(r.totals);
  expect(r.totals.rows).toBe(seededJobs);
  expect(r.totals.hotJobs).toBe(hotSeeded);
  expect(r.orphans).toEqual([
    {
      jobId: 'orphanjob0001',
      shopId: ORPHAN_SHOP,
      month: expect.stringMatching(/^\d{4}-\d{2}$/),
      objects: 2,
      bytes: expect.any(Number),
    },
  ]);
  expect(r.requests.s3Head).toBe(1);
  expect(r.requests.s3Get).toBe(2); // the month index and the watermark (the last run's cutoff)
  expect(r.requests.dynamodbQuery).toBe(5);
});

it('reports each kind of mismatch in the damaged shop × month', async () => {
  const r = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: false }, memoryOutput());
  const found = r.mismatches.map((m) => [m.kind, m.key]).sort();
  expect(found).toEqual(
    [
      ['missing-part', partKey(SHOP, '2026-03', GONE)],
      ['hidden-hot-object', 'job-details/archivedjob01/bbbbbbbbbbbbbbbb.json.gz'],
      ['uncommitted-part', partKey(SHOP, '2026-03', STRAY)],
    ].sort(),
  );
  expect(r.groups.find((g) => g.shopId === SHOP && g.month === '2026-03')).toMatchObject({
    archivedJobs: 1,
    archivedDeleted: 1,
    mismatches: 3,
  });
});

it('prints a table per shop × month and the findings for humans', async () => {
  const io = memoryOutput();
  await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: false }, io);
  const text = io.stdout.join('\n');
  expect(text).toMatch(
    /^audit: \d+ job rows, \d+ hot job prefixes, 1 archived jobs, 1 orphans, 3 mismatches$/m,
  );
  expect(text).toMatch(new RegExp(`^ {2}${SHOP.replace(/\./g, '\\.')} +2026-03 +0 +0 +1 +1 +0 +3$`, 'm'));
  expect(text).toContain(`${ORPHAN_SHOP} `);
  expect(text).toContain('uncommitted-part');
  expect(text).toMatch(/^requests: S3 \d+ LIST, 2 GET, 1 HEAD; DynamoDB 5 Query/m);
});

it('--max-heads bounds the HeadObject calls; unattributed orphans stay "unknown"', async () => {
  const r = await auditCommand(ctx, { maxHeads: 0, concurrency: 4, json: false }, memoryOutput());
  expect(r.requests.s3Head).toBe(0);
  expect(r.orphansUnattributed).toBe(1);
  expect(r.orphans[0]?.shopId).toBe('unknown');
});
