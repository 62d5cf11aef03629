import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { JobRecord } from '../../shared/archive/format';
import { CAPS } from '../../shared/archive/steps/caps';
import type { GroupDone } from '../../shared/archive/steps/types';
import { jobPrefix, platformDataKey } from '../../shared/details';
import {
  archiverEnv,
  getBytes,
  inMonth,
  listKeys,
  partLines,
  readIndex,
  runMachine,
  type SeededJob,
  seedTerminalJob,
  sha256,
} from '../support/archiver-fixtures';

/**
 * Anything under a job's prefix that is not what the hot-path writer produces quarantines THAT job:
 * it is reported with the reason, its sources are kept byte for byte, every other job proceeds.
 */
jest.setTimeout(120_000);

const CASES = [
  ['zero bytes', (_k: string) => Buffer.alloc(0), /empty object .*\(0 bytes\)/],
  ['bad gzip', (_k: string) => Buffer.from([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9]), /bad gzip/],
  ['bad JSON', (_k: string) => gzipSync('{"chunk_ids": ['), /bad JSON/],
  [
    'wrong shape',
    (_k: string) => gzipSync(JSON.stringify({ chunk_ids: 'p0', failed: {}, skipped: {}, conflict: {} })),
    /chunk_ids: must be an array/,
  ],
] as const;

test('each corrupt source and each unexpected key quarantines only its own job', async () => {
  const env = await archiverEnv();
  const shopId = 'shop-q';
  const seed = (day: number) => seedTerminalJob(env, { shopId, completedAt: inMonth(2, day) });
  const healthy = [await seed(1), await seed(2)];
  const broken: Array<{ job: SeededJob; reason: RegExp }> = [];
  for (const [i, [, body, reason]] of CASES.entries()) {
    const job = await seed(3 + i);
    const flushKey = job.keys.find((k) => k.endsWith('.json.gz')) as string;
    await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: flushKey, Body: body(flushKey) }));
    broken.push({ job, reason });
  }
  const nested = await seed(10);
  const strayKey = `${jobPrefix(nested.jobId)}nested/extra.json`;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: strayKey, Body: '{}' }));
  nested.keys.push(strayKey);
  broken.push({ job: nested, reason: /unexpected key .*nested\/extra\.json/ });
  const badPlatform = await seed(11);
  await env.s3.send(
    new PutObjectCommand({ Bucket: env.bucket, Key: platformDataKey(badPlatform.jobId), Body: '[1,2]' }),
  );
  broken.push({ job: badPlatform, reason: /platform data must be a JSON object/ });

  const digests = new Map<string, string>();
  for (const { job } of broken) {
    for (const k of job.keys) digests.set(k, sha256(await getBytes(env.s3, env.bucket, k)));
  }

  const { report, results, steps } = await runMachine(env);
  const group = results[0] as GroupDone;
  expect(group.archive).toMatchObject({ archived: 2, quarantinedCount: broken.length });
  // The step returns a sample (more were quarantined than it lists); the report has every one.
  expect(broken.length).toBeGreaterThan(CAPS.inline);
  expect(steps[0]?.archive?.planned).toBe(healthy.length + broken.length);
  expect(steps[0]?.archive?.quarantined).toHaveLength(CAPS.inline);
  expect(report?.jobsQuarantined).toHaveLength(broken.length);
  expect(report).toMatchObject({
    jobsArchived: 2,
    jobsQuarantinedCount: broken.length,
    groupsFailedCount: 0,
  });
  for (const { job, reason } of broken) {
    const q = report?.jobsQuarantined.find((x) => x.jobId === job.jobId);
    expect(q).toMatchObject({ shopId });
    expect(q?.reason).toMatch(reason);
    // Kept, byte for byte.
    expect((await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).sort()).toEqual([...job.keys].sort());
    for (const k of job.keys) expect(sha256(await getBytes(env.s3, env.bucket, k))).toBe(digests.get(k));
  }
  // The healthy jobs are archived, alone in the part, and their sources deleted.
  const index = await readIndex(env, shopId, healthy[0]?.completedAt.slice(0, 7) ?? '');
  expect(Object.keys(index?.jobs ?? {}).sort()).toEqual(healthy.map((j) => j.jobId).sort());
  const part = index?.parts[0];
  if (!part) throw new Error('no part');
  const jobsInPart = (await partLines(env, part.key))
    .filter((r) => r.type === 'job')
    .map((r) => (r as JobRecord).job_id);
  expect(jobsInPart).toEqual(healthy.map((j) => j.jobId).sort());
  for (const j of healthy) expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);

  // Quarantined jobs come back every run until fixed; a fixed one is then archived.
  const fixed = broken[0]?.job as SeededJob;
  const flushKey = fixed.keys.find((k) => k.endsWith('.json.gz')) as string;
  await env.s3.send(
    new PutObjectCommand({
      Bucket: env.bucket,
      Key: flushKey,
      Body: gzipSync(
        JSON.stringify({ chunk_ids: ['p0'], failed: { fixed: ['d1'] }, skipped: {}, conflict: {} }),
      ),
    }),
  );
  const again = await runMachine(env);
  expect(again.report).toMatchObject({ jobsArchived: 1, jobsQuarantinedCount: broken.length - 1 });
  expect(await listKeys(env.s3, env.bucket, jobPrefix(fixed.jobId))).toEqual([]);
});

