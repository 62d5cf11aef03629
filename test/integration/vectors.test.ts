import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import {
  INDEX_FORMAT,
  PART_FORMAT,
  parseMonthIndex,
  parseMonthIndexKey,
  parseSharedIndex,
  parseSharedIndexKey,
} from '../../shared/archive/format';
import { canonicalJson, type JsonValue, parseJsonExact } from '../../shared/details/json';
import { JobDetailsReader } from '../../shared/reader';
import { freshBucket, testS3 } from '../support/local';
import { expectedLookup, expectedSearch, lookupJson } from '../support/vector-scenario';

/**
 * The conformance vectors (docs/vectors/, `npm run vectors` regenerates them) cannot drift: their
 * bucket, loaded into a fresh local bucket, reads in this release exactly as expected.json says —
 * every job's lookup and every document's search — and every object is in the format this release
 * writes (a format change fails here until the vectors are regenerated and the spec updated).
 */
const DIR = resolve(__dirname, '../../docs/vectors');

interface Expected {
  format: string;
  objects: Array<{ key: string; content_encoding?: string; metadata?: Record<string, string> }>;
  lookups: Array<Record<string, unknown> & { case: string; shop_id: string; job_id: string }>;
  searches: Array<{ shop_id: string; doc_id: string; jobs: unknown[] }>;
}
const expected = parseJsonExact(
  readFileSync(join(DIR, 'expected.json'), 'utf8'),
  'expected.json',
) as Expected;
const bytesOf = (key: string) => readFileSync(join(DIR, 'bucket', key));

/** A fresh local bucket holding the vectors' objects, less `without`. */
const loaded = async (without: ReadonlySet<string> = new Set()) => {
  const s3 = testS3();
  const bucket = await freshBucket();
  for (const o of expected.objects) {
    if (without.has(o.key)) continue;
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: o.key,
        Body: bytesOf(o.key),
        ...(o.content_encoding ? { ContentEncoding: o.content_encoding } : {}),
        ...(o.metadata ? { Metadata: o.metadata } : {}),
      }),
    );
  }
  return new JobDetailsReader(s3, bucket);
};

test('every object of the vectors is in the current format 1.0', () => {
  expect(expected.format).toBe('1.0');
  expect(INDEX_FORMAT).toBe('job-details-archive/index@1.0');
  let indexes = 0;
  let parts = 0;
  for (const o of expected.objects) {
    if (parseMonthIndexKey(o.key)) {
      parseMonthIndex(bytesOf(o.key), o.key);
      indexes++;
    } else if (parseSharedIndexKey(o.key)) {
      parseSharedIndex(bytesOf(o.key), o.key);
      indexes++;
    } else if (o.key.startsWith('job-details-cold/')) {
      const first = JSON.parse(gunzipSync(bytesOf(o.key)).toString('utf8').split('\n')[0] as string);
      expect(first).toMatchObject({ type: 'part', format: PART_FORMAT });
      parts++;
    }
  }
  expect({ indexes, parts }).toEqual({ indexes: expect.any(Number), parts: expect.any(Number) });
  expect(indexes).toBeGreaterThanOrEqual(3);
  expect(parts).toBeGreaterThanOrEqual(4);
});

test('the vectors read as expected.json says: every lookup and every search', async () => {
  const reader = await loaded();
  for (const want of expected.lookups) {
    const job = { shopId: want.shop_id, jobId: want.job_id, case: want.case };
    const got = expectedLookup(job, await reader.lookup({ shopId: job.shopId, jobId: job.jobId }));
    const { case: _c, ...rest } = want;
    expect({ case: want.case, json: lookupJson(got) }).toEqual({ case: want.case, json: lookupJson(rest) });
  }
  const scenario = {
    jobs: [],
    docs: expected.searches.map((s) => ({ shopId: s.shop_id, docId: s.doc_id })),
  };
  const searches = await expectedSearch(reader, scenario);
  expect(canonicalJson(searches as unknown as JsonValue)).toBe(
    canonicalJson(expected.searches as unknown as JsonValue),
  );
  expect(expected.searches.some((s) => s.jobs.length === 0)).toBe(true); // the redacted document
  expect(expected.searches.filter((s) => s.jobs.length > 0).length).toBeGreaterThanOrEqual(3);
});

