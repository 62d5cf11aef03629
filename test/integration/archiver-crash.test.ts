import type { DeleteObjectsCommandInput } from '@aws-sdk/client-s3';
import { DeleteObjectCommand, DeleteObjectsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { COLD_PREFIX, type JobRecord, monthIndexKey, pendingPrefix } from '../../shared/archive/format';
import { ABANDONED_AFTER_MS } from '../../shared/archive/steps/archive/pending-gc';
import type { StagedPart } from '../../shared/archive/steps/archive/staged';
import { RUN_INCOMPLETE_ERROR } from '../../shared/archive/steps/report/run-incomplete';
import type { GroupDone, GroupFailed } from '../../shared/archive/steps/types';
import { jobPrefix } from '../../shared/details';
import {
  type ArchiverEnv,
  archiverEnv,
  getBytes,
  HOUR,
  hotState,
  inMonth,
  listKeys,
  memberAt,
  readIndex,
  runMachine,
  type SeededJob,
  seedTerminalJob,
  sha256,
  withDeleteObjects,
} from '../support/archiver-fixtures';

/**
 * A run can die at any point (Lambda timeout, Step Functions aborted, a throw). "Crash" here = the
 * ArchiveBatch invocation is killed at a stage of one group (runMachine's `crash`): its batch's child
 * fails, the run ends incomplete, and the rerun is a new execution of the synthesized machine. What
 * must hold after the rerun: every job is in the index exactly once (what readers see), its record
 * equals what the hot path held, and every hot source is deleted.
 */
jest.setTimeout(120_000);

type Hot = Awaited<ReturnType<typeof hotState>>;

const seedTwoGroups = async (env: ArchiverEnv) => {
  const jobs = [
    await seedTerminalJob(env, { shopId: 'shop-a', completedAt: inMonth(2, 3), status: 'FAILED' }),
    await seedTerminalJob(env, {
      shopId: 'shop-a',
      completedAt: inMonth(2, 4),
      status: 'CONFLICT',
      flushes: 3,
    }),
    await seedTerminalJob(env, { shopId: 'shop-b', completedAt: inMonth(2, 5), status: 'COMPLETED' }),
  ];
  const hot = new Map<string, Hot>();
  for (const j of jobs) hot.set(j.jobId, await hotState(env, j.jobId));
  return { jobs, hot };
};

/** Every job committed exactly once, its record intact, its hot objects gone. */
const expectConverged = async (env: ArchiverEnv, jobs: readonly SeededJob[], hot: Map<string, Hot>) => {
  for (const j of jobs) {
    const index = await readIndex(env, j.shopId, j.completedAt.slice(0, 7));
    const entries = index?.jobs[j.jobId] ?? [];
    expect(entries).toHaveLength(1);
    const e = entries[0];
    const part = index?.parts.find((p) => p.name === e?.part);
    if (!e || !part) throw new Error(`job ${j.jobId} is not committed`);
    expect(e.deleted_at).not.toBeNull();
    expect(e.completed_at).toBe(j.completedAt);
    expect((await getBytes(env.s3, env.bucket, part.key)).length).toBe(part.size); // index@3: name + size name a part
    const rec = (await memberAt(env, part.key, e, { type: 'job', jobId: j.jobId })).record as JobRecord;
    expect(rec.details).toEqual(hot.get(j.jobId)?.details);
    expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
  }
};

const onlyIndexParts = async (env: ArchiverEnv, shopId: string, month: string) =>
  (await readIndex(env, shopId, month))?.parts.map((p) => p.key) ?? [];

test.each([
  ['verify', 'part stored, its intent doc written, never verified'],
  ['commit', 'verified in memory, the index never written'],
] as const)(
  'a crash before %s (%s): the rerun converges, the dead part is collected once abandoned',
  async (step, _what) => {
    // One group a batch: the crash kills shop-a's batch alone; shop-b's goes through.
    const env = await archiverEnv({ batchGroups: 1 });
    const { jobs, hot } = await seedTwoGroups(env);
    const monthA = jobs[0]?.completedAt.slice(0, 7) ?? '';

    const crashed = await runMachine(env, { crash: { before: step, group: (g) => g.shopId === 'shop-a' } });
    expect(crashed.run).toMatchObject({ status: 'FAILED', error: { error: RUN_INCOMPLETE_ERROR } });
    expect(crashed.report).toMatchObject({ groupsFailedCount: 1, jobsArchived: 1 });
    const [deadPart, ...more] = await listKeys(env.s3, env.bucket, `${COLD_PREFIX}shop-a/`);
    expect(deadPart).toBeDefined();
    expect(more).toEqual([]); // Crash is retried by no Retry: one attempt, one dead part
    // Only the intent: the manifest and the verified part live in the invocation's memory.
    const staged = await listKeys(env.s3, env.bucket, pendingPrefix('shop-a', monthA));
    expect(staged).toHaveLength(1);
    expect(await readIndex(env, 'shop-a', monthA)).toBeNull(); // invisible to readers
    for (const j of jobs.filter((x) => x.shopId === 'shop-a'))
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual(j.keys); // nothing lost

    const rerun = await runMachine(env);
    expect(rerun.report).toMatchObject({ jobsArchived: 2, partsWritten: 1, groupsFailedCount: 0 });
    await expectConverged(env, jobs, hot);
    // The dead part is young: a concurrent run might still commit it, so it stays (outside the index).
    expect(await onlyIndexParts(env, 'shop-a', monthA)).not.toContain(deadPart);
    expect(await listKeys(env.s3, env.bucket, `${COLD_PREFIX}shop-a/`)).toContain(deadPart);

    // Once abandoned, a later run that plans the group removes it and its docs — never a committed part.
    const committed = await onlyIndexParts(env, 'shop-a', monthA);
    env.advance(ABANDONED_AFTER_MS + HOUR);
    const later = await runMachine(env);
    const groupA = later.steps.find((g) => g.group.shopId === 'shop-a');
    expect(groupA?.archive?.abandonedPartsRemoved).toBe(1);
    expect(await listKeys(env.s3, env.bucket, `${COLD_PREFIX}shop-a/`)).toEqual(committed);
    expect(await listKeys(env.s3, env.bucket, pendingPrefix('shop-a', monthA))).toEqual([]);
    await expectConverged(env, jobs, hot);
  },
);

test('a crash mid-delete (half the keys deleted, then the call dies): the rerun deletes the rest', async () => {
  const env = await archiverEnv();
  const { jobs, hot } = await seedTwoGroups(env);
  const dying = env.withDeps({
    s3: withDeleteObjects(env.s3, async (input: DeleteObjectsCommandInput, realSend) => {
      const objects = input.Delete?.Objects ?? [];
      const half = objects.slice(0, Math.ceil(objects.length / 2));
      await realSend(new DeleteObjectsCommand({ ...input, Delete: { ...input.Delete, Objects: half } }));
      throw new Error('simulated crash in the middle of DeleteObjects');
    }),
  });

  const first = await runMachine(env, { stageDeps: { delete: dying } });
  // The batch's one DeleteObjects call failed: the batch's child fails, both its groups count failed.
  expect(first.report).toMatchObject({ groupsOk: 0, groupsFailedCount: 2 });
  // Committed (readers see the archive) but no entry is marked deleted, and some hot objects remain.
  for (const j of jobs) {
    const e = (await readIndex(env, j.shopId, j.completedAt.slice(0, 7)))?.jobs[j.jobId];
    expect(e).toHaveLength(1);
    expect(e?.[0]?.deleted_at).toBeNull();
  }
  const left = (await Promise.all(jobs.map((j) => listKeys(env.s3, env.bucket, jobPrefix(j.jobId))))).flat();
  const all = jobs.flatMap((j) => j.keys);
  expect(left.length).toBeGreaterThan(0);
  expect(left.length).toBeLessThan(all.length);

  // The run that marks a job deleted counts every source of it now gone, including those the dead
  // run removed (it never marked them, so it counted none): each deletion is counted once, in all.
  const rerun = await runMachine(env);
  expect(rerun.report).toMatchObject({
    jobsArchived: 0,
    jobsSkipped: 3,
    partsWritten: 0,
    objectsDeleted: all.length,
  });
  expect(rerun.report?.jobsDeleted).toBe(3);
  await expectConverged(env, jobs, hot);
});

test('per-key DeleteObjects errors are retried, then reported; those jobs stay undeleted until a later run', async () => {
  const env = await archiverEnv();
  const { jobs, hot } = await seedTwoGroups(env);
  const stubborn = jobs[1] as SeededJob;
  const failing = stubborn.keys[0] as string;
  let attemptsOnFailing = 0;
  const flaky = env.withDeps({
    s3: withDeleteObjects(env.s3, async (input, realSend) => {
      const objects = input.Delete?.Objects ?? [];
      const rest = objects.filter((o) => o.Key !== failing);
      if (rest.length < objects.length) attemptsOnFailing++;
      if (rest.length > 0)
        await realSend(new DeleteObjectsCommand({ ...input, Delete: { ...input.Delete, Objects: rest } }));
      return {
        $metadata: {},
        Errors:
          rest.length < objects.length ? [{ Key: failing, Code: 'InternalError', Message: 'try again' }] : [],
      };
    }),
  });

  const first = await runMachine(env, { stageDeps: { delete: flaky } });
  expect(attemptsOnFailing).toBe(3);
  const group = first.results.find((r) => r.group.shopId === stubborn.shopId) as GroupDone;
  expect(group.delete).toMatchObject({ deleteErrorCount: 1, jobsCompleted: 1 });
  const steps = first.steps.find((g) => g.group.shopId === stubborn.shopId);
  expect(steps?.delete?.deleteErrors).toEqual([{ key: failing, code: 'InternalError' }]);
  expect(first.report?.deleteErrors).toBe(1);
  // The full list reaches report.json through the group's findings document.
  const full = JSON.parse((await getBytes(env.s3, env.bucket, first.report?.reportKey ?? '')).toString());
  expect(full.deleteErrorList).toEqual([
    {
      shopId: stubborn.shopId,
      month: stubborn.completedAt.slice(0, 7),
      key: failing,
      code: 'InternalError',
    },
  ]);
  const index = await readIndex(env, stubborn.shopId, stubborn.completedAt.slice(0, 7));
  expect(index?.jobs[stubborn.jobId]?.[0]?.deleted_at).toBeNull();
  expect(index?.jobs[(jobs[0] as SeededJob).jobId]?.[0]?.deleted_at).not.toBeNull();
  expect(await listKeys(env.s3, env.bucket, jobPrefix(stubborn.jobId))).toEqual([failing]);

  await runMachine(env);
  await expectConverged(env, jobs, hot);
});

const flipLastMember = async (env: ArchiverEnv, partKey: string) => {
  // Same length, one byte flipped in the last member: S3 gives it a new ETag.
  const bytes = await getBytes(env.s3, env.bucket, partKey);
  bytes[bytes.length - 12] = (bytes[bytes.length - 12] ?? 0) ^ 0xff;
  await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: partKey, Body: bytes }));
};

