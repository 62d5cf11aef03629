/**
 * Parts and month indexes written by the v1 archiver (`part@1`: one gzip member per record) stay
 * readable by the reader, `reindex` and `audit` whatever the current writer produces. The fixture under
 * test/fixtures/archive-v1/ is the v1 writer's own output (PartBuilder + commitPart before the format
 * changed), committed as bytes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { monthIndexKey, partKey } from '../../shared/archive/format/keys';
import { parseMonthIndex } from '../../shared/archive/format/month-index';
import { rebuildMonthIndex } from '../../shared/archive/reindex';
import { JobDetailsReader } from '../../shared/reader';
import { freshBucket, testS3 } from '../support/local';

const DIR = join(__dirname, '../fixtures/archive-v1');
const SHOP = 'v1-shop.myshopify.com';
const MONTH = '2026-01';
const PART = readdirSync(DIR).find((f) => f.startsWith('part-')) ?? '';
const s3 = testS3();
let bucket: string;

beforeAll(async () => {
  bucket = await freshBucket();
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: partKey(SHOP, MONTH, PART),
      Body: readFileSync(join(DIR, PART)),
    }),
  );
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: monthIndexKey(SHOP, MONTH),
      Body: readFileSync(join(DIR, 'index.json')),
    }),
  );
});

test('the reader reads v1 records: details, platform data, the archived job', async () => {
  const reader = new JobDetailsReader(s3, bucket);
  const a = await reader.lookup({ shopId: SHOP, jobId: 'k3jqxr2m7zaba', months: [MONTH] });
  expect(a.details).toEqual({
    chunk_ids: ['p0', 'p1'],
    failed: { timeout: ['doc-1', 'doc-2'] },
    skipped: { unpublished: ['doc-3'] },
    conflict: {},
  });
  expect(a.platformData).toEqual({ indexer: { batch_size: 50 } });
  expect(a.archivedJob).toMatchObject({ status: 'FAILED' });
  expect(a.archivedRow).toBeNull(); // v1 records predate whole-row archiving
  const b = await reader.readAllDetails({
    shopId: SHOP,
    jobId: 'x7vq2m4n5pabc',
    completedAt: '2026-01-20T10:00:00.000Z',
  });
  expect(b.details?.conflict).toEqual({ version: [{ doc_id: 'doc-9', existing_version: 3 }] });
  // index, the hot listing (the entry's sources are not marked deleted), one ranged GET
  expect(b.provenance).toMatchObject({ source: 'archive', requests: 3 });
});

test('reindex rebuilds the v1 index from the v1 part', async () => {
  const r = await rebuildMonthIndex(
    { s3, bucket, clock: () => new Date('2026-11-01T00:00:00Z') },
    SHOP,
    MONTH,
    { dryRun: true },
  );
  const original = parseMonthIndex(readFileSync(join(DIR, 'index.json')), 'fixture');
  expect(r.partsExcluded).toEqual([]);
  for (const [jobId, [entry]] of Object.entries(original.jobs)) {
    const rebuilt = r.index.jobs[jobId]?.[0];
    expect(rebuilt).toMatchObject({
      part: entry?.part,
      offset: entry?.offset,
      length: entry?.length,
      sha256: entry?.sha256,
      status: entry?.status,
      completed_at: entry?.completed_at,
    });
  }
});