test("a missing settled part (the own month's first): what exists answers and the part is named in a warning; with nothing else, the error names it (the Python reader: test_reader.py, the same case)", async () => {
  const own = expected.lookups.find((w) => w.case.startsWith('own part,'));
  const archivals = own?.archivals as Array<{ part_key: string; month: string; completed_at: string }>;
  const first = archivals?.[0];
  if (!own || !first) throw new Error('no own-part lookup in the vectors');
  const indexKey = `job-details-index/${own.shop_id}/${first.month}/index.json`;
  const part = parseMonthIndex(bytesOf(indexKey), indexKey).parts[0];
  const settled = part?.settled;
  if (!part || !settled) throw new Error("the own month's first part is not settled");
  expect(part.key).toBe(first.part_key);
  const reader = await loaded(new Set([part.key]));
  const q = (jobId: string) => ({ shopId: own.shop_id, jobId, completedAt: first.completed_at });
  // Its last job has a hot copy and a later archival: they answer, the part is named.
  const got = await reader.lookup(q(settled.last));
  expect(['hot', 'both']).toContain(got.provenance.source);
  expect(got.archivals.map((a) => a.partKey)).not.toContain(part.key);
  expect(got.provenance.warnings.join('\n')).toContain(part.key);
  // Its first job has nothing else: the error names the part.
  await expect(reader.lookup(q(settled.dir[0] as string))).rejects.toThrow(part.key);
});

test("damage in the retried job's archivals (a settled part's block, a record's block, either zeroed or cut short) leaves out that archival only, named in a warning, hot copy or not; with every part damaged and nothing hot it is the error (the Python reader: test_reader.py, the same cases)", async () => {
  const retried = expected.lookups.find((w) => w.case.startsWith('own parts, retried'));
  const keys = (retried?.archivals as Array<{ part_key: string }> | undefined)?.map((a) => a.part_key) ?? [];
  const hotKeys = (retried?.hot_keys as string[] | undefined) ?? [];
  if (!retried || keys.length !== 3 || hotKeys.length === 0) throw new Error('no retried job in the vectors');
  const s3 = testS3();
  for (const hot of [true, false]) {
    const reader = await loaded(hot ? new Set() : new Set(hotKeys));
    // keys[1]: a settled part (its directory names the block); keys[2]: a part with entries.
    for (const damaged of [keys[1], keys[2]] as string[]) {
      for (const cut of [false, true]) {
        const bytes = bytesOf(damaged);
        const put = (body: Uint8Array) =>
          s3.send(new PutObjectCommand({ Bucket: reader.bucket, Key: damaged, Body: body }));
        await put(cut ? bytes.subarray(0, 8) : new Uint8Array(bytes.length));
        const got = await reader.lookup({ shopId: retried.shop_id, jobId: retried.job_id });
        // A settled part's archival is known only from its block: left out. An entry's is listed
        // (its index entry), its status null: its record was not read.
        expect({ hot, damaged, cut, archivals: got.archivals.map((a) => [a.partKey, a.status]) }).toEqual({
          hot,
          damaged,
          cut,
          archivals: (retried.archivals as Array<{ part_key: string; status: string }>)
            .filter((a) => a.part_key !== damaged || damaged === keys[2])
            .map((a) => [a.part_key, a.part_key === damaged ? null : a.status]),
        });
        expect(got.details).not.toBeNull();
        expect(got.provenance.warnings.join('\n')).toContain(damaged);
        await put(bytes);
      }
    }
    if (!hot) {
      for (const k of keys)
        await s3.send(
          new PutObjectCommand({ Bucket: reader.bucket, Key: k, Body: new Uint8Array(bytesOf(k).length) }),
        );
      await expect(reader.lookup({ shopId: retried.shop_id, jobId: retried.job_id })).rejects.toThrow(
        keys[0] as string,
      );
    }
  }
});

