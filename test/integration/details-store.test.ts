import { gzipSync } from 'node:zlib';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mapLimit } from '../../shared/concurrency';
import {
  detailsKey,
  encodeFlushBody,
  flushIdForChunks,
  generateJobId,
  type JobDetailsPayload,
  JobDetailsStore,
  platformDataKey,
} from '../../shared/details';
import { CorruptObjectError, InvalidIdError } from '../../shared/errors';
import { freshBucket, testS3 } from '../support/local';

const SHOP = 'acme-store.myshopify.com';

const payload = (
  p: Partial<JobDetailsPayload> & Pick<JobDetailsPayload, 'chunk_ids'>,
): JobDetailsPayload => ({
  failed: {},
  skipped: {},
  conflict: {},
  ...p,
});

const getBytes = async (s3: S3Client, bucket: string, key: string): Promise<Uint8Array> => {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await res.Body?.transformToByteArray()) ?? new Uint8Array(0);
};

describe('JobDetailsStore against s3rver', () => {
  let s3: S3Client;
  let bucket: string;
  let store: JobDetailsStore;

  beforeAll(async () => {
    s3 = testS3();
    bucket = await freshBucket();
    store = new JobDetailsStore(s3, bucket, { readConcurrency: 8 });
  });

  afterEach(() => jest.restoreAllMocks());

  it('writes flushes and reads them back merged, with the objects it read', async () => {
    const job = generateJobId();
    const first = payload({
      chunk_ids: ['p0', 'p1'],
      failed: { 'bad-sku': ['d1', 'd2'] },
      conflict: { version: [{ doc_id: 'd4', existing_version: 3, incoming_version: 2 }] },
    });
    const second = payload({
      chunk_ids: ['p2', 'preparse'],
      failed: { 'bad-sku': ['d2', 'd5'] },
      skipped: { draft: ['d6'] },
      conflict: { version: [{ incoming_version: 2, existing_version: 3, doc_id: 'd4' }] },
    });
    const w1 = await store.writeFlush(SHOP, job, flushIdForChunks(first.chunk_ids), first);
    const w2 = await store.writeFlush(SHOP, job, flushIdForChunks(second.chunk_ids), second);

    const { details, sources } = await store.readAllDetailsWithSources(job);
    expect(details).toEqual({
      chunk_ids: ['p0', 'p1', 'p2', 'preparse'],
      // Merged in key order (flush ids are hashes, so either flush may come first), then deduped.
      failed: { 'bad-sku': w1.key < w2.key ? ['d1', 'd2', 'd5'] : ['d2', 'd5', 'd1'] },
      skipped: { draft: ['d6'] },
      conflict: { version: [{ doc_id: 'd4', existing_version: 3, incoming_version: 2 }] },
    });
    expect(await store.readAllDetails(job)).toEqual(details);
    expect([...sources].sort((a, b) => a.key.localeCompare(b.key))).toEqual(
      [w1, w2].sort((a, b) => a.key.localeCompare(b.key)),
    );

    // The lower-level reads the archiver uses: raw bytes exactly as written.
    const raw = await store.readFlushObject(w1.key);
    expect(Buffer.compare(Buffer.from(raw.bytes), encodeFlushBody(first))).toBe(0);
    expect(raw).toMatchObject({ key: w1.key, size: w1.size, etag: w1.etag });
    const listed = await store.listJobObjects(job);
    expect(listed.map((o) => o.kind)).toEqual(['flush', 'flush']);
    expect(listed.map((o) => o.etag).sort()).toEqual([w1.etag, w2.etag].sort());
  });

  it('stores gzip JSON with content headers and shop/job metadata', async () => {
    const job = generateJobId();
    const w = await store.writeFlush(SHOP, job, 'f1', payload({ chunk_ids: ['p0'], failed: { r: ['d1'] } }));
    expect(w.key).toBe(detailsKey(job, 'f1'));
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: w.key }));
    expect(head.Metadata).toEqual({ 'shop-id': SHOP, 'job-id': job });
    expect(head.ContentEncoding).toBe('gzip');
    expect(head.ContentType).toBe('application/json');
    // Stored bytes are the gzip (nothing decompressed them on the way in or out).
    const stored = await getBytes(s3, bucket, w.key);
    expect([stored[0], stored[1]]).toEqual([0x1f, 0x8b]);

    await store.writePlatformData(SHOP, job, { indexer: { mode: 'full' } });
    const pd = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: platformDataKey(job) }));
    expect(pd.Metadata).toEqual({ 'shop-id': SHOP, 'job-id': job });
    expect(pd.ContentType).toBe('application/json');
    expect(pd.ContentEncoding).toBeUndefined();
  });

  it('re-flushing the same chunk set re-PUTs identical bytes (same ETag) and adds no duplicates', async () => {
    const job = generateJobId();
    const p = payload({
      chunk_ids: ['p1', 'p0'],
      failed: { r: ['d1', 'd2'] },
      conflict: { c: [{ doc_id: 'd3', v: 1 }] },
    });
    // The retry builds its payload in another order; the key and the bytes must not change.
    const retry = payload({
      chunk_ids: ['p0', 'p1'],
      conflict: { c: [{ v: 1, doc_id: 'd3' }] },
      failed: { r: ['d1', 'd2'] },
    });
    const flushId = flushIdForChunks(p.chunk_ids);
    expect(flushIdForChunks(retry.chunk_ids)).toBe(flushId);

    const a = await store.writeFlush(SHOP, job, flushId, p);
    const bytesA = await getBytes(s3, bucket, a.key);
    const b = await store.writeFlush(SHOP, job, flushId, retry);
    const bytesB = await getBytes(s3, bucket, b.key);

    expect(b.key).toBe(a.key);
    expect(b.etag).toBe(a.etag);
    expect(Buffer.compare(Buffer.from(bytesA), Buffer.from(bytesB))).toBe(0);
    expect(await store.listJobObjects(job)).toHaveLength(1);
    expect(await store.readAllDetails(job)).toEqual({
      chunk_ids: ['p0', 'p1'],
      failed: { r: ['d1', 'd2'] },
      skipped: {},
      conflict: { c: [{ doc_id: 'd3', v: 1 }] },
    });
  });

  it('lists and merges a job with more than 1,000 objects (paginated, no Delimiter)', async () => {
    const job = generateJobId();
    const n = 1050;
    await mapLimit(
      Array.from({ length: n }, (_, i) => i),
      32,
      (i) =>
        store.writeFlush(
          SHOP,
          job,
          flushIdForChunks([`p${i}`]),
          payload({ chunk_ids: [`p${i}`], failed: { r: [`d${i}`, 'shared'] } }),
        ),
    );
    await store.writePlatformData(SHOP, job, { n });
    // A job whose id extends this one's must not leak into the listing.
    await store.writeFlush(SHOP, `${job}0`, 'f1', payload({ chunk_ids: ['other-job'] }));

    const send = jest.spyOn(s3, 'send');
    const listed = await store.listJobObjects(job);
    expect(send.mock.calls.filter(([cmd]) => cmd instanceof ListObjectsV2Command)).toHaveLength(2);
    send.mockRestore();
    expect(listed).toHaveLength(n + 1);
    expect(listed.filter((o) => o.kind === 'flush')).toHaveLength(n);
    expect(listed.filter((o) => o.kind === 'platform-data')).toHaveLength(1);

    const { details, sources } = await store.readAllDetailsWithSources(job);
    expect(sources).toHaveLength(n);
    expect(details.chunk_ids).toHaveLength(n);
    expect(details.chunk_ids).not.toContain('other-job');
    expect(new Set(details.failed.r)).toEqual(
      new Set([...Array.from({ length: n }, (_, i) => `d${i}`), 'shared']),
    );
    expect(details.failed.r).toHaveLength(n + 1);
  });

  it('platform data: null when absent, then written, then overwritten in place', async () => {
    const job = generateJobId();
    expect(await store.readPlatformData(job)).toBeNull();
    await store.writePlatformData(SHOP, job, { indexer: { batch: 50 } });
    expect(await store.readPlatformData(job)).toEqual({ indexer: { batch: 50 } });
    await store.writePlatformData(SHOP, job, { indexer: { batch: 10, mode: 'delta' } });
    expect(await store.readPlatformData(job)).toEqual({ indexer: { batch: 10, mode: 'delta' } });
    expect(await store.readAllDetails(job)).toEqual({ chunk_ids: [], failed: {}, skipped: {}, conflict: {} });
  });

  it('a missing bucket is an error, not "no platform data"', async () => {
    const missing = new JobDetailsStore(s3, `missing-${generateJobId()}`);
    await expect(missing.readPlatformData(generateJobId())).rejects.toMatchObject({ name: 'NoSuchBucket' });
  });

  it('skips keys under the prefix that it did not write, but lists them', async () => {
    const job = generateJobId();
    await store.writeFlush(SHOP, job, 'f1', payload({ chunk_ids: ['p0'] }));
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: `job-details/${job}/nested/x.json.gz`, Body: 'junk' }),
    );
    expect((await store.listJobObjects(job)).map((o) => o.kind).sort()).toEqual(['flush', 'other']);
    expect((await store.readAllDetailsWithSources(job)).sources.map((s) => s.key)).toEqual([
      detailsKey(job, 'f1'),
    ]);
  });

  describe.each<[string, string]>([
    ['parent dir', '../escape'],
    ['slash', 'a/b'],
    ['empty', ''],
    ['control char', 'a\u0000b'],
    ['over-long', 'x'.repeat(129)],
  ])('an id that is %s', (_case, bad) => {
    it('is an InvalidIdError with zero S3 calls', async () => {
      const send = jest.spyOn(s3, 'send');
      const p = payload({ chunk_ids: ['p0'] });
      await expect(store.writeFlush(bad, 'j1', 'f1', p)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.writeFlush(SHOP, bad, 'f1', p)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.writeFlush(SHOP, 'j1', bad, p)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.writePlatformData(bad, 'j1', {})).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.writePlatformData(SHOP, bad, {})).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.readAllDetails(bad)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.listJobObjects(bad)).rejects.toBeInstanceOf(InvalidIdError);
      await expect(store.readPlatformData(bad)).rejects.toBeInstanceOf(InvalidIdError);
      expect(send).not.toHaveBeenCalled();
    });
  });

  describe.each<[string, () => Uint8Array, RegExp]>([
    ['zero bytes', () => new Uint8Array(0), /empty object/],
    ['bad gzip', () => encodeFlushBody(payload({ chunk_ids: ['p0'] })).subarray(0, 15), /bad gzip/],
    [
      'not gzip at all',
      () => Buffer.from('{"chunk_ids":[],"failed":{},"skipped":{},"conflict":{}}'),
      /not gzip/,
    ],
    ['bad JSON', () => gzipSync(Buffer.from('{"chunk_ids": [')), /bad JSON/],
    [
      'wrong shape',
      () => gzipSync(Buffer.from('{"chunk_ids":["p0"],"failed":{"r":[1]},"skipped":{},"conflict":{}}')),
      /failed\["r"\]\[0\]/,
    ],
  ])('a flush object holding %s', (_case, body, reason) => {
    it('is a CorruptObjectError naming the key, never partial details', async () => {
      const job = generateJobId();
      await store.writeFlush(SHOP, job, 'good', payload({ chunk_ids: ['p1'], failed: { r: ['d1'] } }));
      const key = detailsKey(job, 'bad');
      const bytes = body();
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: bytes,
          ContentLength: bytes.length,
          ContentEncoding: 'gzip',
        }),
      );

      const fromList = await store.readAllDetails(job).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(fromList).toBeInstanceOf(CorruptObjectError);
      expect(fromList).toMatchObject({ key, reason: expect.stringMatching(reason) });
      expect((fromList as Error).message).toContain(key);
      await expect(store.readFlushObject(key)).rejects.toMatchObject({ name: 'CorruptObjectError', key });
    });
  });

  it.each<[string, string]>([
    ['zero bytes', ''],
    ['bad JSON', '{"indexer":'],
    ['a JSON array', '[1,2]'],
  ])('platform data holding %s is a CorruptObjectError naming the key', async (_case, body) => {
    const job = generateJobId();
    const key = platformDataKey(job);
    // ContentLength spelled out: the SDK cannot size an empty body and would warn.
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: Buffer.from(body),
        ContentLength: Buffer.byteLength(body),
      }),
    );
    await expect(store.readPlatformData(job)).rejects.toMatchObject({ name: 'CorruptObjectError', key });
  });
});
