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
  const s3 = testS3();
  const bucket = await freshBucket();
  for (const o of expected.objects)
    await s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: o.key,
        Body: bytesOf(o.key),
        ...(o.content_encoding ? { ContentEncoding: o.content_encoding } : {}),
        ...(o.metadata ? { Metadata: o.metadata } : {}),
      }),
    );
  const reader = new JobDetailsReader(s3, bucket);
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
