import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { forgetCommand, parseForgetOptions } from '../../infra/cli/forget';
import { memoryOutput } from '../../infra/cli/output';
import { ERASURE_OVERDUE_ERROR } from '../../shared/archive/steps/report/run-incomplete';
import type { RunReport } from '../../shared/archive/steps/types';
import { type ForgetResult, forgetShop } from '../../shared/erasure/forget';
import { getRequest, listRequests, recordRequest } from '../../shared/erasure/ledger';
import { erasureMarkerKey } from '../../shared/erasure/run-scratch';
import { readTombstone } from '../../shared/erasure/tombstone';
import { jobPk, jobSk } from '../../shared/jobs/schema';
import { getObjectBytes } from '../../shared/s3/objects';
import { RUN_TIMEOUT_MAX_DAYS } from '../../shared/settings';
import {
  cliContextFor,
  DAY,
  daysAgo,
  HOUR,
  inMonth,
  runLocal,
  type SeededJob,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';
import { addRetries, lookups, whereNamed } from '../support/erasure-fixtures';

/**
 * Forget a shop on the embedded stack, through the synthesized state machine's Forget task: after it
 * nothing outside the erasure ledger names the shop — no key, no body (run scratch included), no row —
 * `audit` finds nothing, and every other shop's lookups are byte for byte what they were.
 */
jest.setTimeout(300_000);

const runs = setUpMachineRuns();
const ARCHIVE = { olderThanDays: 30, graceHours: 0 };
const FORGET = 'fg-acme.myshopify.com';

const forget = async (input: Record<string, unknown> = { shopId: FORGET }) => {
  const r = await runLocal(runs.env, { definition: runs.definition, input: { forget: input } });
  expect(r.unexpectedErrors).toEqual([]);
  return r;
};

test('forget removes every trace of the shop, leaves the others byte for byte, and is idempotent', async () => {
  const { env } = runs;
  const seed = (shopId: string, completedAt: Date) => seedTerminalJob(env, { shopId, completedAt });
  const others: SeededJob[] = [];
  const mine: SeededJob[] = [];
  for (const shopId of [FORGET, 'fg-other-1', 'fg-other-2'])
    for (const at of [inMonth(2, 5), inMonth(2, 9), inMonth(3, 7)])
      (shopId === FORGET ? mine : others).push(await seed(shopId, at));
  const archived = await runLocal(runs.env, { definition: runs.definition, input: ARCHIVE });
  expect(archived.output).toMatchObject({ jobsArchived: 9, groupsFailedCount: 0 });
  // Still hot: a recent job of each shop, an old one archived by no run yet, and a job of the shop
  // whose row expired (its objects carry shop-id metadata); a retry of the shop in the watermark.
  for (const shopId of [FORGET, 'fg-other-1']) {
    (shopId === FORGET ? mine : others).push(await seed(shopId, daysAgo(2)));
    (shopId === FORGET ? mine : others).push(await seed(shopId, inMonth(2, 20)));
  }
  const rowless = await seed(FORGET, inMonth(4, 3));
  await env.ddb.send(
    new DeleteCommand({ TableName: env.table, Key: { pk: jobPk(FORGET), sk: jobSk(rowless.jobId) } }),
  );
  await addRetries(env, [{ shopId: FORGET, jobId: mine[0]?.jobId ?? '' }]);
  expect((await whereNamed(env, FORGET)).length).toBeGreaterThan(0);
  const before = await lookups(env, others);
  // The archival's scratch names the shop (plans, Map results, page results); a plan page's planned
  // jobs count with its batches (their lines are the shop's, without its id).
  const scratch = (await whereNamed(env, FORGET)).filter((w) => w.includes('job-details-runs/'));
  expect(scratch.length).toBeGreaterThan(0);
  const scratchObjects = scratch.length + scratch.filter((w) => w.endsWith('/batches.jsonl')).length;

  // The row-less job is older than jobTtlDays only in the handlers' time (the orphan sweep's rule).
  env.advance(100 * DAY);
  const r = await forget().finally(() => env.advance(-100 * DAY));
  expect(r.status).toBe('SUCCEEDED');
  expect(r.taskInvocations).toEqual({
    Plan: 0,
    ArchiveBatch: 0,
    Tally: 0,
    Report: 0,
    Forget: 1,
    Redact: 0,
    RedactPending: 0,
  });
  const out = r.output as ForgetResult;
  const hotKeys = [...mine.slice(3), rowless].reduce((n, j) => n + j.keys.length, 0);
  expect(out).toMatchObject({
    shopId: FORGET,
    passes: 2,
    counts: {
      hotObjects: hotKeys,
      rowlessJobs: 1,
      foreignObjectsKept: 0,
      jobRows: 5,
      parts: 2,
      monthIndexes: 2,
      docFilters: 0, // filters live in the month index (index@5); sidecars only for older parts
      stagingDocs: 0,
      retryEntries: 1,
      scratchObjects,
      scratchRunsDeferred: 0,
    },
  });

  expect(await whereNamed(env, FORGET)).toEqual([]);
  expect(await lookups(env, others)).toEqual(before);
  const audit = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(audit.groups.filter((g) => g.shopId === FORGET)).toEqual([]);
  expect(audit.erasure).toMatchObject({ overdue: [], forgottenLeftovers: [] });
  // fg-other-1's old job, seeded after the run with its key below the watermark, is a late row past
  // its bound (issue 31: audit exits non-zero; the next sweep archives it): the only finding.
  expect(audit.mismatches.map((m) => [m.kind, m.shopId])).toEqual([['overdue-hot-job', 'fg-other-1']]);
  expect(auditExitCode(audit)).toBe(4);

  // The receipt: counts, when, which run — no content, no document ids.
  const stored = await getRequest(env, out.requestId);
  expect(stored?.request).toMatchObject({
    kind: 'forget-shop',
    shopId: FORGET,
    state: 'complete',
    completedAt: out.completedAt,
    runs: [expect.any(String)],
    receipt: { ...out.counts, passes: 2, complete: true },
  });
  expect(JSON.stringify(stored?.request)).not.toMatch(/doc-|timeout|indexer/);
  expect(await readTombstone(env, FORGET)).toMatchObject({ forgottenAt: stored?.request.receivedAt });

  // Again: nothing left to remove; the others still the same. An archival run after it is clean.
  const again = await forget();
  expect(again.status).toBe('SUCCEEDED');
  expect((again.output as ForgetResult).counts).toMatchObject({ hotObjects: 0, jobRows: 0, parts: 0 });
  const after = await runLocal(runs.env, { definition: runs.definition, input: ARCHIVE });
  expect(after.status).toBe('SUCCEEDED');
  expect(await whereNamed(env, FORGET)).toEqual([]);
  expect(await lookups(env, others)).toEqual(before);
});

test('a webhook redelivered (same request id) is one request; bad input is refused before any write', async () => {
  const { env } = runs;
  const shopId = 'fg-webhook.myshopify.com';
  await seedTerminalJob(env, { shopId, completedAt: daysAgo(3) });
  const first = await forget({ shopId, requestId: 'wh-123', receivedAt: daysAgo(1).toISOString() });
  const second = await forget({ shopId, requestId: 'wh-123' });
  expect([first.status, second.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  expect((await listRequests(env)).filter((q) => q.id === 'wh-123')).toHaveLength(1);
  const bad = await forget({ shopId: '../x' });
  expect(bad.status).toBe('FAILED');
  expect(bad.error).toMatchObject({ error: 'InvalidIdError' });
  const unknown = await forget({ shopId, extra: 1 });
  expect(unknown.error).toMatchObject({ error: 'InvalidInputError' });
});

test('jobarchive forget: refuses bad flags before anything runs, prints the receipt, exits 0', async () => {
  const { env } = runs;
  expect(() => parseForgetOptions({})).toThrow('--shop');
  expect(() => parseForgetOptions({ shop: 'a/b' })).toThrow('shop id');
  expect(() => parseForgetOptions({ shop: 'x', 'request-id': 'no spaces' })).toThrow('erasure request id');
  expect(() => parseForgetOptions({ shop: 'x', 'state-machine-arn': 'arn:nope' })).toThrow(
    '--state-machine-arn',
  );
  const shopId = 'fg-cli.myshopify.com';
  const job = await seedTerminalJob(env, { shopId, completedAt: daysAgo(2) });
  const io = memoryOutput();
  const { exitCode } = await forgetCommand(cliContextFor(env), parseForgetOptions({ shop: shopId }), io);
  expect(exitCode).toBe(0);
  expect(io.stdout[0]).toMatch(new RegExp(`^forget: shop ${shopId.replace(/\./g, '\\.')} forgotten`));
  expect(io.stdout[1]).toContain(
    `removed: ${job.keys.length} hot objects (0 jobs without a row), 1 job rows`,
  );
  expect(await whereNamed(env, shopId)).toEqual([]);
});

test('run scratch: a run without a report is left to its own Report until it is older than the run timeout, then forget scrubs it', async () => {
  const { env } = runs;
  const shopId = 'fg-scratch.myshopify.com';
  for (const day of [4, 8]) await seedTerminalJob(env, { shopId, completedAt: inMonth(2, day) });
  await seedTerminalJob(env, { shopId: 'fg-scratch-other', completedAt: inMonth(2, 6) });
  const archived = await runLocal(runs.env, { definition: runs.definition, input: ARCHIVE });
  const { runId, reportKey } = archived.output as RunReport;
  // As if the run were still going (or had died before its Report): no report.
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: reportKey ?? undefined }));

  const first = await forget({ shopId });
  const out = first.output as ForgetResult;
  expect(out.counts).toMatchObject({ scratchRunsDeferred: 1, scratchObjects: 0 });
  // Forget left the run its marker (the request id, no shop) for the run's own Report.
  const marker = await getObjectBytes(env.s3, env.bucket, erasureMarkerKey(runId, out.requestId));
  expect(marker?.bytes.toString('utf8')).not.toContain(shopId);
  const left = await whereNamed(env, shopId);
  expect(left.length).toBeGreaterThan(0);
  expect(left.every((w) => w.includes(`job-details-runs/${runId}/`))).toBe(true);

  // Past the state machine's timeout (12 hours) the run has ended: forget scrubs it.
  env.advance(DAY);
  const again = await forget({ shopId }).finally(() => env.advance(-DAY));
  expect((again.output as ForgetResult).counts).toMatchObject({ scratchRunsDeferred: 0 });
  expect((again.output as ForgetResult).counts.scratchObjects).toBeGreaterThanOrEqual(left.length);
  expect(await whereNamed(env, shopId)).toEqual([]);
});

