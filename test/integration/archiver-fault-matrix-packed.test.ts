import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { ObservabilitySink } from '../../functions/sink';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { type LocalRunResult, stepHandlers, synthesizedDefinition } from '../../infra/local/runner';
import {
  emptySharedIndex,
  parsePartKey,
  parseSharedIndex,
  parseSharedPartKey,
  type SharedIndex,
  serializeSharedIndex,
  sharedIndexKey,
} from '../../shared/archive/format';
import { makeStepDeps, type StepDeps } from '../../shared/archive/steps/context';
import { createRequestMeter } from '../../shared/archive/steps/meter';
import { jobPrefix } from '../../shared/details';
import { countRequests } from '../../shared/metrics';
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
  runLocal,
  type SeededJob,
  seedBigJob,
  seedTerminalJob,
  TABLE_SETTINGS,
} from '../support/archiver-fixtures';
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
} from '../support/faults';
import { testDdb, testS3 } from '../support/local';

/**
 * The fault matrix of packed shop-months (docs/archive-format.md, "Shared parts"; the unpacked one is
 * archiver-fault-matrix.test.ts): the CDK-synthesized state machine over the real handlers, packing on
 * as deployed (`packBelowKb` 128), a seed of small shops of one month (one shared part, one
 * shared.json commit) beside a shop too big to pack (a part of its own in the same batch). ONE fault
 * per case at the shared steps — kills around the shared intent, the shared part, the shared.json
 * commit, the hot delete and its marks; a Lambda timeout; a 503 burst; a lost conditional-write race;
 * two overlapping executions — then runs at once and 13 hours later (past the abandonment age) must
 * converge: every job has exactly one archival (its own month index or its shop's view in shared.json),
 * reads back as it was hot, has no hot object left; every stored part is committed (shared parts named
 * by shared.json); no intent is left; `jobarchive audit` is clean. The suite prints the matrix.
 */
jest.setTimeout(600_000);

const definition = synthesizedDefinition();
const layer = new FaultLayer();
const INPUT = { olderThanDays: 30, graceHours: 0 };

/**
 * What a deployed archiver's handlers get (the table's defaults, packing on): clients and a meter of
 * their own, the env's clock. The fault layer goes on these clients only, so the test's own requests
 * (env.s3: checks, the damage and the racing writer below) never meet it.
 */
const packingMachineDeps = (env: ArchiverEnv): StepDeps => {
  const s3 = testS3();
  const ddb = testDdb();
  const meter = createRequestMeter();
  countRequests(s3, 's3', meter.sink);
  countRequests(ddb, 'dynamodb', meter.sink);
  return makeStepDeps({
    s3,
    ddb,
    bucket: env.bucket,
    table: env.table,
    settings: { ...TABLE_SETTINGS, packBelowKb: 128 },
    meter,
    clock: env.deps.clock,
  });
};

const isPut = (c: Call) => c.command === 'PutObjectCommand';
const key = (c: Call) => String(c.input.Key ?? '');
const SHARED_INDEX = /^job-details-index\/_shared\/\d{4}-\d{2}\/shared\.json$/;
const isSharedIndexPut = (c: Call) => isPut(c) && SHARED_INDEX.test(key(c));
const isSharedIntentPut = (c: Call) =>
  isPut(c) && key(c).startsWith('job-details-index/_shared/') && key(c).includes('/pending/');
/** The shared part's bytes landing (a single PUT below 8 MiB, a multipart completion above). */
const isSharedPartStored = (c: Call) =>
  (isPut(c) || c.command === 'CompleteMultipartUploadCommand') &&
  key(c).startsWith('job-details-cold/_shared/');
/**
 * The shared.json writes after the shared part is stored: the 1st is the commit, the 2nd the deletion
 * marks (a month's first batch writes an empty shared.json before its intent: not these).
 */
const sharedIndexWrite = (nth: number) => {
  let stored = false;
  return nthCall(
    'archive-batch',
    (c) => {
      if (isSharedPartStored(c)) stored = true;
      return stored && isSharedIndexPut(c);
    },
    nth,
  );
};
const isHotDelete = (c: Call) =>
  c.command === 'DeleteObjectsCommand' &&
  ((c.input.Delete as { Objects?: { Key?: string }[] }).Objects ?? []).some((o) =>
    o.Key?.startsWith('job-details/'),
  );

const readShared = async (env: ArchiverEnv, month: string): Promise<SharedIndex | null> => {
  const k = sharedIndexKey(month);
  try {
    return parseSharedIndex(await getBytes(env.s3, env.bucket, k), k);
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return null;
    throw err;
  }
};

/** Statuses of the shared.json writes that lost a race (a real 412 from the local S3's conditional PUT). */
const lostRaces: number[] = [];