test('rows with ids that are unsafe as keys are quarantined at plan time; no key is built from them', async () => {
  const env = await archiverEnv();
  const good = await seedTerminalJob(env, { shopId: 'shop-ok', completedAt: inMonth(2, 2) });
  const old = inMonth(2, 3).toISOString();
  const row = (pk: string, sk: string, extra: Record<string, unknown> = {}) =>
    env.ddb.send(
      new PutCommand({
        TableName: env.table,
        Item: { pk, sk, job_status: 'FAILED', status_created_at: old, completed_at: old, ...extra },
      }),
    );
  await row('SHOP#../other-shop', 'JOB#j1');
  await row('SHOP#shop-ok', 'JOB#../../etc');
  await row('SHOP#shop-ok', 'JOB#fine-id', { job_id: 'another-id' });
  await row('SHOP#shop-ok', 'JOB#no-time', { completed_at: 'yesterday', status_created_at: '2000-01-01' });

  const { report } = await runMachine(env);
  expect(report).toMatchObject({
    jobsPlanned: 1,
    jobsArchived: 1,
    jobsQuarantinedCount: 4,
    groupsFailedCount: 0,
  });
  const reasons = Object.fromEntries(
    (report?.jobsQuarantined ?? []).map((q) => [`${q.shopId}|${q.jobId}`, q.reason]),
  );
  expect(reasons['../other-shop|j1']).toMatch(/InvalidIdError: invalid shop id/);
  expect(reasons['shop-ok|../../etc']).toMatch(/InvalidIdError: invalid job id/);
  expect(reasons['shop-ok|fine-id']).toBe('job_id attribute does not match sk');
  expect(reasons['shop-ok|no-time']).toBe(
    'completed_at: "yesterday" is not an ISO-8601 timestamp with a UTC offset',
  );
  // Only the good job's keys exist outside the run scratch.
  const keys = (await listKeys(env.s3, env.bucket, '')).filter(
    (k) => !k.startsWith('job-details-runs/') && !k.startsWith('job-details-state/'),
  );
  expect(keys.every((k) => k.includes('shop-ok/'))).toBe(true);
  expect(keys.some((k) => k.includes('..') || k.includes('etc') || k.includes('other-shop'))).toBe(false);
  expect((await readIndex(env, 'shop-ok', good.completedAt.slice(0, 7)))?.jobs[good.jobId]).toHaveLength(1);
});

// 2 KB here stands for the deployed default (the function's memory / 40: 25.6 MB at 1,024 MB); a run's
// input may set its own limit over the deployed one.
test.each([
  ['the setting', { maxSourceMb: 2 / 1024 }, {}],
  ['the run input', {}, { maxSourceMb: 2 / 1024 }],
])(
  'a source larger than maxSourceMb (%s) quarantines its job from the listing, with its size in the reason',
  async (_, settings, input) => {
    const env = await archiverEnv(settings);
    const shopId = 'shop-big';
    const small = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 1) });
    const big = await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 2) });
    const flushKey = big.keys.find((k) => k.endsWith('.json.gz')) as string;
    const docs = Array.from(
      { length: 400 },
      (_, i) => `gid://shopify/Product/${createHash('sha256').update(String(i)).digest('hex').slice(0, 13)}`,
    );
    const body = gzipSync(
      JSON.stringify({ chunk_ids: ['p0'], failed: { timeout: docs }, skipped: {}, conflict: {} }),
    );
    expect(body.length).toBeGreaterThan(2048);
    await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: flushKey, Body: body }));

    const { report } = await runMachine(env, { input });
    expect(report?.jobsArchived).toBe(1);
    expect(report?.jobsQuarantined).toEqual([
      {
        shopId,
        jobId: big.jobId,
        reason: expect.stringMatching(
          new RegExp(`oversize object .*: ${body.length} bytes, over the limit of 2048`),
        ),
      },
    ]);
    // Its objects stay; the small job's are archived and gone.
    expect(await listKeys(env.s3, env.bucket, jobPrefix(big.jobId))).toEqual(big.keys);
    expect(await listKeys(env.s3, env.bucket, jobPrefix(small.jobId))).toEqual([]);
  },
);