test('forget whose event names no run timeout takes the longest a construct allows (2 days): a report-less run older than that has ended', async () => {
  const { env } = runs;
  const shopId = 'fg-default.myshopify.com';
  await seedTerminalJob(env, { shopId, completedAt: inMonth(2, 4) });
  const archived = await runLocal(runs.env, { definition: runs.definition, input: ARCHIVE });
  const { runId, reportKey } = archived.output as RunReport;
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: reportKey ?? undefined }));
  const input = (n: number) => ({ shopId, requestId: `fd-${n}`, runId: `forget-fd-${n}` });
  let advanced = 0;
  const advance = (ms: number) => {
    env.advance(ms);
    advanced += ms;
  };
  try {
    // Within the longest timeout the run may still be going: left to its own Report.
    advance(RUN_TIMEOUT_MAX_DAYS * DAY - HOUR);
    const first = await forgetShop(env.deps, input(1));
    expect(first.counts.scratchRunsDeferred).toBeGreaterThanOrEqual(1);
    const left = await whereNamed(env, shopId);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((w) => w.includes(`job-details-runs/${runId}/`))).toBe(true);
    // Past it no run of any construct is going: scrubbed (the default was 29 days).
    advance(2 * HOUR);
    expect((await forgetShop(env.deps, input(2))).counts).toMatchObject({ scratchRunsDeferred: 0 });
    expect(await whereNamed(env, shopId)).toEqual([]);
  } finally {
    env.advance(-advanced);
  }
});

