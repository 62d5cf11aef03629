import { gzipSync } from 'node:zlib';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { memoryOutput } from '../../infra/cli/output';
import { reindexCommand } from '../../infra/cli/reindex';
import {
  type IndexedJob,
  type MonthIndex,
  monthIndexKey,
  parseMonthIndex,
  partKey,
  pendingPrefix,
  serializeMonthIndex,
} from '../../shared/archive/format';
import { rebuildMonthIndex } from '../../shared/archive/reindex';
import { RUN_INCOMPLETE_ERROR } from '../../shared/archive/steps/report/run-incomplete';
import { jobPrefix } from '../../shared/details';
import { IndexExistsError } from '../../shared/errors';
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
  monthOfDate,
  readIndex,
  readStoredIndex,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Rebuilding a lost or corrupt month index from the group's parts (shared/archive/reindex.ts) on
 * parts written by the real archiver steps.
 */
jest.setTimeout(120_000);

const SHOP = 'reindex-shop.myshopify.com';
const MONTH = monthOfDate(inMonth(2, 1));

const depsOf = (env: ArchiverEnv) => ({ s3: env.s3, bucket: env.bucket, clock: env.deps.clock });

const dropIndex = (env: ArchiverEnv) =>
  env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: monthIndexKey(SHOP, MONTH) }));

/** What must survive a rebuild: everything but the commit and deletion state (times, dropped manifests). */
const comparable = (index: MonthIndex) => ({
  // A settled part's delete (when, by which run) is deletion state too: the rebuild's own.
  parts: index.parts.map(({ committed_at: _c, settled, ...p }) => {
    if (!settled) return p;
    const { deleted_at: _d, deleted_by: _by, ...summary } = settled;
    return { ...p, settled: summary };
  }),
  jobs: Object.fromEntries(
    Object.entries(index.jobs).map(([id, list]) => [
      id,
      // A rebuilt entry is undeleted and carries its manifest again (the next run re-checks and deletes);
      // which run deleted what is not in the parts.
      list.map(
        ({
          committed_at: _c,
          deleted_at: _d,
          sources: _s,
          deleted_by: _by,
          objects_deleted: _n,
          ...e
        }: IndexedJob) => e,
      ),
    ]),
  ),
});

