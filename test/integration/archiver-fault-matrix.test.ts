import { randomBytes } from 'node:crypto';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { ObservabilitySink } from '../../functions/sink';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { type LocalRunResult, stepHandlers, synthesizedDefinition } from '../../infra/local/runner';
import { parseMonthIndexKey, parsePartKey } from '../../shared/archive/format';
import { rebuildMonthIndex } from '../../shared/archive/reindex';
import type { RunReport } from '../../shared/archive/steps/types';
import { jobPrefix } from '../../shared/details';
import { JobDetailsReader } from '../../shared/reader';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  getBytes,
  HOUR,
  hotState,
  inMonth,
  listKeys,
  readIndex,
  readStoredIndex,
  runLocal,
  type SeededJob,
  seedBigJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import {
  burst,
  type Call,
  crashAfter,
  crashBefore,
  crashMidDelete,
  dropAfterSend,
  type Fault,
  FaultLayer,
  nthCall,
  printMatrix,
  runStatus,
  slowDown,
  throttled,
} from '../support/faults';

/**
 * The fault matrix: the CDK-synthesized state machine over the real handlers, with ONE fault injected
 * per case through a per-Task wrapper and a fault layer in front of the handlers' S3 and DynamoDB
 * clients (test/support/faults.ts): kills before and after each Task's main writes, S3 503 bursts and
 * dropped connections, DynamoDB throttling, a Lambda timeout, two overlapping executions. Then the
 * runs that follow — one at once, one 13 hours later (past the 12-hour abandonment age, so crash
 * leftovers are collected) — must converge: every job archived once, its details read back as they
 * were hot (0 lost, 0 duplicated in the reader's view), no hot object left, every stored part in its
 * index, no staging doc left, and `jobarchive audit` clean. The suite prints the matrix.
 */
jest.setTimeout(600_000);

const definition = synthesizedDefinition();
const layer = new FaultLayer();
/** The real handlers over the env's machine deps (whose clients carry the layer), each wrapped by it. */
const faulty = (env: ArchiverEnv) => (sink: ObservabilitySink) =>
  layer.wrap(stepHandlers(() => env.machineDeps, sink));
const INPUT = { olderThanDays: 30, graceHours: 0 };

const isPut = (c: Call) => c.command === 'PutObjectCommand';
const key = (c: Call) => String(c.input.Key ?? '');
const isIndexPut = (c: Call) => isPut(c) && key(c).endsWith('/index.json');
const isIntentPut = (c: Call) => isPut(c) && key(c).includes('/pending/');
const isHotDelete = (c: Call) =>
  c.command === 'DeleteObjectsCommand' &&
  ((c.input.Delete as { Objects?: { Key?: string }[] }).Objects ?? []).some((o) =>
    o.Key?.startsWith('job-details/'),
  );
const any = () => true;

interface Case {
  readonly name: string;
  readonly fault?: () => Fault;
  /** Two executions at once instead of one. */
  readonly overlap?: boolean;
  /** Jobs big enough for a multipart part (> 8 MiB). */
  readonly big?: boolean;
  /** Extra checks on the faulted run's result(s). */
  readonly check?: (runs: LocalRunResult[], hotObjects: number, jobs: readonly SeededJob[]) => void;
}