const alterManifestDigest = (staged: StagedPart) => {
  // The part is intact but the manifest (in the invocation's memory) expects another record digest.
  const jobs = staged.jobs as Record<string, { sha256: string }>;
  const first = Object.keys(jobs)[0] as string;
  (jobs[first] as { sha256: string }).sha256 = '0'.repeat(64);
};

test.each([
  ['its bytes changed after upload', /ETag .* is not the uploaded/],
  ['a record does not hash to its manifest digest', /record digest differs/],
] as const)(
  'a group whose part does not verify (%s) fails alone; nothing committed or deleted; the rerun converges',
  async (what, reason) => {
    const env = await archiverEnv();
    const { jobs, hot } = await seedTwoGroups(env);
    const monthA = jobs[0]?.completedAt.slice(0, 7) ?? '';
    const tampered = await runMachine(env, {
      hooks: {
        verify: async ({ group, archive, staged }) => {
          if (group.shopId !== 'shop-a' || !archive?.partKey || !staged) return;
          if (what.startsWith('its bytes')) await flipLastMember(env, archive.partKey);
          else alterManifestDigest(staged);
        },
      },
    });
    const failed = tampered.results.find((r) => r.group.shopId === 'shop-a') as GroupFailed;
    expect(failed).toMatchObject({ failed: true, error: 'VerificationError' });
    expect(tampered.report).toMatchObject({ groupsOk: 1, groupsFailedCount: 1, jobsArchived: 1 });
    expect(tampered.report?.groupsFailed[0]).toMatchObject({
      shopId: 'shop-a',
      month: monthA,
      error: 'VerificationError',
    });
    expect(tampered.report?.groupsFailed[0]?.cause).toMatch(/^verification of job-details-cold\/shop-a\//);
    expect(tampered.report?.groupsFailed[0]?.cause).toMatch(reason);
    expect(await readIndex(env, 'shop-a', monthA)).toBeNull();
    for (const j of jobs.filter((x) => x.shopId === 'shop-a')) {
      expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual(j.keys);
    }
    // The other group went through.
    const b = jobs[2] as SeededJob;
    expect(await listKeys(env.s3, env.bucket, jobPrefix(b.jobId))).toEqual([]);

    await runMachine(env);
    await expectConverged(env, jobs, hot);
  },
);

test('a lost month index never lets garbage collection delete committed parts', async () => {
  // Without its index a month's committed parts are indistinguishable from abandoned ones by
  // listing alone; only staging docs prove a part was never committed. Prefer keeping data.
  const env = await archiverEnv();
  const { jobs } = await seedTwoGroups(env);
  const monthA = jobs[0]?.completedAt.slice(0, 7) ?? '';
  await runMachine(env);
  const parts = await listKeys(env.s3, env.bucket, `${COLD_PREFIX}shop-a/`);
  expect(parts).toHaveLength(1);
  const digests = await Promise.all(parts.map(async (k) => sha256(await getBytes(env.s3, env.bucket, k))));

  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: monthIndexKey('shop-a', monthA) }));
  env.advance(ABANDONED_AFTER_MS + HOUR);
  const later = await runMachine(env);
  // The archiver refuses the month outright (LostIndexError → jobarchive reindex): no GC, no records.
  expect(later.report?.groupsFailed).toEqual([
    expect.objectContaining({ shopId: 'shop-a', error: 'LostIndexError' }),
  ]);
  expect(later.steps.find((g) => g.group.shopId === 'shop-a')?.archive).toBeUndefined();

  for (const [i, k] of parts.entries()) {
    expect(sha256(await getBytes(env.s3, env.bucket, k))).toBe(digests[i]);
  }
});
