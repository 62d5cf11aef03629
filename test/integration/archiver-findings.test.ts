import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { groupFindingsKey, planFindingsKey } from '../../shared/archive/format';
import { CAPS } from '../../shared/archive/steps/caps';
import { FINDINGS_FORMAT } from '../../shared/archive/steps/run-files/findings';
import {
  archiverEnv,
  getBytes,
  inMonth,
  listKeys,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * The state carries counts and samples; the complete lists travel through findings documents under
 * the run's scratch prefix, which Report reads for every count > 0 and only then.
 */
jest.setTimeout(120_000);

const reportJson = async (env: Awaited<ReturnType<typeof archiverEnv>>, key: string) =>
  JSON.parse((await getBytes(env.s3, env.bucket, key)).toString('utf8'));

test('more quarantines than the execution output lists: report.json has every one, from the findings', async () => {
  const env = await archiverEnv();
  const old = inMonth(2, 3).toISOString();
  const bad = CAPS.report + 7;
  for (let i = 0; i < bad; i++) {
    await env.ddb.send(
      new PutCommand({
        TableName: env.table,
        Item: { pk: `SHOP#bad shop ${i}`, sk: 'JOB#j', job_status: 'FAILED', status_created_at: old },
      }),
    );
  }
  const execution = 'findings-plan';
  const { report } = await runMachine(env, { execution });
  expect(report?.jobsQuarantinedCount).toBe(bad);
  expect(report?.jobsQuarantined).toHaveLength(CAPS.report);
  const full = await reportJson(env, report?.reportKey ?? '');
  expect(full.jobsQuarantined).toHaveLength(bad);
  expect(new Set(full.jobsQuarantined.map((q: { shopId: string }) => q.shopId)).size).toBe(bad);
  expect(full.listsTruncated).toBe(false);
  expect(await listKeys(env.s3, env.bucket, full.findingsPrefix)).toEqual([planFindingsKey(execution, 0)]);
});

test('a dry run lists what it would quarantine through findings too', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'shop-d', completedAt: inMonth(2, 5) });
  const flush = job.keys.find((k) => k.endsWith('.json.gz')) as string;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: flush, Body: Buffer.alloc(0) }));

  const { report, steps } = await runMachine(env, { input: { dryRun: true } });
  expect(steps[0]?.archive?.quarantined).toEqual([
    { jobId: job.jobId, reason: expect.stringMatching(/empty object/) },
  ]);
  expect(report?.jobsQuarantined).toEqual([
    { shopId: 'shop-d', jobId: job.jobId, reason: expect.stringMatching(/empty object/) },
  ]);
});

test('a findings document of an earlier, failed attempt is ignored when the kept result counts none', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'shop-s', completedAt: inMonth(2, 6) });
  const execution = 'findings-stale';
  const month = job.completedAt.slice(0, 7);
  // As if a first ArchiveBatch attempt had quarantined a job, then failed and been retried.
  await env.s3.send(
    new PutObjectCommand({
      Bucket: env.bucket,
      Key: groupFindingsKey(execution, 0, 'shop-s', month, 'quarantined'),
      Body: JSON.stringify({
        format: FINDINGS_FORMAT,
        run_id: execution,
        page: 0,
        kind: 'quarantined',
        items: [{ jobId: 'ghost', reason: 'from a failed attempt' }],
      }),
    }),
  );
  const { report } = await runMachine(env, { execution });
  expect(report).toMatchObject({ jobsArchived: 1, jobsQuarantinedCount: 0, jobsQuarantined: [] });
  expect((await reportJson(env, report?.reportKey ?? '')).jobsQuarantined).toEqual([]);
});

test('a findings document a result counts but that is gone fails the report, naming it', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'shop-m', completedAt: inMonth(2, 7) });
  const flush = job.keys.find((k) => k.endsWith('.json.gz')) as string;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: flush, Body: Buffer.alloc(0) }));
  const execution = 'findings-missing';
  const key = groupFindingsKey(execution, 0, 'shop-m', job.completedAt.slice(0, 7), 'quarantined');

  const { run } = await runMachine(env, {
    execution,
    hooks: {
      delete: async () => {
        await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: key }));
      },
    },
  });
  // Report throws; its Catch ends the run with the error as the Task gave it.
  expect(run).toMatchObject({ status: 'FAILED', error: { error: 'CorruptObjectError' } });
  expect(run.error?.cause).toContain(key);
});