const CASES: Case[] = [
  { name: 'Plan: crash before its plan files', fault: () => crashBefore(nthCall('plan', isPut)) },
  {
    name: 'Plan: crash after its batch list',
    fault: () => crashAfter(nthCall('plan', (c) => isPut(c) && key(c).endsWith('batches.jsonl'))),
  },
  {
    name: 'ArchiveBatch: crash before the intent',
    fault: () => crashBefore(nthCall('archive-batch', isIntentPut)),
  },
  {
    name: 'ArchiveBatch: crash after the intent, before the part',
    fault: () => crashAfter(nthCall('archive-batch', isIntentPut)),
  },
  {
    name: 'ArchiveBatch: crash mid-upload (after the first multipart chunk)',
    big: true,
    fault: () => crashAfter(nthCall('archive-batch', (c) => c.command === 'UploadPartCommand')),
  },
  {
    name: 'ArchiveBatch: crash after the part is stored',
    fault: () =>
      crashAfter(nthCall('archive-batch', (c) => isPut(c) && key(c).startsWith('job-details-cold/'))),
  },
  {
    name: 'ArchiveBatch: crash before the commit',
    fault: () => crashBefore(nthCall('archive-batch', isIndexPut)),
  },
  {
    name: 'ArchiveBatch: crash between commit and delete',
    fault: () => crashAfter(nthCall('archive-batch', isIndexPut)),
  },
  {
    name: 'ArchiveBatch: crash mid-delete',
    fault: () => crashMidDelete(nthCall('archive-batch', isHotDelete)),
  },
  {
    name: 'ArchiveBatch: crash after the delete, before its marks',
    fault: () => crashAfter(nthCall('archive-batch', isHotDelete)),
  },
  {
    name: 'ArchiveBatch: crash after the deleted marks',
    // Commits first (one index write per group), then the marks.
    fault: () => crashAfter(nthCall('archive-batch', isIndexPut, 5)),
  },
  {
    name: 'ArchiveBatch: Lambda service error after the deleted marks (the Task retried)',
    fault: () => crashAfter(nthCall('archive-batch', isIndexPut, 5), 'Lambda.ServiceException'),
    // The retry finds the parts the dead attempt settled: their jobs count, and their objects are
    // named as that attempt's (the counts left with the entries), never as 0 deleted.
    check: (runs, hotObjects, jobs) => {
      expect(runs[0]?.status).toBe('SUCCEEDED');
      const out = runs[0]?.output as RunReport;
      expect(out.jobsDeleted).toBe(jobs.length);
      const earlier = out.deletedEarlier ?? [];
      expect(earlier.length).toBeGreaterThan(0);
      expect(out.deletedEarlierCount).toBe(earlier.length);
      for (const e of earlier) expect(e).toMatchObject({ jobs: 2, parts: 1 });
      const theirs = jobs.filter((j) =>
        earlier.some((e) => e.shopId === j.shopId && e.month === j.completedAt.slice(0, 7)),
      );
      expect(theirs).toHaveLength(2 * earlier.length);
      expect(out.objectsDeleted).toBe(hotObjects - theirs.reduce((n, j) => n + j.keys.length, 0));
    },
  },
  {
    name: 'ArchiveBatch: Lambda timeout after the commit',
    fault: () => crashAfter(nthCall('archive-batch', isIndexPut), 'Sandbox.Timedout'),
  },
  { name: 'Tally: crash before reading the results', fault: () => crashBefore(nthCall('tally', any)) },
  { name: 'Report: crash after report.json', fault: () => crashAfter(nthCall('report', isPut)) },
  {
    name: 'S3 503 SlowDown burst (8 attempts)',
    fault: () => burst(8, (c) => c.step === 'archive-batch' && c.service === 's3', slowDown),
  },
  {
    name: 'S3 connection dropped after DeleteObjects took effect',
    fault: () => dropAfterSend((c) => c.step === 'archive-batch' && isHotDelete(c)),
    // The SDK's retry finds the keys gone (NoSuchKey): every deletion is still counted, once.
    check: (runs, hotObjects) => {
      expect(runs[0]?.status).toBe('SUCCEEDED');
      expect((runs[0]?.output as RunReport | undefined)?.objectsDeleted).toBe(hotObjects);
    },
  },
  {
    name: 'S3 connection dropped after the commit took effect',
    fault: () => dropAfterSend((c) => c.step === 'archive-batch' && isIndexPut(c)),
  },
  {
    name: 'DynamoDB throttling burst in ArchiveBatch (4 attempts)',
    fault: () => burst(4, (c) => c.step === 'archive-batch' && c.service === 'dynamodb', throttled),
  },
  {
    name: 'DynamoDB throttling burst in Plan (4 attempts)',
    fault: () => burst(4, (c) => c.step === 'plan' && c.service === 'dynamodb', throttled),
  },
  { name: 'two overlapping executions', overlap: true },
];

