import { gunzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { auditCommand } from '../../infra/cli/audit';
import { memoryOutput } from '../../infra/cli/output';
import { parseSqlOptions, sqlCommand } from '../../infra/cli/sql';
import {
  type PartRecord,
  parseSharedIndex,
  type SharedIndex,
  sharedIndexKey,
} from '../../shared/archive/format';
import { rebuildMonthIndex } from '../../shared/archive/reindex';
import { PackedShopMonthError } from '../../shared/errors';
import { getJob } from '../../shared/jobs';
import { JobDetailsReader } from '../../shared/reader';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  daysAgo,
  getBytes,
  hotState,
  listKeys,
  readIndex,
  runMachine,
  type SeededJob,
  seedTerminalJob,
  sharedLineShops,
} from '../support/archiver-fixtures';

/**
 * The long tail packed (docs/archive-format.md, "Shared parts"): small shop-months archived for the
 * first time share one part and one shared-index write per batch and month, are verified segment by
 * segment before any hot copy goes, read back in 4 requests with the month known, and later jobs of a
 * packed shop-month join it there. Real steps on the embedded stack (the synthesized state machine).
 */
jest.setTimeout(180_000);

const readShared = async (env: ArchiverEnv, month: string): Promise<SharedIndex> => {
  const key = sharedIndexKey(month);
  return parseSharedIndex(await getBytes(env.s3, env.bucket, key), key);
};

const seedShops = async (env: ArchiverEnv, shops: readonly string[], completedAt: Date) => {
  const jobs: SeededJob[] = [];
  for (const [i, shopId] of shops.entries()) {
    for (let n = 0; n <= i % 2; n++) {
      jobs.push(
        await seedTerminalJob(env, {
          shopId,
          completedAt: new Date(completedAt.getTime() + (i * 2 + n) * 60_000),
          platformData: { indexer: { shop: shopId } },
        }),
      );
    }
  }
  return jobs;
};

const readerQuery = async (env: ArchiverEnv, job: SeededJob) => {
  const row = await getJob(env.ddb, env.table, job.shopId, job.jobId, { consistentRead: true });
  if (!row?.completed_at) throw new Error('seeded job has no completion');
  return { shopId: job.shopId, jobId: job.jobId, completedAt: row.completed_at, createdAt: row.created_at };
};