/**
 * Another writer of the month's shared.json gets in just before the matching conditional PUT of
 * ArchiveBatch: as another batch of the same month writing it first. The
 * local S3 enforces If-None-Match / If-Match (infra/local/s3rver-entry.cjs), so the PUT gets a real
 * 412 — nothing is mocked; the archiver must re-read and re-apply.
 */
const raceOnSharedIndex = (env: ArchiverEnv, match: (c: Call) => boolean): Fault => {
  const f: Fault = {
    at: 'call',
    fired: 0,
    handle: async (c, send) => {
      if (f.fired > 0 || !match(c)) return send();
      f.fired++;
      const month = key(c).split('/')[2] ?? '';
      const current = await readShared(env, month);
      // The other writer's own conditional write: it only touches updated_at (it adds nothing of ours).
      const next = current
        ? { ...current, updated_at: new Date().toISOString() }
        : emptySharedIndex(month, new Date().toISOString());
      await env.s3.send(
        new PutObjectCommand({
          Bucket: env.bucket,
          Key: key(c),
          Body: serializeSharedIndex(next),
          ContentEncoding: 'gzip',
          ...(current ? {} : { IfNoneMatch: '*' }),
        }),
      );
      try {
        return await send();
      } catch (err) {
        lostRaces.push((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0);
        throw err;
      }
    },
  };
  return f;
};

interface Case {
  readonly name: string;
  readonly fault?: (env: ArchiverEnv) => Fault;
  /** Two executions at once instead of one. */
  readonly overlap?: boolean;
  /** Extra checks on the faulted run's result(s). */
  readonly check?: (runs: LocalRunResult[]) => void;
}

const CASES: Case[] = [
  { name: 'no fault (the seed packs: one shared part of every small shop)' },
  {
    name: 'crash before the shared intent',
    fault: () => crashBefore(nthCall('archive-batch', isSharedIntentPut)),
  },
  {
    name: 'crash after the shared intent, before the part',
    fault: () => crashAfter(nthCall('archive-batch', isSharedIntentPut)),
  },
  {
    name: 'crash after the shared part is stored',
    fault: () => crashAfter(nthCall('archive-batch', isSharedPartStored)),
  },
  {
    name: 'crash before the shared.json commit',
    fault: () => crashBefore(sharedIndexWrite(1)),
  },
  {
    name: 'crash after the shared.json commit (before the deletes)',
    fault: () => crashAfter(sharedIndexWrite(1)),
  },
  {
    name: 'crash mid-delete of the hot objects',
    fault: () => crashMidDelete(nthCall('archive-batch', isHotDelete)),
  },
  {
    name: 'crash after the delete, before its marks',
    fault: () => crashAfter(nthCall('archive-batch', isHotDelete)),
  },
  {
    name: 'Lambda timeout after the shared.json commit',
    fault: () => crashAfter(sharedIndexWrite(1), 'Sandbox.Timedout'),
  },
  {
    name: 'S3 503 SlowDown burst (8 attempts)',
    fault: () => burst(8, (c) => c.step === 'archive-batch' && c.service === 's3', slowDown),
  },
  {
    name: "the month's first (empty) shared.json loses a race (real 412)",
    fault: (env) => raceOnSharedIndex(env, nthCall('archive-batch', isSharedIndexPut)),
    check: (runs) => expect(runs[0]?.status).toBe('SUCCEEDED'),
  },
  {
    name: 'shared.json commit loses a race (real 412)',
    fault: (env) => raceOnSharedIndex(env, sharedIndexWrite(1)),
    check: (runs) => expect(runs[0]?.status).toBe('SUCCEEDED'),
  },
  {
    name: 'shared.json marks write loses a race (real 412)',
    fault: (env) => raceOnSharedIndex(env, sharedIndexWrite(2)),
    check: (runs) => expect(runs[0]?.status).toBe('SUCCEEDED'),
  },
  { name: 'two overlapping executions', overlap: true },
];

const SMALL_SHOPS: ReadonlyArray<readonly [string, number]> = [
  ['fp-a', 1],
  ['fp-b', 2],
  ['fp-c', 3],
  ['fp-d', 1],
];
const BIG_SHOP = 'fp-big';
const MONTH_BACK = 2;

/**
 * 4 small shops (1–3 jobs of 2 flushes and platform data each) and one job of ~250 KB hot (above
 * `packBelowKb`: a part of its own), all in one month: one batch, one shared part.
 */
const seed = async (env: ArchiverEnv): Promise<SeededJob[]> => {
  const jobs: SeededJob[] = [];
  for (const [i, [shopId, n]] of SMALL_SHOPS.entries())
    for (let j = 0; j < n; j++)
      jobs.push(
        await seedTerminalJob(env, { shopId, completedAt: inMonth(MONTH_BACK, 3 + i, j), flushes: 2 }),
      );
  const docs = Array.from({ length: 12_000 }, () => randomBytes(16).toString('base64url'));
  jobs.push(await seedBigJob(env, BIG_SHOP, inMonth(MONTH_BACK, 10), docs));
  return jobs;
};

interface Outcome {
  readonly name: string;
  readonly faulted: string;
  readonly reruns: string;
  readonly where: string;
  readonly lost: number;
  readonly duplicated: number;
  readonly audit: string;
}
const matrix: Outcome[] = [];

afterAll(() => {
  const rows = [
    ['case', 'faulted run', 'reruns (now, +13 h)', 'small shops in', 'lost', 'duplicated', 'audit'],
    ...matrix.map((o) => [
      o.name,
      o.faulted,
      o.reruns,
      o.where,
      String(o.lost),
      String(o.duplicated),
      o.audit,
    ]),
  ];
  printMatrix(
    'Packed fault matrix (synthesized state machine, real handlers, packBelowKb 128, one fault per case)',
    rows,
  );
});

const setUp = async () => {
  const env = await archiverEnv();
  const machineDeps = packingMachineDeps(env);
  layer.install(machineDeps);
  const handlers = (sink: ObservabilitySink) => layer.wrap(stepHandlers(() => machineDeps, sink));
  const jobs = await seed(env);
  const month = jobs[0]?.completedAt.slice(0, 7) ?? '';
  const before = new Map<string, Awaited<ReturnType<typeof hotState>>>();
  for (const j of jobs) before.set(j.jobId, await hotState(env, j.jobId));
  const run = () => runLocal(env, { definition, input: INPUT, handlers });
  return { env, jobs, month, before, run };
};

/** A job's archival entries: in its own month index and in its shop's view of the shared index. */
const entriesOf = async (env: ArchiverEnv, shared: SharedIndex | null, j: SeededJob) => {
  const month = j.completedAt.slice(0, 7);
  const own = (await readIndex(env, j.shopId, month))?.jobs[j.jobId] ?? [];
  const packed = shared?.views.get(j.shopId)?.jobs[j.jobId] ?? [];
  return { own, packed };
};

test.each(CASES)('$name: the runs after converge, nothing lost or duplicated, audit clean', async (c) => {
  const { env, jobs, month, before, run } = await setUp();
  try {
    const fault = c.fault?.(env) ?? null;
    lostRaces.length = 0;
    layer.fault = fault;
    const faulted = c.overlap ? await Promise.all([run(), run()]) : [await run()];
    layer.fault = null;
    if (fault) expect(fault.fired).toBeGreaterThan(0); // the fault struck
    if (c.name.includes('race')) expect(lostRaces).toEqual([412]);
    c.check?.(faulted);
    if (!c.fault && !c.overlap) {
      // The seed exercises the shared path: every small shop in one shared part, the big one on its own.
      const s = await readShared(env, month);
      expect(s?.parts).toHaveLength(1);
      expect(Object.keys(s?.parts[0]?.segments ?? {}).sort()).toEqual(SMALL_SHOPS.map(([s]) => s));
      expect(await readIndex(env, BIG_SHOP, month)).not.toBeNull();
    }

    const again = await run();
    env.advance(13 * HOUR);
    const later = await run().finally(() => env.advance(-13 * HOUR));
    for (const r of [again, later]) expect(r.unexpectedErrors).toEqual([]);
    expect(later.status).toBe('SUCCEEDED');
    expect(later.output).toMatchObject({ groupsFailedCount: 0, jobsQuarantinedCount: 0 });

    // Every job: exactly one archival (own index or shared view), read back as it was hot, nothing hot.
    const shared = await readShared(env, month);
    const reader = new JobDetailsReader(env.s3, env.bucket);
    let lost = 0;
    let duplicated = 0;
    const packedShops = new Set<string>();
    for (const j of jobs) {
      const { own, packed } = await entriesOf(env, shared, j);
      if (packed.length > 0) packedShops.add(j.shopId);
      if (own.length + packed.length > 1) duplicated++;
      const q = { shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt };
      const read = await reader.readAllDetails(q);
      const pd = await reader.readPlatformData(q);
      const was = before.get(j.jobId);
      const same =
        own.length + packed.length === 1 &&
        read.provenance.source === 'archive' &&
        JSON.stringify(read.details) === JSON.stringify(was?.details) &&
        JSON.stringify(pd.data) === JSON.stringify(was?.platformData);
      if (!same) lost++;
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
    }
    // Every stored part is committed: a shop's in its month index, a shared one in shared.json.
    for (const k of await listKeys(env.s3, env.bucket, 'job-details-cold/')) {
      const s = parseSharedPartKey(k);
      if (s) {
        expect({ key: k, named: shared?.parts.some((p) => p.name === s.partName) ?? false }).toEqual({
          key: k,
          named: true,
        });
        continue;
      }
      const p = parsePartKey(k);
      const index = p ? await readIndex(env, p.shopId, p.month) : null;
      expect(index?.parts.map((x) => x.name)).toContain(p?.partName);
    }
    // No intent or staging doc is left, shared or own.
    expect(
      (await listKeys(env.s3, env.bucket, 'job-details-index/')).filter((k) => k.includes('/pending/')),
    ).toEqual([]);
    const audit = await auditCommand(
      cliContextFor(env),
      { maxHeads: 100, concurrency: 4, json: true },
      memoryOutput(),
    );
    const t = audit.totals;
    const small = SMALL_SHOPS.length;
    matrix.push({
      name: c.name,
      faulted: faulted.map(runStatus).join(' + '),
      reruns: `${runStatus(again)}, ${runStatus(later)}`,
      where:
        packedShops.size === small
          ? 'shared part'
          : packedShops.size === 0
            ? 'own parts'
            : `${packedShops.size} shared, ${small - packedShops.size} own`,
      lost,
      duplicated,
      audit:
        t.mismatches + t.orphans + t.undated === 0
          ? 'clean'
          : `${t.mismatches} mismatches, ${t.orphans} orphans`,
    });
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    expect(audit.mismatches).toEqual([]);
    expect(t).toMatchObject({ mismatches: 0, orphans: 0, undated: 0 });
  } finally {
    layer.fault = null;
  }
});

test('a shared part damaged between its commit and the delete: every packed hot copy stays, run after run; audit flags it', async () => {
  const { env, jobs, month, run } = await setUp();
  try {
    // Right after the shared.json commit lands, the shared part is overwritten with one byte flipped,
    // same size — before the same invocation's delete step HEADs it.
    let damaged = '';
    const match = sharedIndexWrite(1);
    const fault: Fault = {
      at: 'call',
      fired: 0,
      handle: async (c, send) => {
        const out = await send();
        if (fault.fired === 0 && match(c)) {
          fault.fired++;
          const [partKey] = await listKeys(env.s3, env.bucket, `job-details-cold/_shared/${month}/`);
          if (!partKey) throw new Error('no shared part after the commit');
          const bytes = await getBytes(env.s3, env.bucket, partKey);
          const at = bytes.length - 5; // in the last segment's last block's CRC-32
          bytes[at] = (bytes[at] ?? 0) ^ 0x55;
          await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: partKey, Body: bytes }));
          damaged = partKey;
        }
        return out;
      },
    };
    layer.fault = fault;
    const faulted = await run();
    layer.fault = null;
    expect(fault.fired).toBe(1);
    expect(faulted.status).toBe('FAILED');
    expect(faulted.unexpectedErrors).toEqual([]);
    const packed = jobs.filter((j) => j.shopId !== BIG_SHOP);
    const keep = async () => {
      for (const j of packed) expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual(j.keys);
    };
    await keep();
    // The big shop's own part is another part: its group went on.
    for (const j of jobs.filter((x) => x.shopId === BIG_SHOP))
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
    const shared = await readShared(env, month);
    for (const j of packed) {
      const e = shared?.views.get(j.shopId)?.jobs[j.jobId] ?? [];
      expect(e).toHaveLength(1);
      expect(e[0]?.deleted_at).toBeNull();
    }

    const audit = await auditCommand(
      cliContextFor(env),
      { maxHeads: 100, concurrency: 4, json: true },
      memoryOutput(),
    );
    expect(audit.mismatches).toEqual(
      SMALL_SHOPS.map(() => expect.objectContaining({ kind: 'damaged-part', key: damaged })),
    );
    expect(auditExitCode(audit)).not.toBe(0);
    // Its advice does not send the operator to reindex, which refuses packed shop-months.
    const printed = memoryOutput();
    await auditCommand(cliContextFor(env), { maxHeads: 100, concurrency: 4, json: false }, printed);
    const repair = printed.stdout.filter((l) => l.includes('repair:')).join('\n');
    expect(repair).toContain('none yet for a shared part');
    expect(repair).not.toContain('reindex --shop');

    // No run deletes a hot copy the damaged part holds: each fails its packed groups, loudly.
    const again = await run();
    env.advance(13 * HOUR);
    const later = await run().finally(() => env.advance(-13 * HOUR));
    for (const r of [again, later]) {
      expect(r.unexpectedErrors).toEqual([]);
      expect(r.status).toBe('FAILED');
    }
    await keep();
    matrix.push({
      name: 'shared part damaged between commit and delete',
      faulted: runStatus(faulted),
      reruns: `${runStatus(again)}, ${runStatus(later)}`,
      where: 'shared part (damaged)',
      lost: 0,
      duplicated: 0,
      audit: `damaged-part ×${audit.mismatches.length} (hot copies kept)`,
    });
  } finally {
    layer.fault = null;
  }
});