/** 2 shops × 2 months × 2 jobs (2 flushes and platform data each), or 9 ~1 MB jobs in one month. */
const seed = async (env: ArchiverEnv, big: boolean): Promise<SeededJob[]> => {
  const jobs: SeededJob[] = [];
  if (big) {
    for (let i = 0; i < 9; i++) {
      const docs = Array.from({ length: 60_000 }, () => randomBytes(16).toString('base64url'));
      jobs.push(await seedBigJob(env, 'fm-big', inMonth(2, 1 + i), docs));
    }
    return jobs;
  }
  for (const shopId of ['fm-a', 'fm-b'])
    for (const monthsBack of [2, 3])
      for (const day of [5, 9])
        jobs.push(await seedTerminalJob(env, { shopId, completedAt: inMonth(monthsBack, day), flushes: 2 }));
  return jobs;
};

interface Outcome {
  readonly name: string;
  readonly faulted: string;
  readonly reruns: string;
  readonly lost: number;
  readonly duplicated: number;
  readonly audit: string;
}
const matrix: Outcome[] = [];

afterAll(() => {
  const rows = [
    ['case', 'faulted run', 'reruns (now, +13 h)', 'lost', 'duplicated', 'audit'],
    ...matrix.map((o) => [o.name, o.faulted, o.reruns, String(o.lost), String(o.duplicated), o.audit]),
  ];
  printMatrix('Fault matrix (synthesized state machine, real handlers, one fault per case)', rows);
});

test.each(CASES)('$name: the runs after converge, nothing lost or duplicated, audit clean', async (c) => {
  const env = await archiverEnv();
  try {
    layer.install(env.machineDeps);
    const handlers = faulty(env);
    const jobs = await seed(env, c.big === true);
    const hotObjects = jobs.reduce((n, j) => n + j.keys.length, 0);
    const before = new Map<string, Awaited<ReturnType<typeof hotState>>>();
    for (const j of jobs) before.set(j.jobId, await hotState(env, j.jobId));
    const run = () => runLocal(env, { definition, input: INPUT, handlers });

    const fault = c.fault?.() ?? null;
    layer.fault = fault;
    const faulted = c.overlap ? await Promise.all([run(), run()]) : [await run()];
    layer.fault = null;
    if (fault) expect(fault.fired).toBeGreaterThan(0); // the fault struck
    c.check?.(faulted, hotObjects, jobs);

    const again = await run();
    env.advance(13 * HOUR);
    const later = await run().finally(() => env.advance(-13 * HOUR));
    for (const r of [again, later]) expect(r.unexpectedErrors).toEqual([]);
    expect(later.status).toBe('SUCCEEDED');
    expect(later.output).toMatchObject({ groupsFailedCount: 0, jobsQuarantinedCount: 0 });

    // Every job: one archival, read back as it was hot, nothing left hot.
    const reader = new JobDetailsReader(env.s3, env.bucket);
    let lost = 0;
    let duplicated = 0;
    for (const j of jobs) {
      const entries = (await readIndex(env, j.shopId, j.completedAt.slice(0, 7)))?.jobs[j.jobId] ?? [];
      if (entries.length > 1) duplicated++;
      const read = await reader.readAllDetails({
        shopId: j.shopId,
        jobId: j.jobId,
        completedAt: j.completedAt,
      });
      const pd = await reader.readPlatformData({
        shopId: j.shopId,
        jobId: j.jobId,
        completedAt: j.completedAt,
      });
      const was = before.get(j.jobId);
      const same =
        entries.length === 1 &&
        read.provenance.source === 'archive' &&
        JSON.stringify(read.details) === JSON.stringify(was?.details) &&
        JSON.stringify(pd.data) === JSON.stringify(was?.platformData);
      if (!same) lost++;
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
    }
    // Every stored part is committed, and no entry is left in a stored index: every part whose jobs
    // it archived has settled (its summary instead of entries: the index's bytes at rest). A part an
    // overlapping run committed second archived nothing new (no entry ever pointed at it): it stays
    // as committed. No staging doc is left.
    const settledIn = new Map<string, boolean>();
    for (const k of await listKeys(env.s3, env.bucket, 'job-details-cold/')) {
      const p = parsePartKey(k);
      const index = p ? await readStoredIndex(env, p.shopId, p.month) : null;
      expect(index?.parts.map((x) => x.name)).toContain(p?.partName);
      expect(index?.jobs).toEqual({});
      const month = `${p?.shopId}/${p?.month}`;
      const settled = index?.parts.find((x) => x.name === p?.partName)?.settled !== undefined;
      settledIn.set(month, (settledIn.get(month) ?? false) || settled);
    }
    expect([...settledIn.values()].every(Boolean)).toBe(true);
    expect(
      (await listKeys(env.s3, env.bucket, 'job-details-index/')).filter((k) => k.includes('/pending/')),
    ).toEqual([]);
    const ctx = cliContextFor(env);
    const audit = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: true }, memoryOutput());
    const t = audit.totals;
    matrix.push({
      name: c.name,
      faulted: faulted.map(runStatus).join(' + '),
      reruns: `${runStatus(again)}, ${runStatus(later)}`,
      lost,
      duplicated,
      audit:
        t.mismatches + t.orphans + t.undated === 0
          ? 'clean'
          : `${t.mismatches} mismatches, ${t.orphans} orphans`,
    });
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    expect(t).toMatchObject({ mismatches: 0, orphans: 0, undated: 0 });
  } finally {
    layer.fault = null;
  }
});