describe('packed shop-months', () => {
  it('share one part and one shared index; each segment verified; read back in 4 requests', async () => {
    const env = await archiverEnv({ packBelowKb: 128 });
    const shops = ['pa.myshopify.com', 'pb.myshopify.com', 'pc.myshopify.com'];
    const at = daysAgo(45);
    const month = at.toISOString().slice(0, 7);
    const jobs = await seedShops(env, shops, at);
    const before = new Map(
      await Promise.all(jobs.map(async (j) => [j.jobId, await hotState(env, j.jobId)] as const)),
    );

    const run = await runMachine(env);
    expect(run.run.status).toBe('SUCCEEDED');
    expect(run.report).toMatchObject({ jobsArchived: jobs.length, groupsFailed: [] });
    expect(run.pages[0]?.planned.every((g) => g.pack === true)).toBe(true);
    // No index or intent of their own; one shared part, every hot copy gone.
    for (const shop of shops) {
      expect(await readIndex(env, shop, month)).toBeNull();
      expect(await listKeys(env.s3, env.bucket, `job-details-index/${shop}/`)).toEqual([]);
    }
    for (const j of jobs) expect(await listKeys(env.s3, env.bucket, `job-details/${j.jobId}/`)).toEqual([]);
    expect(await listKeys(env.s3, env.bucket, `job-details-index/_shared/${month}/`)).toEqual([
      sharedIndexKey(month),
    ]);
    const shared = await readShared(env, month);
    expect(shared.parts).toHaveLength(1);
    const part = shared.parts[0];
    if (!part) throw new Error('no shared part');
    expect(Object.keys(part.segments).sort()).toEqual(shops);
    const partKey = `job-details-cold/_shared/${month}/${part.name}`;
    expect(await listKeys(env.s3, env.bucket, `job-details-cold/`)).toEqual([partKey]);

    // `gzip -dc part` reads every segment in turn: a header per shop, then that shop's records only;
    // the blocks are cut across shops (shared-index@2), so these small shops share one block.
    const bytes = await getBytes(env.s3, env.bucket, partKey);
    expect(bytes.length).toBe(part.size);
    // One block of every shop's lines, then the filters member (every shop's document filters).
    expect(part.blocks).toEqual([part.size - (part.filters_bytes ?? 0)]);
    const lines = gunzipSync(bytes)
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as PartRecord);
    expect(lines.at(-1)?.type).toBe('doc_filters');
    const all = lines.slice(0, -1);
    const framed = new Map<string, PartRecord[]>();
    let current: PartRecord[] | undefined;
    for (const r of all) {
      if (r.type === 'part') {
        expect(framed.has(r.shop_id)).toBe(false);
        current = [];
        framed.set(r.shop_id, current);
      }
      current?.push(r);
    }
    expect([...framed.keys()].sort()).toEqual(shops);
    // Each job line names its segment's shop (SQL on Athena reads lines in no order); verify checked it.
    const named = await sharedLineShops(env);
    for (const shop of shops)
      expect(named[shop]?.sort()).toEqual(
        jobs
          .filter((j) => j.shopId === shop)
          .map((j) => j.jobId)
          .sort(),
      );
    for (const shop of shops) {
      const [offset, length] = part.segments[shop] ?? [0, 0];
      const lines = framed.get(shop) ?? [];
      expect(lines[0]).toMatchObject({ type: 'part', shop_id: shop, month });
      const ids = lines.flatMap((r) => (r.type === 'job' ? [r.job_id] : []));
      expect(ids.sort()).toEqual(
        jobs
          .filter((j) => j.shopId === shop)
          .map((j) => j.jobId)
          .sort(),
      );
      // Every entry of the shop's view is marked deleted and lies inside its segment.
      const view = shared.views.get(shop);
      for (const id of ids) {
        const e = view?.jobs[id]?.[0];
        expect(e?.deleted_at).not.toBeNull();
        expect(e && e.offset >= offset && e.offset + e.length <= offset + length).toBe(true);
      }
    }

    // The reader: hot List (empty), own index (404) → shared index → block: 4 requests with the month
    // known (the hot prefix is always listed: a flush written after archival is read, issue 31).
    const reader = new JobDetailsReader(env.s3, env.bucket);
    for (const j of jobs) {
      const q = await readerQuery(env, j);
      const got = await reader.readAllDetails(q);
      expect(got.details).toEqual(before.get(j.jobId)?.details);
      expect(got.provenance.source).toBe('archive');
      if (q.createdAt.slice(0, 7) === q.completedAt.slice(0, 7)) expect(got.provenance.requests).toBe(4);
      const pd = await reader.readPlatformData(q);
      expect(pd.data).toEqual({ indexer: { shop: j.shopId } });
    }
    const first = jobs[0] as SeededJob;
    // Find-by-document reads the shop's view of the shared index and only its own blocks.
    const second = jobs[1] as SeededJob;
    const docOf = `${second.shopId}-0-doc-0a`;
    const hits = await reader.findDocument({ shopId: second.shopId, docId: docOf });
    expect(hits.jobs.map((h) => h.jobId).sort()).toEqual(
      jobs
        .filter((j) => j.shopId === second.shopId)
        .map((j) => j.jobId)
        .sort(),
    );
    const none = await reader.findDocument({ shopId: jobs[0]?.shopId ?? '', docId: docOf });
    expect(none.jobs).toEqual([]);
    // audit reads each shop's view as its shop-month's index: every job archived, the shared part
    // committed, nothing amiss.
    const audit = await auditCommand(
      cliContextFor(env),
      { maxHeads: 10, concurrency: 4, json: true },
      memoryOutput(),
    );
    expect(audit.mismatches).toEqual([]);
    expect(audit.totals).toMatchObject({ archivedJobs: jobs.length, hotJobs: 0, orphans: 0 });
    // reindex never writes an index of its own for a packed shop-month (it would hide the shared view).
    await expect(
      rebuildMonthIndex({ s3: env.s3, bucket: env.bucket, clock: () => new Date() }, first.shopId, month, {
        dryRun: false,
        force: false,
      }),
    ).rejects.toThrow(PackedShopMonthError);
    expect(await readIndex(env, first.shopId, month)).toBeNull();
    // Month unknown (the row expired): the shop's prefix and the shared months are searched.
    const expired = await reader.lookup({ shopId: first.shopId, jobId: first.jobId });
    expect(expired).toMatchObject({ details: before.get(first.jobId)?.details, detailsSource: 'archive' });
    // SQL (the local engine): each packed job is a row of its own shop, never of `_shared`.
    const io = memoryOutput();
    const q = await sqlCommand(
      cliContextFor(env),
      parseSqlOptions({ json: true, _: ['SELECT shop_id, job_id FROM jobs ORDER BY shop_id, job_id'] }),
      io,
    );
    expect(q?.rows).toEqual(
      jobs
        .map((j) => ({ shop_id: j.shopId, job_id: j.jobId }))
        .sort((a, b) => `${a.shop_id} ${a.job_id}`.localeCompare(`${b.shop_id} ${b.job_id}`)),
    );
  });

  it('a later job of a packed shop-month joins its shared index; a damaged shared part keeps every hot copy', async () => {
    const env = await archiverEnv({ packBelowKb: 128 });
    const at = daysAgo(45);
    const month = at.toISOString().slice(0, 7);
    const [a] = await seedShops(env, ['qa.myshopify.com'], at);
    expect((await runMachine(env)).report).toMatchObject({ jobsArchived: 1 });

    // Archived before (the watermark is forgotten, the bucket holds indexes): not fresh, yet packed
    // because its shop-month is; its part is damaged after the commit — delete's HEAD refuses it.
    const late = await seedTerminalJob(env, {
      shopId: 'qa.myshopify.com',
      completedAt: new Date(at.getTime() + 3_600_000),
    });
    const damaged = await runMachine(env, {
      hooks: {
        delete: async () => {
          const s = await readShared(env, month);
          const newest = s.parts[s.parts.length - 1];
          if (!newest) throw new Error('no shared part');
          const key = `job-details-cold/_shared/${month}/${newest.name}`;
          const body = await getBytes(env.s3, env.bucket, key);
          body[body.length - 1] = (body[body.length - 1] ?? 0) ^ 0xff;
          await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: body }));
        },
      },
    });
    expect(damaged.pages[0]?.planned).toEqual([expect.objectContaining({ pack: 'if-packed' })]);
    expect(damaged.report?.groupsFailed).toEqual([
      expect.objectContaining({
        error: 'VerificationError',
        cause: expect.stringContaining('rewritten after its commit'),
      }),
    ]);
    expect(await listKeys(env.s3, env.bucket, `job-details/${late.jobId}/`)).toEqual(late.keys);
    expect(await readIndex(env, 'qa.myshopify.com', month)).toBeNull();
    const s = await readShared(env, month);
    expect(s.parts).toHaveLength(2);
    const view = s.views.get('qa.myshopify.com');
    expect(Object.keys(view?.jobs ?? {}).sort()).toEqual([a?.jobId, late.jobId].sort());
    expect(view?.jobs[late.jobId]?.[0]?.deleted_at).toBeNull();
  });

  it('a crash before the shared commit leaves every hot copy; the next run archives them', async () => {
    const env = await archiverEnv({ packBelowKb: 128 });
    const at = daysAgo(45);
    const month = at.toISOString().slice(0, 7);
    const jobs = await seedShops(env, ['ra.myshopify.com', 'rb.myshopify.com'], at);
    const crashed = await runMachine(env, { crash: { before: 'commit' } });
    expect(crashed.run.status).not.toBe('SUCCEEDED');
    // Intent before effect: the uploaded shared part has its intent; nothing is committed or deleted.
    // The month's shared index was created (empty) before the intent, so pending GC can collect them.
    const staged = await listKeys(env.s3, env.bucket, `job-details-index/_shared/${month}/`);
    expect(staged).toHaveLength(2);
    expect(staged[0]).toMatch(/\/pending\/part-.*\.json$/);
    expect(staged[1]).toBe(sharedIndexKey(month));
    expect((await readShared(env, month)).parts).toEqual([]);
    for (const j of jobs)
      expect(await listKeys(env.s3, env.bucket, `job-details/${j.jobId}/`)).toEqual(j.keys);

    // The next run (no watermark, and the bucket's index prefix holds the intent) cannot tell the
    // month is new: its shops are in no shared index, so each gets a part and index of its own —
    // never split between the two.
    const next = await runMachine(env);
    expect(next.report).toMatchObject({ jobsArchived: jobs.length, groupsFailed: [] });
    expect(next.pages[0]?.planned.map((g) => g.pack)).toEqual(['if-packed', 'if-packed']);
    for (const shop of ['ra.myshopify.com', 'rb.myshopify.com'])
      expect(Object.keys((await readIndex(env, shop, month))?.jobs ?? {})).not.toEqual([]);
    for (const j of jobs) expect(await listKeys(env.s3, env.bucket, `job-details/${j.jobId}/`)).toEqual([]);
    const reader = new JobDetailsReader(env.s3, env.bucket);
    for (const j of jobs) {
      const got = await reader.readAllDetails(await readerQuery(env, j));
      expect(got.provenance.source).toBe('archive');
    }
  });

  it('one segment failing verify: nothing of the shared part is committed, so no shop is left unindexed in it', async () => {
    const env = await archiverEnv({ packBelowKb: 128 });
    const at = daysAgo(45);
    const month = at.toISOString().slice(0, 7);
    const shops = ['va.myshopify.com', 'vb.myshopify.com', 'vc.myshopify.com'];
    const jobs = await seedShops(env, shops, at);
    const failed = await runMachine(env, {
      hooks: {
        verify: async (s) => {
          if (s.group.shopId === 'vb.myshopify.com') throw new Error('injected: segment does not verify');
        },
      },
    });
    expect(failed.run.status).toBe('FAILED');
    // Every group of the part failed (and is retried); the part is gone, nothing names it.
    expect(failed.report?.groupsFailedCount).toBe(shops.length);
    expect((await readShared(env, month)).parts).toEqual([]);
    expect(await listKeys(env.s3, env.bucket, 'job-details-cold/')).toEqual([]);
    for (const j of jobs)
      expect(await listKeys(env.s3, env.bucket, `job-details/${j.jobId}/`)).toEqual(j.keys);
    // The next run archives them all.
    const next = await runMachine(env);
    expect(next.report).toMatchObject({ jobsArchived: jobs.length, groupsFailed: [] });
    for (const j of jobs) expect(await listKeys(env.s3, env.bucket, `job-details/${j.jobId}/`)).toEqual([]);
  });
});
