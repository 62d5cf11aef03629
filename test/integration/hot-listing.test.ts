/**
 * Listing many jobs' hot objects in one walk (shared/details/hot-listing.ts) against s3rver: exactly
 * the wanted jobs' objects, with far fewer LIST requests than one per job when the jobs are dense, and
 * never more than one per job when they are sparse.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mapLimit } from '../../shared/concurrency';
import { listJobsObjects, nextStart } from '../../shared/details/hot-listing';
import { freshBucket, testS3 } from '../support/local';

const s3 = testS3();
let bucket: string;
const ids = Array.from({ length: 60 }, (_, i) => `job${String(i).padStart(3, '0')}`);
// Prefix order differs from id order: `job001-x/` sorts before `job001/`.
const extra = ['job001-x', 'job001.y'];

beforeAll(async () => {
  bucket = await freshBucket();
  const keys = [...ids, ...extra].flatMap((id, i) => [
    `job-details/${id}/${String(i).padStart(16, '0')}.json.gz`,
    `job-details/${id}/platform-data.json`,
  ]);
  await mapLimit(keys, 16, (Key) => s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' })));
});

test('dense: all 60 jobs in 6 pages of 25 keys, not 60 LISTs; every object once, under its job', async () => {
  const r = await listJobsObjects(s3, bucket, ids, 25);
  expect(r.requests).toBeLessThanOrEqual(6);
  for (const id of ids) {
    expect(r.objects.get(id)?.map((o) => o.key.split('/')[2])).toEqual([
      expect.stringMatching(/\.json\.gz$/),
      'platform-data.json',
    ]);
    expect(r.objects.get(id)?.map((o) => o.kind)).toEqual(['flush', 'platform-data']);
  }
});

test('sparse: a few far-apart jobs cost at most one LIST each; neighbours with a shared stem are kept apart', async () => {
  const want = ['job001', 'job030', 'job059'];
  const r = await listJobsObjects(s3, bucket, want, 4);
  expect(r.requests).toBeLessThanOrEqual(want.length);
  expect([...r.objects.keys()].sort()).toEqual(want);
  expect(r.objects.get('job001')?.every((o) => o.key.startsWith('job-details/job001/'))).toBe(true);
  const edge = await listJobsObjects(s3, bucket, ['job001-x', 'job001'], 1);
  expect(edge.objects.get('job001-x')).toHaveLength(2);
  expect(edge.objects.get('job001')).toHaveLength(2);
});

test('a job with no objects lists as empty', async () => {
  const r = await listJobsObjects(s3, bucket, ['nojob'], 10);
  expect(r.objects.get('nojob')).toEqual([]);
  expect(r.requests).toBe(1);
});

test('nextStart: passes finished prefixes, continues inside an unfinished one, jumps gaps', () => {
  const p = ['job-details/a/', 'job-details/c/', 'job-details/e/'];
  expect(nextStart(p, 0, 'job-details/a/x')).toEqual({ next: 0, startAfter: 'job-details/a/x' });
  expect(nextStart(p, 0, 'job-details/b/x')).toEqual({ next: 1, startAfter: 'job-details/c.~' });
  expect(nextStart(p, 0, 'job-details/c/z')).toEqual({ next: 1, startAfter: 'job-details/c/z' });
  expect(nextStart(p, 1, 'job-details/f')).toEqual({ next: 3, startAfter: 'job-details/f' });
});
