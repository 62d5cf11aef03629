import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { RunReport } from '../../shared/archive/steps/types';
import { createJob, type JobStatus, recordFlush } from '../../shared/jobs';
import { itemToJson } from '../../shared/jobs/row-json';
import { JobDetailsReader } from '../../shared/reader';
import { daysAgo, listKeys, runLocal, setUpMachineRuns } from '../support/archiver-fixtures';
import { freshTable } from '../support/local';

/**
 * The wire contract (docs/wire-format.md) from both sides: the vectors' job rows written by this
 * package's writer on DynamoDB Local; the same vectors checked by a Python implementation written from
 * the contract alone (test/python/write_job.py, standard library + boto3); and a job that Python
 * script wrote, archived by the synthesized state machine and read back through this package.
 */
jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');
const VECTORS = join(ROOT, 'test/fixtures/wire/vectors.json');
const SCRIPT = join(ROOT, 'test/python/write_job.py');
/** `PYTHON` names an interpreter with boto3 when `python3` on PATH has none (.ci/run sets it). */
const PYTHON = process.env.PYTHON ?? 'python3';

interface Row {
  after: string;
  row: Record<string, unknown>;
}
const vectors = JSON.parse(readFileSync(VECTORS, 'utf8')) as {
  job: {
    shop_id: string;
    job_id: string;
    created_at: string;
    job_type: string;
    platform: string;
    total_items: number;
    ttl_days: number;
    flushes: {
      now: string;
      chunk_ids: string[];
      counts: { processed: number; failed: number; skipped: number; conflict: number };
      details: Record<string, Record<string, unknown[]>>;
    }[];
    rows: Row[];
  };
};

const python = (args: string[]) => {
  const r = spawnSync(PYTHON, [SCRIPT, ...args], { cwd: ROOT, env: process.env, encoding: 'utf8' });
  if (r.error) throw r.error;
  return r;
};

const machine = setUpMachineRuns();

test('the vectors’ job rows, as this package writes them', async () => {
  const { env } = machine;
  const j = vectors.job;
  const table = await freshTable();
  const get = async () =>
    itemToJson(
      (
        await env.ddb.send(
          new GetCommand({
            TableName: table,
            Key: { pk: `SHOP#${j.shop_id}`, sk: `JOB#${j.job_id}` },
            ConsistentRead: true,
          }),
        )
      ).Item as never,
    );
  await createJob(
    env.ddb,
    table,
    { shopId: j.shop_id, jobType: j.job_type, platform: j.platform, totalItems: j.total_items },
    { now: new Date(j.created_at), idGenerator: () => j.job_id },
  );
  const rows = [await get()];
  let known: JobStatus | undefined;
  for (const f of j.flushes) {
    const r = await recordFlush(
      { ddb: env.ddb, table, detailsWriter: env.store },
      {
        shopId: j.shop_id,
        jobId: j.job_id,
        totalItems: j.total_items,
        ...(known ? { knownStatus: known } : {}),
      },
      { chunkIds: f.chunk_ids, counts: f.counts, details: f.details as never },
      { now: new Date(f.now), ttlDays: j.ttl_days },
    );
    known = r.jobStatus;
    rows.push(await get());
  }
  expect(rows).toEqual(j.rows.map((r) => r.row));
});

test('a Python implementation of the contract reproduces every vector (flush ids, payload bytes, rows)', async () => {
  const table = await freshTable();
  const r = python(['vectors', VECTORS, '--table', table]);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(JSON.parse(r.stdout)).toEqual({ ok: true, failures: 0 });
});

test('a job written by the Python script is archived by this project and read back as written', async () => {
  const { env, definition } = machine;
  const shopId = 'python-shop.myshopify.com';
  const w = python([
    'job',
    '--table',
    env.table,
    '--bucket',
    env.bucket,
    '--shop',
    shopId,
    '--completed-at',
    daysAgo(45).toISOString(),
  ]);
  expect({ status: w.status, stderr: w.stderr }).toEqual({ status: 0, stderr: '' });
  const written = JSON.parse(w.stdout) as {
    job_id: string;
    completed_at: string;
    details: unknown;
    platform_data: unknown;
  };
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const q = { shopId, jobId: written.job_id, completedAt: written.completed_at };
  const hot = await reader.readAllDetails(q);
  expect(hot.details).toEqual(written.details);

  const run = await runLocal(machine.env, { definition, input: { olderThanDays: 30, graceHours: 0 } });
  expect(run.status).toBe('SUCCEEDED');
  expect(run.output as RunReport).toMatchObject({ jobsArchived: 1, jobsQuarantinedCount: 0 });
  expect(await listKeys(env.s3, env.bucket, `job-details/${written.job_id}/`)).toEqual([]);

  const archived = await reader.lookup(q);
  expect(archived).toMatchObject({
    details: written.details,
    platformData: written.platform_data,
    detailsSource: 'archive',
    platformDataSource: 'archive',
  });
});