describe('rebuildMonthIndex', () => {
  it('rebuilds the same parts and entries after two runs; the reader reads every job from it', async () => {
    const env = await archiverEnv({ graceHours: 0 });
    const first = [
      await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3), status: 'FAILED' }),
      await seedTerminalJob(env, {
        shopId: SHOP,
        completedAt: inMonth(2, 4),
        status: 'CONFLICT',
        platformData: null,
      }),
    ];
    const hot = new Map<string, Awaited<ReturnType<typeof hotState>>>();
    for (const j of first) hot.set(j.jobId, await hotState(env, j.jobId));
    expect((await runMachine(env)).report?.jobsArchived).toBe(2);

    env.advance(HOUR);
    const second = [
      await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 5), status: 'COMPLETED' }),
      await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 6), flushes: 3 }),
    ];
    for (const j of second) hot.set(j.jobId, await hotState(env, j.jobId));
    expect((await runMachine(env)).report?.jobsArchived).toBe(2);

    const original = await readIndex(env, SHOP, MONTH);
    if (!original) throw new Error('no index after two runs');
    expect(original.parts).toHaveLength(2);
    await dropIndex(env);

    const rebuilt = await rebuildMonthIndex(depsOf(env), SHOP, MONTH, { dryRun: false });
    expect(rebuilt.written).toBe(true);
    expect(rebuilt.existing).toBeNull();
    expect(rebuilt.partsExcluded).toEqual([]);
    expect(rebuilt.partsIncluded.map((p) => p.name)).toEqual(original.parts.map((p) => p.name));
    // What is stored is the stored form of the rebuilt index (no digests, no platform refs).
    expect(await readStoredIndex(env, SHOP, MONTH)).toEqual(
      parseMonthIndex(serializeMonthIndex(rebuilt.index), 'k'),
    );
    // Every job's hot prefix is empty (grace 0): each rebuilt part settles, as the delete step left it —
    // its summary stored, no entry; its jobs read back from its records are the original's.
    expect(rebuilt.index.jobs).toEqual({});
    expect(rebuilt.index.parts.every((p) => p.settled !== undefined)).toBe(true);
    const stored = await readIndex(env, SHOP, MONTH);
    if (!stored) throw new Error('rebuilt index not stored');
    expect(comparable(stored)).toEqual(comparable(original));
    // Parts (and so `comparable`) name their document filters member: found in the parts, the same.
    expect(original.parts.every((p) => (p.filters?.length ?? 0) > 0)).toBe(true);

    // Hot objects are gone (grace 0): the reader finds every job through the rebuilt index alone.
    const reader = new JobDetailsReader(env.s3, env.bucket);
    for (const j of [...first, ...second]) {
      const got = await reader.readAllDetails({ shopId: SHOP, jobId: j.jobId, completedAt: j.completedAt });
      expect(got.provenance.source).toBe('archive');
      expect(got.details).toEqual(hot.get(j.jobId)?.details);
    }
  });

  it('leaves out parts with a staging manifest and parts that do not decode, and deletes nothing', async () => {
    const env = await archiverEnv({ graceHours: 0 });
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3) });
    await runMachine(env);
    env.advance(HOUR);
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 4) });
    const crashed = await runMachine(env, { crash: { before: 'verify' } });
    expect(crashed.run.error?.error).toBe(RUN_INCOMPLETE_ERROR);
    const uncommitted = crashed.steps.at(-1)?.archive?.partKey;
    if (!uncommitted) throw new Error('the crashed run wrote no part');
    const garbage = partKey(SHOP, MONTH, 'part-20000101T000000Z-garbage0.jsonl.gz');
    await env.s3.send(
      new PutObjectCommand({ Bucket: env.bucket, Key: garbage, Body: gzipSync(Buffer.from('not json\n')) }),
    );
    const committed = (await readIndex(env, SHOP, MONTH))?.parts.map((p) => p.key);
    await dropIndex(env);
    const before = await listKeys(env.s3, env.bucket, '');

    const r = await rebuildMonthIndex(depsOf(env), SHOP, MONTH, { dryRun: false });
    expect(r.partsIncluded.map((p) => p.key)).toEqual(committed);
    expect(r.partsExcluded).toEqual([
      { key: garbage, reason: expect.stringMatching(/^unreadable: /) },
      { key: uncommitted, reason: 'has a pending staging doc: never committed' },
    ]);
    // The included part's job has no hot object left: the part settles (its summary, no entry).
    expect(r.index.jobs).toEqual({});
    expect(r.partsIncluded.map((p) => [p.job_count, p.settled !== undefined])).toEqual([[1, true]]);
    // Only the index was added; staging docs and both left-out parts are still there.
    expect(await listKeys(env.s3, env.bucket, '')).toEqual([...before, monthIndexKey(SHOP, MONTH)].sort());
    expect((await listKeys(env.s3, env.bucket, pendingPrefix(SHOP, MONTH))).length).toBeGreaterThan(0);
  });

  it('a part whose job has a hot object again keeps its entry undeleted (not settled); the others settle', async () => {
    const env = await archiverEnv({ graceHours: 0 });
    const kept = await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3) });
    await runMachine(env);
    env.advance(HOUR);
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 4) });
    await runMachine(env);
    const original = await readStoredIndex(env, SHOP, MONTH);
    expect(original?.parts.map((p) => p.settled !== undefined)).toEqual([true, true]);
    // An object written into the first job's prefix after its delete (a late flush).
    await env.s3.send(
      new PutObjectCommand({ Bucket: env.bucket, Key: `${jobPrefix(kept.jobId)}late.json.gz`, Body: 'x' }),
    );
    await dropIndex(env);

    const r = await rebuildMonthIndex(depsOf(env), SHOP, MONTH, { dryRun: false });
    expect(r.index.parts.map((p) => p.settled !== undefined)).toEqual([false, true]);
    expect(Object.keys(r.index.jobs)).toEqual([kept.jobId]);
    expect(r.index.jobs[kept.jobId]?.map((e) => e.deleted_at)).toEqual([null]);
    const io = memoryOutput();
    await reindexCommand(
      cliContextFor(env),
      { shopId: SHOP, month: MONTH, dryRun: true, force: true, json: false },
      io,
    );
    expect(io.stdout[0]).toBe(`dry run: would rebuild index of ${SHOP} ${MONTH}: 2 parts, 2 jobs`);
  });

  it('refuses to replace an existing index without force; with force replaces a corrupt one', async () => {
    const env = await archiverEnv({ graceHours: 0 });
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3) });
    await runMachine(env);
    const key = monthIndexKey(SHOP, MONTH);
    const good = await readIndex(env, SHOP, MONTH);
    await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: '{"format":"trunc' }));

    await expect(rebuildMonthIndex(depsOf(env), SHOP, MONTH, { dryRun: false })).rejects.toBeInstanceOf(
      IndexExistsError,
    );
    expect((await getBytes(env.s3, env.bucket, key)).toString()).toBe('{"format":"trunc');

    const r = await rebuildMonthIndex(depsOf(env), SHOP, MONTH, { dryRun: false, force: true });
    expect(r.existing).toMatchObject({ readable: false });
    expect(r.written).toBe(true);
    const stored = await readIndex(env, SHOP, MONTH);
    if (!stored || !good) throw new Error('index missing');
    expect(comparable(stored)).toEqual(comparable(good));
  });

  it('a dry run writes nothing; the CLI prints the parts', async () => {
    const env = await archiverEnv({ graceHours: 0 });
    await seedTerminalJob(env, { shopId: SHOP, completedAt: inMonth(2, 3) });
    await runMachine(env);
    await dropIndex(env);
    const before = await listKeys(env.s3, env.bucket, '');

    const r = await rebuildMonthIndex(depsOf(env), SHOP, MONTH, { dryRun: true });
    expect(r.written).toBe(false);
    expect(r.partsIncluded).toHaveLength(1);
    expect(await listKeys(env.s3, env.bucket, '')).toEqual(before);

    const ctx = cliContextFor(env);
    const io = memoryOutput();
    await reindexCommand(ctx, { shopId: SHOP, month: MONTH, dryRun: true, force: false, json: false }, io);
    expect(io.stdout[0]).toBe(`dry run: would rebuild index of ${SHOP} ${MONTH}: 1 parts, 1 jobs`);
    expect(io.stdout.join('\n')).toContain(r.partsIncluded[0]?.key);
    expect(await listKeys(env.s3, env.bucket, '')).toEqual(before);
  });
});
