import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  gzipMemberLength,
  INDEX_FIRST_READ_BYTES,
  type IndexedPart,
  monthIndexKey,
  pendingKey,
  serializeMonthIndex,
  settledCandidates,
} from '../../shared/archive/format';
import {
  flushIdForChunks,
  generateJobId,
  type JobDetailsPayload,
  JobDetailsStore,
  jobPrefix,
} from '../../shared/details';
import {
  CorruptObjectError,
  InvalidIdError,
  InvalidInputError,
  UnsupportedFormatError,
} from '../../shared/errors';
import { countRequests, zeroCounts } from '../../shared/metrics';
import { JobDetailsReader } from '../../shared/reader';
import { archiveJobs, buildPart, details, putIndex, putPart, readIndex } from '../support/archive-fixture';
import { freshBucket, testS3 } from '../support/local';

/**
 * The reader against s3rver, with archives built by test/support/archive-fixture.ts (PartBuilder +
 * commitPart, as the archiver does). Glacier behaviour is in test/unit/reader-glacier.test.ts:
 * s3rver has no storage classes and no RestoreObject.
 */
const COMPLETED = '2026-01-10T09:30:00.000Z';
const MONTH = '2026-01';

const newShop = (): string => `shop-${randomBytes(4).toString('hex')}.myshopify.com`;

const FIRST: JobDetailsPayload = details({
  chunk_ids: ['p0', 'p1'],
  failed: { 'bad-sku': ['d1', 'd2'] },
  conflict: { version: [{ doc_id: 'd4', existing_version: 3, incoming_version: 2 }] },
});
const SECOND: JobDetailsPayload = details({
  chunk_ids: ['p2'],
  failed: { 'bad-sku': ['d2', 'd5'] },
  skipped: { draft: ['d6'] },
});
const MERGED = {
  chunk_ids: ['p0', 'p1', 'p2'],
  failed: { 'bad-sku': ['d1', 'd2', 'd5'] },
  skipped: { draft: ['d6'] },
  conflict: { version: [{ doc_id: 'd4', existing_version: 3, incoming_version: 2 }] },
};

/** Job i's details as a seeded month lists them: one chunk, ten nearby product ids failed. */
const seededDetails = (i: number) =>
  details({
    chunk_ids: ['p0'],
    failed: {
      timeout: Array.from(
        { length: 10 },
        (_, k) => `gid://shopify/Product/${7_000_000_000_000 + i * 97 + k}`,
      ),
    },
  });