test('a retried ArchiveBatch: every request either attempt sent is in the report, once', async () => {
  const env = await archiverEnv();
  try {
    layer.install(env.machineDeps);
    await seed(env, false);
    const sent = { s3: 0, dynamodb: 0 };
    let failed = 0;
    // The first attempt writes its marker, then the read of its plan (its jobs with the hot listing
    // Plan made) fails (a 503 past the SDK's retries): the Task retries the batch. Every call that
    // reached the store is counted here.
    layer.fault = {
      at: 'call',
      fired: 0,
      handle: async (c, send) => {
        if (
          failed === 0 &&
          c.step === 'archive-batch' &&
          c.command === 'GetObjectCommand' &&
          String(c.input.Key ?? '').endsWith('/jobs.jsonl.gz')
        ) {
          failed++;
          throw slowDown();
        }
        sent[c.service]++;
        return send();
      },
    };
    const r = await runLocal(env, { definition, input: INPUT, handlers: faulty(env) });
    layer.fault = null;
    expect(failed).toBe(1);
    expect(r.status).toBe('SUCCEEDED');
    expect(r.taskInvocations.ArchiveBatch).toBe(2);
    const report = r.output as RunReport;
    expect(report.jobsArchived).toBe(8);
    expect({ s3: report.requests.s3, dynamodb: report.requests.dynamodb }).toEqual(sent);
  } finally {
    layer.fault = null;
  }
});

