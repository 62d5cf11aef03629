import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { repairWatermarkCommand } from '../../infra/cli/repair-watermark';
import { synthesizedDefinition } from '../../infra/local/runner';
import { WATERMARK_KEY } from '../../shared/archive/format';
import type { RunReport } from '../../shared/archive/steps/types';
import { forgetShop } from '../../shared/erasure/forget';
import { forgottenAtOf } from '../../shared/erasure/summary';
import { readErasureSummary } from '../../shared/erasure/summary-store';
import {
  archiverEnv,
  cliContextFor,
  DAY,
  daysAgo,
  getBytes,
  runLocal,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Issue 31, case 11: the erasure summary lives in the watermark. A deleted watermark dropped it (the
 * next run archived a forgotten shop's late job again); a corrupt one failed every run with no
 * repair; and audit, finding a forgotten shop's archive, advised `forget --shop S` even when what it
 * found was the shop's jobs completed after its forget — which forget would then erase.
 */
jest.setTimeout(300_000);

const ARCHIVE = { olderThanDays: 30, graceHours: 0 };

test('a deleted watermark: the summary is rebuilt from the tombstones, the forgotten shop stays refused', async () => {
  const env = await archiverEnv();
  const definition = synthesizedDefinition();
  const gone = 'wm-gone.myshopify.com';
  await seedTerminalJob(env, { shopId: gone, completedAt: daysAgo(45) });
  await forgetShop(env.deps, { shopId: gone, requestId: 'wm-1', runId: 'forget-wm-1' });
  // A row of the shop completed before its forget turns up (a restored backup, a late writer).
  await seedTerminalJob(env, { shopId: gone, completedAt: daysAgo(44) });
  await seedTerminalJob(env, { shopId: 'wm-kept.myshopify.com', completedAt: daysAgo(44) });
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: WATERMARK_KEY }));

  expect(forgottenAtOf(await readErasureSummary(env), gone)).toBeDefined();
  const run = await runLocal(env, { definition, input: ARCHIVE });
  expect(run.status).toBe('SUCCEEDED');
  expect(run.output).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  expect((run.output as RunReport).jobsArchived).toBe(1);
  // The run's watermark carries the rebuilt summary: the shop stays forgotten for every run after.
  const written = JSON.parse((await getBytes(env.s3, env.bucket, WATERMARK_KEY)).toString('utf8')) as {
    runId: string;
  };
  expect(written.runId).not.toBe('');
  expect(forgottenAtOf(await readErasureSummary(env), gone)).toBeDefined();
});

test('a corrupt watermark: runs fail naming the repair; repair-watermark sets it aside and keeps the summary', async () => {
  const env = await archiverEnv();
  const definition = synthesizedDefinition();
  const gone = 'wc-gone.myshopify.com';
  await forgetShop(env.deps, { shopId: gone, requestId: 'wc-1', runId: 'forget-wc-1' });
  await seedTerminalJob(env, { shopId: gone, completedAt: daysAgo(44) });
  await seedTerminalJob(env, { shopId: 'wc-kept.myshopify.com', completedAt: daysAgo(44) });
  await env.s3.send(
    new PutObjectCommand({ Bucket: env.bucket, Key: WATERMARK_KEY, Body: '{"format": "job-details-arch' }),
  );
  const failed = await runLocal(env, { definition, input: ARCHIVE });
  expect(failed.status).toBe('FAILED');
  expect(failed.error?.cause).toContain('jobarchive repair-watermark');

  const io = memoryOutput();
  const repaired = await repairWatermarkCommand(cliContextFor(env), { json: false }, io);
  expect(repaired).toMatchObject({ state: 'repaired', forgottenShops: 1, openRequests: 0 });
  expect((await getBytes(env.s3, env.bucket, repaired.setAside as string)).toString('utf8')).toBe(
    '{"format": "job-details-arch',
  );
  expect(io.stdout.join('\n')).toContain('erasure summary rebuilt: 1 forgotten shops');
  const again = await runLocal(env, { definition, input: ARCHIVE });
  expect(again.status).toBe('SUCCEEDED');
  expect(again.output).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  // A second repair finds nothing to do.
  expect(await repairWatermarkCommand(cliContextFor(env), { json: true }, memoryOutput())).toMatchObject({
    state: 'not-corrupt',
  });
});

test("audit never advises forget for a shop's jobs completed after its forget", async () => {
  const env = await archiverEnv();
  const definition = synthesizedDefinition();
  const shop = 'wa-back.myshopify.com';
  await forgetShop(env.deps, {
    shopId: shop,
    requestId: 'wa-1',
    runId: 'forget-wa-1',
    receivedAt: daysAgo(60),
  });
  // The shop installed the app again: a job completed after the forget, archived as usual; its row
  // then expires (TTL).
  const back = await seedTerminalJob(env, { shopId: shop, completedAt: daysAgo(45) });
  const run = await runLocal(env, { definition, input: ARCHIVE });
  expect(run.output).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  await env.ddb.send(
    new DeleteCommand({ TableName: env.table, Key: { pk: `SHOP#${shop}`, sk: `JOB#${back.jobId}` } }),
  );
  const clean = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(clean.erasure.forgottenLeftovers).toEqual([]);
  expect(auditExitCode(clean)).toBe(0);

  // A row the forget covered comes back (a restored backup): audit lists it, and its repair is not a
  // forget (which would erase the newer job too).
  const stale = new Date(daysAgo(61).getTime() - DAY).toISOString();
  await env.ddb.send(
    new PutCommand({
      TableName: env.table,
      Item: {
        pk: `SHOP#${shop}`,
        sk: 'JOB#restoredrow0001',
        job_id: 'restoredrow0001',
        shop_id: shop,
        job_status: 'FAILED',
        status_created_at: stale,
        completed_at: stale,
      },
    }),
  );
  const io = memoryOutput();
  const found = await auditCommand(cliContextFor(env), { maxHeads: 100, concurrency: 4, json: false }, io);
  expect(found.erasure.forgottenLeftovers).toEqual([
    expect.objectContaining({ shopId: shop, rows: 1, archivedJobs: 0, newerJobs: 1 }),
  ]);
  expect(auditExitCode(found)).toBe(4);
  const text = io.stdout.join('\n');
  expect(text).toContain('repair: NOT forget');
  expect(text).not.toContain(`jobarchive forget --shop ${shop}`);
});
