import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import type { ObservabilitySink } from '../../functions/sink';
import { auditCommand } from '../../infra/cli/audit';
import { memoryOutput } from '../../infra/cli/output';
import { stepHandlers, synthesizedDefinition } from '../../infra/local/runner';
import type { ForgetResult } from '../../shared/erasure/forget';
import { listRequests } from '../../shared/erasure/ledger';
import { jobPk, jobSk } from '../../shared/jobs/schema';
import {
  archiverEnv,
  cliContextFor,
  DAY,
  daysAgo,
  inMonth,
  runLocal,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import { addRetries, lookups, whereNamed } from '../support/erasure-fixtures';
import {
  burst,
  type Call,
  crashAfter,
  crashBefore,
  crashMidDelete,
  type Fault,
  FaultLayer,
  nthCall,
  printMatrix,
  runStatus,
  slowDown,
  throttled,
} from '../support/faults';

/**
 * The fault matrix of forget (archiver-fault-matrix.test.ts's harness: the synthesized state machine,
 * the real handlers, one fault per case in front of their clients): the Forget task is killed before
 * or after each of its writes (the run scratch's too), or meets S3 503s and DynamoDB throttling; then
 * forget runs again. It
 * must converge: nothing names the shop, the other shop's lookups are what they were, the request is
 * complete with the counts of everything there was, audit is clean. The suite prints the matrix.
 */
jest.setTimeout(600_000);

const definition = synthesizedDefinition();
const layer = new FaultLayer();
const SHOP = 'fx-acme.myshopify.com';
const OTHER = 'fx-other.myshopify.com';

const key = (c: Call) => String(c.input.Key ?? '');
const isPut = (c: Call, prefix: string) => c.command === 'PutObjectCommand' && key(c).startsWith(prefix);
const deletes = (c: Call, prefix: string) =>
  c.command === 'DeleteObjectsCommand' &&
  ((c.input.Delete as { Objects?: { Key?: string }[] }).Objects ?? []).some((o) => o.Key?.startsWith(prefix));
const body = (c: Call) => Buffer.from((c.input.Body as Uint8Array | undefined) ?? []).toString('utf8');

interface Case {
  readonly name: string;
  readonly fault: () => Fault;
}

const CASES: Case[] = [
  {
    name: 'crash after the request is recorded',
    fault: () => crashAfter(nthCall('forget', (c) => isPut(c, 'job-details-erasure/requests/'))),
  },
  {
    name: 'crash after the tombstone',
    fault: () => crashAfter(nthCall('forget', (c) => isPut(c, 'job-details-erasure/shops/'))),
  },
  {
    // The watermark's erasure summary: the request's entry (before the ledger record), the shop's,
    // then the shop's retries removed.
    name: "crash after the request entered the watermark's summary, before the ledger",
    fault: () => crashAfter(nthCall('forget', (c) => isPut(c, 'job-details-state/'))),
  },
  {
    name: 'crash after the shop entered the erasure summary',
    fault: () => crashAfter(nthCall('forget', (c) => isPut(c, 'job-details-state/'), 2)),
  },
  {
    name: 'crash after the watermark lost its retries',
    fault: () =>
      crashAfter(
        nthCall(
          'forget',
          (c) => isPut(c, 'job-details-state/') && !body(c).includes(`"shopId":"${SHOP}","jobId"`),
        ),
      ),
  },
  {
    name: 'crash after the month indexes went, before the parts',
    fault: () => crashAfter(nthCall('forget', (c) => deletes(c, 'job-details-index/'))),
  },
  {
    name: 'crash mid-delete of the hot objects',
    fault: () => crashMidDelete(nthCall('forget', (c) => deletes(c, 'job-details/'))),
  },
  {
    name: 'crash between two row deletes',
    fault: () => crashAfter(nthCall('forget', (c) => c.command === 'DeleteItemCommand', 2)),
  },
  {
    name: "crash between a plan page's planned jobs and its batches (scratch)",
    fault: () =>
      crashAfter(
        nthCall('forget', (c) => isPut(c, 'job-details-runs/') && key(c).endsWith('/jobs.jsonl.gz')),
      ),
  },
  {
    name: 'crash mid-scratch, after its third rewrite',
    fault: () => crashAfter(nthCall('forget', (c) => isPut(c, 'job-details-runs/'), 3)),
  },
  {
    name: 'crash before the receipt',
    fault: () =>
      crashBefore(
        nthCall(
          'forget',
          (c) => isPut(c, 'job-details-erasure/requests/') && body(c).includes('"state":"complete"'),
        ),
      ),
  },
  {
    name: 'Lambda timeout while attributing hot objects',
    fault: () =>
      crashAfter(
        nthCall('forget', (c) => c.command === 'HeadObjectCommand', 3),
        'Sandbox.Timedout',
      ),
  },
  {
    name: 'S3 503 SlowDown burst (8 attempts)',
    fault: () => burst(8, (c) => c.step === 'forget' && c.service === 's3', slowDown),
  },
  {
    name: 'DynamoDB throttling burst (4 attempts)',
    fault: () => burst(4, (c) => c.step === 'forget' && c.service === 'dynamodb', throttled),
  },
];

const matrix: string[][] = [];
afterAll(() => {
  const rows = [['case', 'faulted forget', 'rerun', 'left naming the shop', 'audit'], ...matrix];
  printMatrix('Forget fault matrix (synthesized state machine, real handlers)', rows);
});

test.each(CASES)('$name: forget again converges', async (c) => {
  const env = await archiverEnv();
  try {
    layer.install(env.machineDeps);
    const handlers = (sink: ObservabilitySink) => layer.wrap(stepHandlers(() => env.machineDeps, sink));
    const jobs: SeededJob[] = [];
    for (const shopId of [SHOP, OTHER])
      for (const at of [inMonth(2, 5), inMonth(3, 5)])
        jobs.push(await seedTerminalJob(env, { shopId, completedAt: at }));
    await runLocal(env, { definition, input: { olderThanDays: 30, graceHours: 0 } });
    for (const shopId of [SHOP, OTHER])
      for (const at of [daysAgo(2), daysAgo(3)])
        jobs.push(await seedTerminalJob(env, { shopId, completedAt: at }));
    const rowless = await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(4, 2) });
    await env.ddb.send(
      new DeleteCommand({ TableName: env.table, Key: { pk: jobPk(SHOP), sk: jobSk(rowless.jobId) } }),
    );
    await addRetries(env, [{ shopId: SHOP, jobId: jobs[0]?.jobId ?? '' }]);
    const others = jobs.filter((j) => j.shopId === OTHER);
    const before = await lookups(env, others);
    // The archival's scratch naming the shop; a plan page's planned jobs count with its batches.
    const scratch = (await whereNamed(env, SHOP)).filter((w) => w.includes('job-details-runs/'));
    const scratchObjects = scratch.length + scratch.filter((w) => w.endsWith('/batches.jsonl')).length;
    const hotObjects = [...jobs.filter((j) => j.shopId === SHOP).slice(2), rowless].reduce(
      (n, j) => n + j.keys.length,
      0,
    );

    env.advance(100 * DAY);
    const fault = c.fault();
    layer.fault = fault;
    const faulted = await runLocal(env, { definition, input: { forget: { shopId: SHOP } }, handlers });
    layer.fault = null;
    expect(fault.fired).toBeGreaterThan(0);
    const again = await runLocal(env, { definition, input: { forget: { shopId: SHOP } }, handlers });
    expect(again.status).toBe('SUCCEEDED');

    const left = await whereNamed(env, SHOP);
    const audit = await auditCommand(
      cliContextFor(env),
      { maxHeads: 100, concurrency: 4, json: true },
      memoryOutput(),
    );
    const t = audit.totals;
    matrix.push([
      c.name,
      runStatus(faulted),
      runStatus(again),
      String(left.length),
      t.mismatches + t.orphans + audit.erasure.forgottenLeftovers.length === 0 ? 'clean' : 'findings',
    ]);
    expect(left).toEqual([]);
    expect(await lookups(env, others)).toEqual(before);
    expect(t).toMatchObject({ mismatches: 0, orphans: 0 });
    expect(audit.erasure.forgottenLeftovers).toEqual([]);
    // The request is complete, its receipt counting everything there was: a resumed forget continues
    // the request its crashed run left open; after a forget that succeeded, the second one is a
    // request of its own that found nothing.
    const requests = await listRequests(env);
    expect(requests.map((r) => r.state)).toEqual(
      faulted.status === 'SUCCEEDED' ? ['complete', 'complete'] : ['complete'],
    );
    expect((again.output as ForgetResult).requestId).toBe(requests.at(-1)?.id);
    if (faulted.status === 'SUCCEEDED') expect((again.output as ForgetResult).counts.hotObjects).toBe(0);
    expect(requests[0]?.receipt).toMatchObject({
      hotObjects,
      rowlessJobs: 1,
      jobRows: 4,
      parts: 2,
      monthIndexes: 2,
      retryEntries: 1,
      scratchObjects,
      complete: true,
    });
  } finally {
    layer.fault = null;
  }
});