test('search names what it cannot read (a part missing, zeroed or cut short; a lost shared index; a damaged or lost month index) and returns what the rest gives (the Python reader: test_reader.py, the same cases)', async () => {
  const s3 = testS3();
  const want = (doc: string) => {
    const w = expected.searches.find((s) => s.doc_id === doc);
    if (!w) throw new Error(`no search of ${doc} in the vectors`);
    return w as {
      shop_id: string;
      doc_id: string;
      jobs: Array<{ job_id: string; part_key: string; month: string }>;
    };
  };
  const search = async (reader: JobDetailsReader, doc: string) => {
    const w = want(doc);
    const got = await reader.findDocument({ shopId: w.shop_id, docId: doc });
    return {
      w,
      jobs: got.jobs.map((j) => `${j.jobId} ${j.partKey}`),
      warnings: got.provenance.warnings.join('\n'),
    };
  };
  const retried = want('rocbqeko6wjam-r');
  const key = retried.jobs
    .map((j) => j.part_key)
    .find((k) => k.endsWith('part-20261129T052828Z-jh6znagv.jsonl.gz'));
  if (!key) throw new Error('the retried job is not in the settled part jh6znagv');
  for (const how of ['missing', 'zeroed', 'cut']) {
    const reader = await loaded(how === 'missing' ? new Set([key]) : new Set());
    const bytes = bytesOf(key);
    if (how !== 'missing')
      await s3.send(
        new PutObjectCommand({
          Bucket: reader.bucket,
          Key: key,
          Body: how === 'cut' ? bytes.subarray(0, 8) : new Uint8Array(bytes.length),
        }),
      );
    const got = await search(reader, retried.doc_id);
    expect({ how, jobs: got.jobs }).toEqual({
      how,
      jobs: retried.jobs.filter((j) => j.part_key !== key).map((j) => `${j.job_id} ${j.part_key}`),
    });
    expect(got.warnings).toContain(key);
  }
  const sharedKey = 'job-details-index/_shared/2026-09/shared.json';
  const packed = await search(await loaded(new Set([sharedKey])), 'vec-b.myshopify.com-1-doc-1b');
  expect(packed.jobs).toEqual(
    packed.w.jobs.filter((j) => j.month !== '2026-09').map((j) => `${j.job_id} ${j.part_key}`),
  );
  expect(packed.warnings).toContain(sharedKey);
  const indexKey = 'job-details-index/vec-own.myshopify.com/2026-09/index.json';
  const lost = await search(await loaded(new Set([indexKey])), retried.doc_id);
  expect(lost.jobs).toEqual([]);
  expect(lost.warnings).toContain(indexKey);
  expect(lost.warnings).toContain('jobarchive reindex');
  const reader = await loaded();
  const index = bytesOf(indexKey);
  await s3.send(
    new PutObjectCommand({
      Bucket: reader.bucket,
      Key: indexKey,
      Body: index.subarray(0, index.length >> 1),
      ContentEncoding: 'gzip',
    }),
  );
  const damaged = await search(reader, retried.doc_id);
  expect(damaged.jobs).toEqual([]);
  expect(damaged.warnings).toContain(indexKey);
});

test('a damaged month index (the shared one of a month the shop is packed in) leaves out that month only: the other month answers, the index named (the Python reader: test_reader.py, the same case)', async () => {
  const want = expected.lookups.find((w) => w.case.startsWith('row expired before archival'));
  if (!want) throw new Error('no row-expired lookup in the vectors');
  const key = 'job-details-index/_shared/2026-09/shared.json';
  const reader = await loaded();
  const data = bytesOf(key);
  await testS3().send(
    new PutObjectCommand({ Bucket: reader.bucket, Key: key, Body: data.subarray(0, data.length >> 1) }),
  );
  const got = await reader.lookup({ shopId: want.shop_id, jobId: want.job_id });
  expect(got.archivals.map((a) => a.partKey)).toEqual(
    (want.archivals as Array<{ part_key: string }>).map((a) => a.part_key),
  );
  expect(got.provenance.warnings.join('\n')).toContain(key);
});