test('ArchiveBatch: a part damaged between its commit and the delete: nothing of its group deleted, the group fails, audit flags it, reindex converges', async () => {
  const env = await archiverEnv();
  try {
    layer.install(env.machineDeps);
    const jobs = await seed(env, false);
    const before = new Map<string, Awaited<ReturnType<typeof hotState>>>();
    for (const j of jobs) before.set(j.jobId, await hotState(env, j.jobId));
    const run = () => runLocal(env, { definition, input: INPUT, handlers: faulty(env) });

    // Right after the first commit (the index write lands), the committed part is overwritten with
    // one byte flipped, same size — before the same invocation's delete step.
    let damaged: { key: string; shopId: string; month: string } | undefined;
    const fault: Fault = {
      at: 'call',
      fired: 0,
      handle: async (c, send) => {
        const out = await send();
        const idx = isIndexPut(c) && c.step === 'archive-batch' ? parseMonthIndexKey(key(c)) : null;
        if (fault.fired === 0 && idx) {
          fault.fired++;
          const [partKey] = await listKeys(
            env.s3,
            env.bucket,
            `job-details-cold/${idx.shopId}/${idx.month}/`,
          );
          if (!partKey) throw new Error('no part after the commit');
          const bytes = Buffer.from(await getBytes(env.s3, env.bucket, partKey));
          const at = bytes.length - 5; // in the last block's CRC-32
          bytes[at] = (bytes[at] ?? 0) ^ 0x55;
          await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: partKey, Body: bytes }));
          damaged = { key: partKey, ...idx };
        }
        return out;
      },
    };
    layer.fault = fault;
    const faulted = await run();
    layer.fault = null;
    expect(fault.fired).toBe(1);
    if (!damaged) throw new Error('no part damaged');
    const hit = damaged;
    expect(faulted.status).toBe('FAILED');
    expect(faulted.unexpectedErrors).toEqual([]);
    const inGroup = jobs.filter((j) => j.shopId === hit.shopId && j.completedAt.startsWith(hit.month));
    expect(inGroup.length).toBeGreaterThan(0);
    for (const j of inGroup) expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual(j.keys);
    for (const j of jobs.filter((x) => !inGroup.includes(x)))
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]); // the others went on

    const ctx = cliContextFor(env);
    const flagged = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: true }, memoryOutput());
    expect(flagged.mismatches).toEqual([expect.objectContaining({ kind: 'damaged-part', key: hit.key })]);
    expect(auditExitCode(flagged)).not.toBe(0);
    // Until repaired, every run fails the group and keeps its hot copies.
    const again = await run();
    expect(again.status).toBe('FAILED');
    for (const j of inGroup) expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual(j.keys);

    // Repair: reindex drops the unreadable part; the next runs archive the jobs again from hot copies;
    // the excluded part is removed (reindex names it) once they are.
    const rebuilt = await rebuildMonthIndex(env.deps, hit.shopId, hit.month, { dryRun: false, force: true });
    expect(rebuilt.partsExcluded.map((p) => p.key)).toEqual([hit.key]);
    const now = await run();
    env.advance(13 * HOUR);
    const later = await run().finally(() => env.advance(-13 * HOUR));
    expect(later.status).toBe('SUCCEEDED');
    await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: hit.key }));

    const reader = new JobDetailsReader(env.s3, env.bucket);
    let lost = 0;
    let duplicated = 0;
    for (const j of jobs) {
      const entries = (await readIndex(env, j.shopId, j.completedAt.slice(0, 7)))?.jobs[j.jobId] ?? [];
      if (entries.length > 1) duplicated++;
      const q = { shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt };
      const read = await reader.readAllDetails(q);
      const pd = await reader.readPlatformData(q);
      const was = before.get(j.jobId);
      if (
        read.provenance.source !== 'archive' ||
        JSON.stringify(read.details) !== JSON.stringify(was?.details) ||
        JSON.stringify(pd.data) !== JSON.stringify(was?.platformData)
      )
        lost++;
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
    }
    const audit = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: true }, memoryOutput());
    matrix.push({
      name: 'ArchiveBatch: part damaged between commit and delete (+ reindex)',
      faulted: runStatus(faulted),
      reruns: `${runStatus(again)}; reindex; ${runStatus(now)}, ${runStatus(later)}`,
      lost,
      duplicated,
      audit: audit.totals.mismatches === 0 ? 'clean' : `${audit.totals.mismatches} mismatches`,
    });
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    expect(audit.totals).toMatchObject({ mismatches: 0, orphans: 0, undated: 0 });
  } finally {
    layer.fault = null;
  }
});
