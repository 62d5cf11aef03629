import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { type JobRecord, WATERMARK_KEY } from '../../shared/archive/format';
import { WATERMARK_FORMAT } from '../../shared/archive/steps/plan/watermark';
import { jobPrefix } from '../../shared/details';
import { TERMINAL_STATUSES } from '../../shared/jobs/schema';
import { putJson } from '../../shared/s3/objects';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  DAY,
  daysAgo,
  HOUR,
  listKeys,
  partLines,
  readIndex,
  runMachine,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Issue 31, case 2: rows that enter GSI_JobsByStatus_v2 below the watermark (a completion written
 * back-dated, a Python job keyed at IN_PROGRESS that ran past the lateness window, a restored row) are
 * archived WITH their row by scheduled runs alone, at the next orphan sweep (plan/late-rows.ts: at most
 * SWEEP_EVERY_MS apart); `audit` flags a hot terminal job past that bound. Real steps on the embedded
 * stack (the synthesized state machine).
 */
jest.setTimeout(240_000);

const archivedWithRow = async (env: ArchiverEnv, j: SeededJob): Promise<boolean> => {
  const index = await readIndex(env, j.shopId, j.completedAt.slice(0, 7));
  const entry = index?.jobs[j.jobId]?.at(-1);
  if (!entry || entry.deleted_at === null) return false;
  const part = index?.parts.find((p) => p.name === entry.part);
  if (!part) return false;
  const rec = (await partLines(env, part.key)).find(
    (r) => r.type === 'job' && (r as JobRecord).job_id === j.jobId,
  ) as JobRecord | undefined;
  return (
    rec?.row !== null &&
    rec?.row !== undefined &&
    (await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).length === 0
  );
};

test('rows that land below the watermark are archived with their row at the next sweep', async () => {
  const env = await archiverEnv();
  // Runs have passed: the watermark is at the cutoff of yesterday's run, swept just now.
  const cutoff = daysAgo(31).toISOString();
  const key = new Date(Date.parse(cutoff) + DAY).toISOString();
  await putJson(env, WATERMARK_KEY, {
    format: WATERMARK_FORMAT,
    cutoff,
    keys: Object.fromEntries(TERMINAL_STATUSES.map((s) => [s, key])),
    retry: [],
    runId: 'run-before',
    sweptAt: new Date().toISOString(),
  });
  // A completion written back-dated by four months, and a Python-style row keyed at IN_PROGRESS
  // (40 days ago) whose job completed 33 days ago: both keys are below the watermark's window.
  const backdated = await seedTerminalJob(env, { shopId: 'late-a', completedAt: daysAgo(120) });
  const python = await seedTerminalJob(env, { shopId: 'late-b', completedAt: daysAgo(33) });
  await env.ddb.send(
    new UpdateCommand({
      TableName: env.table,
      Key: { pk: `SHOP#${python.shopId}`, sk: `JOB#${python.jobId}` },
      UpdateExpression: 'SET status_created_at = :k',
      ExpressionAttributeValues: { ':k': daysAgo(40).toISOString() },
    }),
  );
  // A job in the window, as usual.
  const usual = await seedTerminalJob(env, { shopId: 'late-c', completedAt: daysAgo(30, -2 * HOUR) });

  const first = await runMachine(env, { keepWatermark: true });
  expect(first.run.status).toBe('SUCCEEDED');
  expect(first.report).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  expect(await archivedWithRow(env, usual)).toBe(true);
  // No sweep due: the late rows wait, still hot. audit flags the one past the bound (due months ago).
  expect((await listKeys(env.s3, env.bucket, jobPrefix(backdated.jobId))).length).toBeGreaterThan(0);
  const audit = await auditCommand(
    cliContextFor(env),
    { maxHeads: 10, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(audit.mismatches.filter((m) => m.kind === 'overdue-hot-job').map((m) => m.jobId)).toEqual([
    backdated.jobId,
  ]);
  expect(auditExitCode(audit)).not.toBe(0);

  // A month on by the handlers' clock (a sweep is due at least every SWEEP_EVERY_MS): the sweeping run
  // finds both among the hot jobs and plans them from their rows.
  env.advance(31 * DAY);
  try {
    const second = await runMachine(env, { keepWatermark: true });
    expect(second.run.status).toBe('SUCCEEDED');
    expect(second.report).toMatchObject({ jobsArchived: 2, lateRowsPlanned: 2, groupsFailedCount: 0 });
    expect(await archivedWithRow(env, backdated)).toBe(true);
    expect(await archivedWithRow(env, python)).toBe(true);
  } finally {
    env.advance(-31 * DAY);
  }
  const after = await auditCommand(
    cliContextFor(env),
    { maxHeads: 10, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(after.mismatches).toEqual([]);
  expect(auditExitCode(after)).toBe(0);
});