// Last: its request stays overdue, so every later archive run of this stack would end FAILED.
test('overdue requests: the run ends FAILED naming them (the free failed-runs rule), its report lists them; audit lists them', async () => {
  const { env } = runs;
  await recordRequest(env, {
    kind: 'redact-doc',
    shopId: 'fg-late.myshopify.com',
    docId: 'customer-7',
    requestId: 'late-1',
    receivedAt: daysAgo(45),
  });
  const r = await runLocal(runs.env, { definition: runs.definition, input: ARCHIVE });
  // No custom metric needed by default: the run did its work, then ends FAILED with the cause.
  expect(r.status).toBe('FAILED');
  expect(r.error?.error).toBe(ERASURE_OVERDUE_ERROR);
  const report = JSON.parse(r.error?.cause ?? '{}') as RunReport;
  expect(report.erasureOverdueCount).toBe(1);
  expect(report.erasureOverdue).toEqual([
    expect.objectContaining({ id: 'late-1', kind: 'redact-doc', state: 'received', ageDays: 45 }),
  ]);
  expect(r.error?.cause).not.toContain('customer-7');
  // The run's figures on the Report step's log line (without any custom metric).
  expect(
    r.logs.some(
      (l) =>
        JSON.stringify(l).includes('run figures') && JSON.stringify(l).includes('"ErasureRequestsOverdue":1'),
    ),
  ).toBe(true);
  // The local runner's sink still records the opt-in metric (the construct's `runMetrics`).
  expect(r.metrics.some((m) => JSON.stringify(m).includes('"ErasureRequestsOverdue"'))).toBe(true);
  const io = memoryOutput();
  const audit = await auditCommand(cliContextFor(env), { maxHeads: 100, concurrency: 4, json: false }, io);
  expect(audit.erasure.overdue.map((o) => o.id)).toEqual(['late-1']);
  expect(auditExitCode(audit)).toBe(4);
  expect(io.stdout.join('\n')).toContain('erasure requests past their 30-day deadline (1)');
});