describe('JobDetailsReader against s3rver', () => {
  let s3: S3Client;
  let bucket: string;
  let store: JobDetailsStore;
  let reader: JobDetailsReader;

  beforeAll(async () => {
    s3 = testS3();
    bucket = await freshBucket();
    store = new JobDetailsStore(s3, bucket);
    reader = new JobDetailsReader(s3, bucket);
  });
  afterAll(() => s3.destroy());

  const writeHot = async (shopId: string, jobId: string, ...payloads: JobDetailsPayload[]) => {
    for (const p of payloads) await store.writeFlush(shopId, jobId, flushIdForChunks(p.chunk_ids), p);
  };

  it('hot only: lists the prefix and GETs each flush; months [] skips the archive', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    await writeHot(shopId, jobId, FIRST, SECOND);
    await store.writePlatformData(shopId, jobId, { indexer: { docs: 10 } });

    const r = await reader.readAllDetails({ shopId, jobId, months: [] });
    expect(r.details).toEqual(MERGED);
    expect(r.provenance).toMatchObject({ source: 'hot', parts: [], requests: 3 }); // List + 2 GETs
    expect(r.provenance.bytes).toBeGreaterThan(0);

    // completedAt known but nothing archived: the same hot read, then the index GET (404), the month's
    // shared index (404: the shop-month is not packed either) and 1 List of the month's part prefix
    // (empty: no index was lost).
    const known = await reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    expect(known.details).toEqual(MERGED);
    expect(known.provenance).toMatchObject({ source: 'hot', requests: 6 });

    const pd = await reader.readPlatformData({ shopId, jobId, completedAt: COMPLETED });
    expect(pd).toEqual({
      data: { indexer: { docs: 10 } },
      provenance: expect.objectContaining({ source: 'hot', requests: 1 }),
    });
  });

  it('archive only, month known: 3 requests (hot List, index, one ranged GET), member verified', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    const { part, index } = await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [
        { jobId: generateJobId(), details: details({ chunk_ids: ['p9'] }), platformData: { other: true } },
        {
          jobId,
          details: MERGED,
          platformData: { indexer: { docs: 10 } },
          meta: { completed_at: COMPLETED },
        },
      ],
      deletedAt: '2026-02-15T04:00:00.000Z',
    });
    const indexBytes = serializeMonthIndex(index).length;
    const entry = index.jobs[jobId]?.[0];

    const r = await reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    expect(r.details).toEqual(MERGED);
    expect(r.provenance).toEqual({
      source: 'archive',
      parts: [part.partKey],
      // The hot prefix is always listed (empty here): a flush written after the archival is read too.
      requests: 3,
      bytes: indexBytes + (entry?.length ?? 0),
      inline: [],
      warnings: [],
    });

    // Platform data: hot GET (404), index, one ranged GET.
    const pd = await reader.readPlatformData({ shopId, jobId, completedAt: COMPLETED });
    expect(pd.data).toEqual({ indexer: { docs: 10 } });
    expect(pd.provenance).toMatchObject({ source: 'archive', parts: [part.partKey], requests: 3 });

    // lookup: the platform-data member sits right before the job member, so one GET covers both.
    const look = await reader.lookup({ shopId, jobId, completedAt: COMPLETED });
    expect(look).toMatchObject({
      details: MERGED,
      platformData: { indexer: { docs: 10 } },
      detailsSource: 'archive',
      platformDataSource: 'archive',
      hotKeys: [],
      archivedJob: { status: 'FAILED', completed_at: COMPLETED },
    });
    expect(look.archivals.map((a) => [a.month, a.partKey, a.entry.deleted_at])).toEqual([
      [MONTH, part.partKey, '2026-02-15T04:00:00.000Z'],
    ]);
    // Index + the one GET of both members + platform-data.json (404): a platform-data.json rewritten
    // after the delete would be the current one, as readPlatformData answers (issue 25).
    expect(look.provenance).toMatchObject({ source: 'archive', requests: 3 });
  });

  it('a lookup of a 1,500-job month, month known: at most 3 requests and 100 KB (the filters are in the part, not the index)', async () => {
    const shopId = newShop();
    const ids = Array.from({ length: 1500 }, () => generateJobId());
    const jobs = ids.map((jobId, i) => ({
      jobId,
      // ~10 document ids a job (what a seeded month lists), and platform data.
      details: seededDetails(i),
      platformData: { indexer: { batch_size: 50 } },
      meta: { completed_at: COMPLETED },
    }));
    const { index } = await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs,
      deletedAt: '2026-02-15T04:00:00.000Z',
    });
    // The index holds no document filter: the part's last member does.
    expect(index.parts[0]?.filters).toBeDefined();
    for (const jobId of [ids[0], ids[777], ids[1499]] as string[]) {
      const look = await reader.lookup({ shopId, jobId, completedAt: COMPLETED });
      expect(look.detailsSource).toBe('archive');
      // The index (one read), the job's block, the hot platform-data.json check.
      expect(look.provenance.requests).toBeLessThanOrEqual(3);
      expect(look.provenance.bytes).toBeLessThanOrEqual(100 * 1024);
    }
  });

  it('a lookup of a 3,000-job month (each job its own completion), month known: the whole index is the first read — 3 requests, ≤ 100 KB', async () => {
    const shopId = newShop();
    const start = Date.parse(`${MONTH}-01T00:00:00.000Z`);
    const jobs = Array.from({ length: 3000 }, (_, i) => ({
      jobId: generateJobId(),
      details: seededDetails(i),
      platformData: { indexer: { batch_size: 50 } },
      // Completions spread over the month to the millisecond (what the index stores per entry).
      meta: { completed_at: new Date(start + ((i * 2_654_435_761) % (28 * 86_400_000))).toISOString() },
    }));
    await archiveJobs(s3, bucket, { shopId, month: MONTH, jobs, deletedAt: '2026-02-15T04:00:00.000Z' });
    const stored = await s3.send(
      new HeadObjectCommand({ Bucket: bucket, Key: monthIndexKey(shopId, MONTH) }),
    );
    expect(stored.ContentLength).toBeLessThanOrEqual(INDEX_FIRST_READ_BYTES);
    for (const j of [jobs[0], jobs[1234], jobs[2999]]) {
      if (!j) throw new Error('no job');
      const look = await reader.lookup({ shopId, jobId: j.jobId, completedAt: j.meta.completed_at });
      expect(look.detailsSource).toBe('archive');
      expect(look.archivals.map((a) => [a.entry.completed_at, a.status])).toEqual([
        [j.meta.completed_at, 'FAILED'],
      ]);
      expect(look.provenance.requests).toBe(3);
      expect(look.provenance.bytes).toBeLessThanOrEqual(100 * 1024);
    }
  });

  it('a lookup of an 8,000-job month whose index outgrows the first read, month known: the block directory names the record block — 3 requests, ≤ 100 KB; a damaged directory is damage', async () => {
    const shopId = newShop();
    const start = Date.parse(`${MONTH}-01T00:00:00.000Z`);
    // Job ids in code-point order, as the archiver writes them (archive-group.ts byJobId).
    const ids = Array.from({ length: 8001 }, () => generateJobId()).sort();
    const absent = ids.splice(4321, 1)[0] as string;
    const jobs = ids.map((jobId, i) => ({
      jobId,
      // Job 6000's line is longer than a block: a block of its own, its platform data in the one before.
      details:
        i === 6000
          ? details({
              chunk_ids: ['p0'],
              failed: { timeout: Array.from({ length: 4000 }, (_, k) => `gid://shopify/Product/${k}`) },
            })
          : seededDetails(i),
      platformData: { indexer: { batch_size: i === 6000 ? 51 : 50 } },
      meta: { completed_at: new Date(start + ((i * 2_654_435_761) % (28 * 86_400_000))).toISOString() },
    }));
    await archiveJobs(s3, bucket, { shopId, month: MONTH, jobs, deletedAt: '2026-02-15T04:00:00.000Z' });
    const key = monthIndexKey(shopId, MONTH);
    const stored = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(stored.ContentLength).toBeGreaterThan(INDEX_FIRST_READ_BYTES);
    for (const j of [jobs[0], jobs[4000], jobs[6000], jobs[7999]]) {
      if (!j) throw new Error('no job');
      const look = await reader.lookup({ shopId, jobId: j.jobId, completedAt: j.meta.completed_at });
      expect(look.details).toEqual(j.details);
      expect(look.platformData).toEqual(j.platformData);
      expect(look.archivals.map((a) => [a.entry.completed_at, a.entry.deleted_at, a.status])).toEqual([
        [j.meta.completed_at, '2026-02-15T04:00:00.000Z', 'FAILED'],
      ]);
      // The hot check, the index's first read, the record block the directory names.
      expect(look.provenance.requests).toBe(3);
      if (j !== jobs[6000]) expect(look.provenance.bytes).toBeLessThanOrEqual(100 * 1024);
    }
    // A job between two archived ids: its block does not hold it — not archived, no error.
    const none = await reader.lookup({ shopId, jobId: absent, completedAt: COMPLETED });
    expect(none.archivals).toEqual([]);
    expect(none.detailsSource).toBe('none');
    expect(none.provenance.requests).toBe(3);

    // A directory whose ids do not ascend is the index's damage, never "not archived".
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const raw = Buffer.from((await got.Body?.transformToByteArray()) ?? new Uint8Array(0));
    const head = gzipMemberLength(raw);
    if (!('length' in head)) throw new Error('no header member');
    const header = JSON.parse(gunzipSync(raw.subarray(0, head.length)).toString('utf8')) as {
      parts: Array<{ dir: string[] }>;
    };
    const dir = header.parts[0]?.dir ?? [];
    expect(dir.length).toBeGreaterThan(10);
    [dir[1], dir[2]] = [dir[2] as string, dir[1] as string];
    // The job blocks' offsets count from the end of the header member: they stay valid.
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: Buffer.concat([gzipSync(`${JSON.stringify(header)}\n`), raw.subarray(head.length)]),
        ContentType: 'application/json',
        ContentEncoding: 'gzip',
      }),
    );
    await expect(
      reader.lookup({ shopId, jobId: jobs[4000]?.jobId as string, completedAt: COMPLETED }),
    ).rejects.toThrow(/block directory of part .*ids must ascend/);
  });

  it('a settled month (no entries in its index): a present job in 3 requests; an absent one by the index alone (its job filter, its id range) or, on a false match, its probed block', async () => {
    const shopId = newShop();
    const start = Date.parse(`${MONTH}-01T00:00:00.000Z`);
    const ids = Array.from({ length: 2001 }, () => generateJobId()).sort();
    const absent = ids.splice(1000, 1)[0] as string;
    const jobs = ids.map((jobId, i) => ({
      jobId,
      details: seededDetails(i),
      platformData: { indexer: { batch_size: 50 } },
      meta: { completed_at: new Date(start + ((i * 2_654_435_761) % (28 * 86_400_000))).toISOString() },
    }));
    const deletedAt = '2026-02-15T04:00:00.000Z';
    await archiveJobs(s3, bucket, { shopId, month: MONTH, jobs, deletedAt, settle: true });
    const index = await readIndex(s3, bucket, shopId, MONTH);
    expect(index.jobs).toEqual({});
    expect(index.parts[0]?.settled?.dir.length).toBeGreaterThan(3);
    const indexBytes = serializeMonthIndex(index).length;
    for (const j of [jobs[0], jobs[999], jobs[1999]]) {
      if (!j) throw new Error('no job');
      const look = await reader.lookup({ shopId, jobId: j.jobId, completedAt: j.meta.completed_at });
      expect(look.details).toEqual(j.details);
      expect(look.platformData).toEqual(j.platformData);
      expect(look.archivals.map((a) => [a.entry.completed_at, a.entry.deleted_at, a.status])).toEqual([
        [j.meta.completed_at, deletedAt, 'FAILED'],
      ]);
      // The hot check, the whole index, the record block its directory names (read once).
      expect(look.provenance.requests).toBe(3);
      expect(look.provenance.bytes).toBeLessThanOrEqual(100 * 1024);
    }
    // Absent, inside the part's id range: its job filter answers from the index (2 requests), or, for
    // an id it matches anyway (1 in 128), the one block its directory names is read (3).
    expect(index.parts[0]?.settled?.job_filter?.k).toBe(7);
    const inRange = (matched: boolean) => {
      for (const id of [absent, ...Array.from({ length: 5000 }, (_, i) => `${absent}-${i}`)])
        if (settledCandidates(index, id).length > 0 === matched) return id;
      throw new Error('no such id');
    };
    const none = await reader.lookup({ shopId, jobId: inRange(false), completedAt: COMPLETED });
    expect(none.archivals).toEqual([]);
    expect(none.detailsSource).toBe('none');
    expect(none.provenance).toMatchObject({ requests: 2, bytes: indexBytes });
    const falseMatch = await reader.lookup({ shopId, jobId: inRange(true), completedAt: COMPLETED });
    expect(falseMatch.archivals).toEqual([]);
    expect(falseMatch.provenance.requests).toBe(3);
    const blocks = index.parts[0]?.settled?.block_bytes ?? [];
    expect(falseMatch.provenance.bytes).toBeLessThanOrEqual(indexBytes + Math.max(...blocks));
    // Below every part's id range, an id the job filter rejects: the index alone answers (one it
    // matched would cost the first block's read).
    const outside = ['0', ...Array.from({ length: 5000 }, (_, i) => `0-${i}`)].find(
      (id) => settledCandidates(index, id).length === 0,
    );
    const below = await reader.lookup({ shopId, jobId: outside as string, completedAt: COMPLETED });
    expect(below.archivals).toEqual([]);
    expect(below.provenance).toMatchObject({ requests: 2, bytes: indexBytes });
  });

  it('a settled part whose index states a lowered last id: a job past it is named as damage of the part (its filter matches it), never "not archived"; with a hot copy, a warning', async () => {
    const shopId = newShop();
    const ids = [generateJobId(), generateJobId(), generateJobId()].sort() as [string, string, string];
    const { part } = await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: ids.map((jobId) => ({ jobId, details: FIRST, meta: { completed_at: COMPLETED } })),
      deletedAt: '2026-02-15T04:00:00.000Z',
      settle: true,
    });
    const index = await readIndex(s3, bucket, shopId, MONTH);
    const settled = index.parts[0]?.settled;
    if (!settled?.job_filter) throw new Error('no settled part with a job filter');
    expect(settled.last).toBe(ids[2]);
    // Damage: `last` lowered to the first id (still at or above its one block's id: it parses).
    const lowered = { ...settled, last: ids[0] };
    await putIndex(s3, bucket, {
      ...index,
      parts: [{ ...(index.parts[0] as IndexedPart), settled: lowered }],
    });
    expect((await readIndex(s3, bucket, shopId, MONTH)).parts[0]?.settled?.last).toBe(ids[0]);
    const q = { shopId, jobId: ids[2], completedAt: COMPLETED };
    await expect(reader.readAllDetails(q)).rejects.toThrow(CorruptObjectError);
    await expect(reader.readAllDetails(q)).rejects.toThrow(
      new RegExp(`${part.partName.replace(/\./g, '\\.')}.*outside its range`),
    );
    // A hot copy answers; the damaged part is named in the warnings.
    await writeHot(shopId, ids[2], SECOND);
    const r = await reader.readAllDetails(q);
    expect(r.details).toEqual(SECOND);
    expect(r.provenance.warnings.join('\n')).toContain(part.partName);
  });

  it('a mixed month: a settled part and a later part with entries; a job in both reads as two archivals in commit order', async () => {
    const shopId = newShop();
    const [a, b] = [generateJobId(), generateJobId()].sort() as [string, string];
    const retried = '2026-01-20T10:00:00.000Z';
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [
        { jobId: a, details: FIRST, meta: { completed_at: COMPLETED } },
        { jobId: b, details: FIRST, meta: { completed_at: COMPLETED } },
      ],
      deletedAt: '2026-02-15T04:00:00.000Z',
      settle: true,
    });
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      at: new Date('2026-02-20T03:00:00Z'),
      jobs: [{ jobId: a, details: SECOND, meta: { completed_at: retried } }],
    });
    const index = await readIndex(s3, bucket, shopId, MONTH);
    expect(index.parts.map((p) => p.settled !== undefined)).toEqual([true, false]);
    expect(Object.keys(index.jobs)).toEqual([a]);
    const look = await reader.lookup({ shopId, jobId: a, completedAt: retried });
    expect(look.archivals.map((x) => [x.partKey, x.entry.completed_at, x.entry.deleted_at])).toEqual([
      [index.parts[0]?.key, COMPLETED, '2026-02-15T04:00:00.000Z'],
      [index.parts[1]?.key, retried, null],
    ]);
    expect(look.details).toEqual(MERGED);
    const other = await reader.lookup({ shopId, jobId: b, completedAt: COMPLETED });
    expect(other.archivals.map((x) => x.partKey)).toEqual([index.parts[0]?.key]);
    expect(other.details).toEqual(FIRST);
  });

  it('a settled part that cannot be read is named, never "not archived": missing → CorruptObjectError, past retention → ArchiveExpiredError; with a hot copy, a warning', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    const { part } = await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: FIRST, meta: { completed_at: COMPLETED } }],
      deletedAt: '2026-02-15T04:00:00.000Z',
      settle: true,
    });
    const q = { shopId, jobId, completedAt: COMPLETED };
    const past = new Date(Date.parse('2026-02-15T03:00:00Z') + 400 * 86_400_000);
    const later = new JobDetailsReader(s3, bucket, { retentionMonths: 12, clock: () => past });
    await expect(later.readAllDetails(q)).rejects.toMatchObject({
      name: 'ArchiveExpiredError',
      key: part.partKey,
    });
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: [{ Key: part.partKey }] } }));
    await expect(reader.readAllDetails(q)).rejects.toThrow(CorruptObjectError);
    await expect(reader.readAllDetails(q)).rejects.toThrow(part.partKey);
    // A hot copy answers; the part that may hold the archival is named in the warnings.
    await writeHot(shopId, jobId, SECOND);
    const r = await reader.readAllDetails(q);
    expect(r.details).toEqual(SECOND);
    expect(r.provenance.warnings.join('\n')).toContain(part.partKey);
  });

  it('both: archived but not yet deleted → hot and archive merged and deduplicated', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    await writeHot(shopId, jobId, FIRST, SECOND);
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: MERGED, meta: { completed_at: COMPLETED } }],
    });

    const r = await reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    expect(r.details).toEqual(MERGED);
    // index + List + 2 flush GETs + 1 member; no re-check: this completion is already committed.
    expect(r.provenance).toMatchObject({ source: 'both', requests: 5 });
  });

  it('both: retried after archival → the old archive and the new hot flushes merged', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: FIRST, meta: { completed_at: COMPLETED } }],
      deletedAt: '2026-02-15T04:00:00.000Z',
    });
    const flush = await store.writeFlush(shopId, jobId, flushIdForChunks(SECOND.chunk_ids), SECOND);
    const index = await readIndex(s3, bucket, shopId, MONTH);
    const member = index.jobs[jobId]?.[0]?.length ?? 0;

    const retriedAt = '2026-01-20T10:00:00.000Z';
    const r = await reader.readAllDetails({ shopId, jobId, completedAt: retriedAt });
    expect(r.details).toEqual(MERGED);
    // List, 1 flush GET, then index and 1 member: hot first, so no re-check is needed.
    expect(r.provenance).toMatchObject({ source: 'both', requests: 4 });
    expect(r.provenance.bytes).toBe(serializeMonthIndex(index).length + flush.size + member);
  });

  it('an archival committed (and its hot objects deleted) while the hot side is read is not missed', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    await writeHot(shopId, jobId, FIRST, SECOND);
    // The "archiver" runs right when the reader lists the hot prefix (its first request).
    let raced = false;
    const racing = new Proxy(s3, {
      get(target, prop) {
        if (prop !== 'send') return Reflect.get(target, prop, target);
        return async (cmd: Parameters<S3Client['send']>[0]) => {
          if (!raced && cmd instanceof ListObjectsV2Command && cmd.input.Prefix === jobPrefix(jobId)) {
            raced = true;
            await archiveJobs(s3, bucket, {
              shopId,
              month: MONTH,
              jobs: [{ jobId, details: MERGED, meta: { completed_at: COMPLETED } }],
            });
            const hot = await store.listJobObjects(jobId);
            await s3.send(
              new DeleteObjectsCommand({
                Bucket: bucket,
                Delete: { Objects: hot.map((o) => ({ Key: o.key })) },
              }),
            );
          }
          return target.send(cmd);
        };
      },
    });
    const r = await new JobDetailsReader(racing, bucket).readAllDetails({
      shopId,
      jobId,
      completedAt: COMPLETED,
    });
    expect(raced).toBe(true);
    expect(r.details).toEqual(MERGED);
    // List (empty: archived and deleted meanwhile), then the index (committed before the delete), 1 member.
    expect(r.provenance).toMatchObject({ source: 'archive', requests: 3 });
  });

  it('row expired (month unknown): a bounded search of the shop index finds every archival', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    const other = { jobId: generateJobId(), details: details({ chunk_ids: ['x'] }) };
    // Archived in 2025-11, retried, archived again in 2026-01; 2025-12 holds other jobs only.
    await archiveJobs(s3, bucket, {
      shopId,
      month: '2025-11',
      jobs: [other, { jobId, details: FIRST, meta: { completed_at: '2025-11-03T00:00:00.000Z' } }],
      at: new Date('2025-12-05T03:00:00Z'),
    });
    await archiveJobs(s3, bucket, {
      shopId,
      month: '2025-12',
      jobs: [other],
      at: new Date('2026-01-05T03:00:00Z'),
    });
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: SECOND, meta: { completed_at: COMPLETED } }],
      at: new Date('2026-02-05T03:00:00Z'),
    });
    // A pending manifest under the same prefix is not an index.
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: pendingKey(shopId, MONTH, 'part-20260301T000000Z-aaaaaaaa.jsonl.gz'),
        Body: '{}',
      }),
    );

    const r = await reader.readAllDetails({ shopId, jobId });
    expect(r.details).toEqual(MERGED);
    // hot List + index List + shared-index List + part List (no month with parts lacks its index)
    // + 3 index GETs + 2 members.
    expect(r.provenance).toMatchObject({ source: 'archive', requests: 9 });
    expect(r.provenance.parts).toHaveLength(2);

    const look = await reader.lookup({ shopId, jobId });
    expect(look.archivals.map((a) => a.month)).toEqual(['2025-11', MONTH]); // oldest archival first
    expect(look.archivedJob?.completed_at).toBe(COMPLETED);

    // The bound: only the newest 2 months are read, so the 2025-11 archival is out of reach.
    const bounded = new JobDetailsReader(s3, bucket, { searchMonths: 2 });
    const b = await bounded.readAllDetails({ shopId, jobId });
    expect(b.details).toEqual(SECOND);
    // hot List, index List, shared-index List, part List, 2 index GETs, 1 member.
    expect(b.provenance.requests).toBe(1 + 1 + 1 + 1 + 2 + 1);

    // createdAt narrows the search to months the job existed in.
    const from = await reader.readAllDetails({ shopId, jobId, createdAt: '2025-12-20T00:00:00.000Z' });
    expect(from.details).toEqual(SECOND);
    expect(from.provenance.requests).toBe(1 + 1 + 1 + 1 + 2 + 1);

    // Known completion + creation: both months read directly, no listing.
    const known = await reader.readAllDetails({
      shopId,
      jobId,
      createdAt: '2025-11-01T00:00:00.000Z',
      completedAt: COMPLETED,
    });
    expect(known.details).toEqual(MERGED);
    // 3 index GETs (2025-11..2026-01); the newest entry is this completion, not yet deleted, so the
    // hot prefix is listed (empty) without a re-check; 2 members.
    expect(known.provenance).toMatchObject({ source: 'archive', requests: 3 + 1 + 2 });
  });

  it('a job archived twice in one month: one ranged GET per entry, merged', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [
        {
          jobId,
          details: FIRST,
          platformData: { run: 1 },
          meta: { completed_at: '2026-01-05T00:00:00.000Z' },
        },
      ],
      at: new Date('2026-02-10T03:00:00Z'),
      deletedAt: '2026-02-10T04:00:00.000Z',
    });
    await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: SECOND, meta: { completed_at: COMPLETED } }],
      at: new Date('2026-02-20T03:00:00Z'),
      deletedAt: '2026-02-20T04:00:00.000Z',
    });
    const index = await readIndex(s3, bucket, shopId, MONTH);
    expect(index.jobs[jobId]).toHaveLength(2);

    const r = await reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    expect(r.details).toEqual(MERGED);
    // hot List (empty), index, one ranged GET per entry.
    expect(r.provenance).toMatchObject({ source: 'archive', requests: 4 });
    expect(r.provenance.parts).toHaveLength(2);

    // The newest archival wrote no platform data; the earlier one's is still the job's.
    const pd = await reader.readPlatformData({ shopId, jobId, completedAt: COMPLETED });
    expect(pd.data).toEqual({ run: 1 });
  });

  it('a flipped byte in a member → CorruptObjectError; an index entry with the wrong sha256 too', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    const { part, index } = await archiveJobs(s3, bucket, {
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: MERGED, meta: { completed_at: COMPLETED } }],
      deletedAt: '2026-02-15T04:00:00.000Z',
    });
    const entry = index.jobs[jobId]?.[0];
    if (!entry) throw new Error('fixture did not index the job');

    const flipped = Buffer.from(part.bytes);
    const at = entry.offset + Math.floor(entry.length / 2);
    flipped[at] = (flipped[at] ?? 0) ^ 0xff;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: part.partKey, Body: flipped }));
    await expect(reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED })).rejects.toThrow(
      CorruptObjectError,
    );

    // Intact part, but its index is in a pre-1.0 format (a local bucket from before the release):
    // refused with the fix in one line, never read as "no archival".
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: part.partKey, Body: part.bytes }));
    const old = { format: 'job-details-archive/index@5', shop_id: shopId, month: MONTH, parts: [], jobs: {} };
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: monthIndexKey(shopId, MONTH),
        Body: gzipSync(JSON.stringify(old)),
        ContentEncoding: 'gzip',
      }),
    );
    const read = reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    await expect(read).rejects.toThrow(UnsupportedFormatError);
    await expect(reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED })).rejects.toThrow(
      /index@5: written by a pre-1\.0 build .*rebuild the local data/,
    );
  });

  it('a part not committed to the month index is invisible; one with no staging manifest either means a lost index', async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    const part = await buildPart({
      shopId,
      month: MONTH,
      jobs: [{ jobId, details: MERGED, meta: { completed_at: COMPLETED } }],
    });
    await putPart(s3, bucket, part);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: part.partKey }));
    expect(listed.KeyCount).toBe(1);
    const partName = part.partKey.slice(part.partKey.lastIndexOf('/') + 1);

    // No index and no staging manifest: the part was committed and its index lost (issue 31).
    const lost = reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    await expect(lost).rejects.toThrow(CorruptObjectError);
    await expect(lost).rejects.toThrow(`jobarchive reindex --shop ${shopId} --month ${MONTH}`);
    await expect(reader.lookup({ shopId, jobId })).rejects.toThrow('jobarchive reindex');

    // Its staging manifest there: an archive in flight (or abandoned), never committed — invisible.
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: pendingKey(shopId, MONTH, partName), Body: '{}' }),
    );

    const known = await reader.readAllDetails({ shopId, jobId, completedAt: COMPLETED });
    expect(known.details).toBeNull();
    expect(known.provenance).toMatchObject({ source: 'none', parts: [] });
    const searched = await reader.lookup({ shopId, jobId });
    expect(searched).toMatchObject({
      details: null,
      platformData: null,
      archivals: [],
      provenance: { source: 'none' },
    });
  });

  it("another shop's job reads as absent on both sides", async () => {
    const shopId = newShop();
    const jobId = generateJobId();
    await writeHot(shopId, jobId, FIRST);
    await store.writePlatformData(shopId, jobId, { a: 1 });
    await archiveJobs(s3, bucket, { shopId, month: MONTH, jobs: [{ jobId, details: SECOND }] });

    const r = await reader.lookup({ shopId: newShop(), jobId, completedAt: COMPLETED });
    expect(r).toMatchObject({ details: null, platformData: null, provenance: { source: 'none' } });
    const pd = await reader.readPlatformData({ shopId: newShop(), jobId, months: [MONTH] });
    expect(pd.data).toBeNull();
  });

  it('a month index that is not an index → CorruptObjectError naming it', async () => {
    const shopId = newShop();
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: monthIndexKey(shopId, MONTH), Body: '{"format":"nope"}' }),
    );
    await expect(reader.readAllDetails({ shopId, jobId: generateJobId(), months: [MONTH] })).rejects.toThrow(
      new RegExp(monthIndexKey(shopId, MONTH)),
    );
  });

  it('bad ids, months or timestamps → typed errors with zero requests', async () => {
    const counts = zeroCounts();
    const counted = testS3();
    countRequests(counted, 's3', counts);
    const r = new JobDetailsReader(counted, bucket);
    const bad: Array<[unknown, () => Promise<unknown>]> = [
      [InvalidIdError, () => r.readAllDetails({ shopId: '../x', jobId: 'j1' })],
      [InvalidIdError, () => r.readAllDetails({ shopId: 's1', jobId: 'a/b' })],
      [InvalidIdError, () => r.readPlatformData({ shopId: 's1', jobId: '' })],
      [InvalidIdError, () => r.lookup({ shopId: 's1', jobId: 'j\u0000' })],
      [InvalidIdError, () => r.readAllDetails({ shopId: 's1', jobId: 'j1', months: ['2026-13'] })],
      [InvalidInputError, () => r.readAllDetails({ shopId: 's1', jobId: 'j1', completedAt: 'yesterday' })],
      [
        InvalidInputError,
        () => r.readAllDetails({ shopId: 's1', jobId: 'j1', row: { failed_items_details: 'x' } }),
      ],
      [
        InvalidInputError,
        () =>
          r.readAllDetails({
            shopId: 's1',
            jobId: 'j1',
            createdAt: COMPLETED,
            completedAt: '2025-01-01T00:00:00Z',
          }),
      ],
    ];
    for (const [type, call] of bad) await expect(call()).rejects.toBeInstanceOf(type);
    expect(counts.s3).toBe(0);
    counted.destroy();
  });
});
