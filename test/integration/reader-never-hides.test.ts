import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { makeContext } from '../../infra/cli/context';
import { lookupCommand } from '../../infra/cli/lookup';
import { memoryOutput } from '../../infra/cli/output';
import { searchCommand } from '../../infra/cli/search';
import { monthIndexKey, partWrittenAt } from '../../shared/archive/format';
import { rebuildMonthIndex } from '../../shared/archive/reindex';
import { parseConfig } from '../../shared/config';
import { ArchiveExpiredError, CorruptObjectError } from '../../shared/errors';
import { getJob } from '../../shared/jobs';
import { JobDetailsReader } from '../../shared/reader';
import { retentionDays } from '../../shared/settings';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  DAY,
  hotState,
  inMonth,
  listKeys,
  readStoredIndex,
  retryJob,
  runMachine,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Issue 31, readers (cases 4–7): whatever exists for a job is in its lookup, or the lookup says why
 * not in `provenance.warnings` or in an error naming the repair — never "none", never a whole failure
 * for one missing archival; the same for `search` and `audit`. Jobs archived by the synthesized state
 * machine on the embedded stack. s3rver has no lifecycle: a part "expired by retention" is deleted
 * here as the rule would, and the readers' clock is put past its horizon.
 */
jest.setTimeout(240_000);

const queryOf = async (env: ArchiverEnv, job: SeededJob) => {
  const row = await getJob(env.ddb, env.table, job.shopId, job.jobId, { consistentRead: true });
  if (!row?.completed_at) throw new Error('seeded job has no completion');
  return { shopId: job.shopId, jobId: job.jobId, completedAt: row.completed_at, createdAt: row.created_at };
};

const partsOf = async (env: ArchiverEnv, shopOrShared: string, month: string) =>
  listKeys(env.s3, env.bucket, `job-details-cold/${shopOrShared}/${month}/`);

const audit = async (env: ArchiverEnv) => {
  const io = memoryOutput();
  const r = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: false, deep: false },
    io,
  );
  return { r, exit: auditExitCode(r), text: io.stdout.join('\n') };
};

/** The CLI's context with the deployment's retention and its clock pinned. */
const cliAt = (env: ArchiverEnv, retentionMonths: number, now: Date) =>
  makeContext({
    ddb: env.ddb,
    s3: env.s3,
    table: env.table,
    bucket: env.bucket,
    cfg: { ...parseConfig(process.env), retentionMonths },
    now: () => now,
  });

test('case 4: a flush written after its job was archived into a shared part (hot copies deleted) is read with the archive and named', async () => {
  const env = await archiverEnv({ packBelowKb: 64 });
  const completed = inMonth(2, 12);
  const job = await seedTerminalJob(env, { shopId: 'late-flush-shop', completedAt: completed });
  await seedTerminalJob(env, { shopId: 'late-flush-other', completedAt: completed });
  const before = await hotState(env, job.jobId);
  expect((await runMachine(env)).report?.jobsArchived).toBe(2);
  const month = job.completedAt.slice(0, 7);
  expect(await partsOf(env, '_shared', month)).toHaveLength(1); // packed: the job is in a shared part
  expect(await listKeys(env.s3, env.bucket, `job-details/${job.jobId}/`)).toEqual([]);

  // A late flush: a new object under the job's prefix, the row (and its completion) unchanged.
  const late = await env.store.writeFlush(job.shopId, job.jobId, 'latelatelatelate', {
    chunk_ids: ['late'],
    failed: { late_reason: ['late-doc-1'] },
    skipped: {},
    conflict: {},
  });
  const q = await queryOf(env, job);
  expect(q.completedAt).toBe(job.completedAt);
  const reader = new JobDetailsReader(env.s3, env.bucket);

  const look = await reader.lookup(q);
  expect(look.detailsSource).toBe('both');
  expect(look.details?.chunk_ids).toEqual([...(before.details?.chunk_ids ?? []), 'late'].sort());
  expect(look.details?.failed.late_reason).toEqual(['late-doc-1']);
  for (const [reason, docs] of Object.entries(before.details?.failed ?? {}))
    expect(look.details?.failed[reason]).toEqual(docs);
  expect(look.hotKeys).toEqual([late.key]);
  expect(look.archivals).toHaveLength(1);
  expect(look.provenance.warnings).toEqual([expect.stringContaining(late.key)]);
  expect(look.provenance.warnings[0]).toMatch(/written after that archival/);
  // 1 List of the hot prefix + 1 GET of the late flush, the packed month's own index (404) and shared
  // index, 1 ranged GET of the member.
  expect(look.provenance.requests).toBe(1 + 1 + 2 + 1);

  const all = await reader.readAllDetails(q);
  expect(all.details).toEqual(look.details);
  expect(all.provenance.source).toBe('both');
});

test('case 5: a lost month index with its part intact is an error naming `jobarchive reindex`, never "none"; search and audit say so too', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'lost-index-shop', completedAt: inMonth(2, 14) });
  const want = await hotState(env, job.jobId);
  expect((await runMachine(env)).report?.jobsArchived).toBe(1);
  const month = job.completedAt.slice(0, 7);
  const q = await queryOf(env, job);
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: monthIndexKey(job.shopId, month) }));
  expect(await partsOf(env, job.shopId, month)).toHaveLength(1);
  const repair = `jobarchive reindex --shop ${job.shopId} --month ${month}`;
  const reader = new JobDetailsReader(env.s3, env.bucket);

  // Month known (the row's completion) and unknown (the row expired: a search of the shop's months).
  for (const query of [q, { shopId: job.shopId, jobId: job.jobId }]) {
    const read = reader.lookup(query);
    await expect(read).rejects.toBeInstanceOf(CorruptObjectError);
    await expect(read).rejects.toThrow(repair);
    await expect(reader.readAllDetails(query)).rejects.toThrow(repair);
  }
  // The CLI: no "details: from none" with exit 0 — the error, naming the repair.
  await expect(
    lookupCommand(
      cliContextFor(env),
      { shopId: job.shopId, jobId: job.jobId, searchMonths: 24, json: true },
      memoryOutput(),
    ),
  ).rejects.toThrow(repair);

  // Search: the month was not searched, and the result says so (exit 1 from the command).
  const doc = want.details?.failed.timeout?.[0];
  if (typeof doc !== 'string') throw new Error('seeded job lists no document');
  const io = memoryOutput();
  const found = await searchCommand(cliContextFor(env), { shopId: job.shopId, docId: doc, json: false }, io);
  expect(found.jobs).toEqual([]);
  expect(found.provenance.warnings).toEqual([expect.stringContaining(repair)]);
  expect(io.stderr.join('\n')).toContain(repair);
  expect(io.stdout.join('\n')).toMatch(/incomplete/);

  // Audit: a month with parts and no index is a finding (exit non-zero), with the same repair.
  const a = await audit(env);
  expect(a.r.mismatches).toEqual([
    expect.objectContaining({ kind: 'lost-index', shopId: job.shopId, month }),
  ]);
  expect(a.text).toContain(repair);
  expect(a.exit).not.toBe(0);

  // The repair it names brings everything back.
  await rebuildMonthIndex(env.deps, job.shopId, month, { dryRun: false });
  const back = await reader.lookup(q);
  expect(back).toMatchObject({ details: want.details, detailsSource: 'archive' });
  expect(back.provenance.warnings).toEqual([]);
  const again = await searchCommand(
    cliContextFor(env),
    { shopId: job.shopId, docId: doc, json: true },
    memoryOutput(),
  );
  expect(again.jobs.map((j) => j.jobId)).toEqual([job.jobId]);
  expect(again.provenance.warnings).toEqual([]);
});

test('case 5, packed: a lost shared index with its shared part intact is an error naming it, never "none"; search and audit say so', async () => {
  const env = await archiverEnv({ packBelowKb: 64 });
  const completed = inMonth(2, 15);
  const job = await seedTerminalJob(env, { shopId: 'lost-shared-shop', completedAt: completed });
  await seedTerminalJob(env, { shopId: 'lost-shared-other', completedAt: completed });
  const want = await hotState(env, job.jobId);
  expect((await runMachine(env)).report?.jobsArchived).toBe(2);
  const month = job.completedAt.slice(0, 7);
  expect(await partsOf(env, '_shared', month)).toHaveLength(1);
  const sharedKey = `job-details-index/_shared/${month}/shared.json`;
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: sharedKey }));
  const reader = new JobDetailsReader(env.s3, env.bucket);

  for (const query of [await queryOf(env, job), { shopId: job.shopId, jobId: job.jobId }]) {
    const read = reader.lookup(query);
    await expect(read).rejects.toBeInstanceOf(CorruptObjectError);
    await expect(read).rejects.toThrow(`${sharedKey}: shared index is missing`);
    // The platform data too: it reads the indexes itself, never "none" for the packed archival.
    const pd = reader.readPlatformData(query);
    await expect(pd).rejects.toBeInstanceOf(CorruptObjectError);
    await expect(pd).rejects.toThrow(`${sharedKey}: shared index is missing`);
  }
  const doc = want.details?.failed.timeout?.[0];
  if (typeof doc !== 'string') throw new Error('seeded job lists no document');
  const found = await searchCommand(
    cliContextFor(env),
    { shopId: job.shopId, docId: doc, json: true },
    memoryOutput(),
  );
  expect(found.jobs).toEqual([]);
  expect(found.provenance.warnings).toEqual([
    expect.stringContaining(`${sharedKey}: shared index is missing`),
  ]);

  const a = await audit(env);
  expect(a.r.mismatches).toEqual([expect.objectContaining({ kind: 'lost-index', shopId: '_shared', month })]);
  expect(a.exit).not.toBe(0);
  // Not a repair that cannot run (reindex refuses `_shared`): what to do instead.
  expect(a.text).not.toContain('reindex --shop _shared');
  expect(a.text).toContain(`restore ${sharedKey}`);
});

test('case 6: a redriven job archived in two months, the older part gone: the newer archival is returned and the missing one named', async () => {
  const env = await archiverEnv();
  const shopId = 'redriven-shop';
  const job = await seedTerminalJob(env, { shopId, completedAt: inMonth(4, 10) });
  const first = await hotState(env, job.jobId);
  expect((await runMachine(env)).report?.jobsArchived).toBe(1);
  const firstMonth = job.completedAt.slice(0, 7);
  const [oldPart] = await partsOf(env, shopId, firstMonth);
  if (!oldPart) throw new Error('no part for the first archival');

  await retryJob(env, job, inMonth(2, 10));
  expect((await runMachine(env)).report?.jobsArchived).toBe(1);
  const q = await queryOf(env, job);
  const reader = new JobDetailsReader(env.s3, env.bucket);
  const full = await reader.lookup(q);
  expect(full.archivals.map((a) => a.month)).toEqual([firstMonth, job.completedAt.slice(0, 7)]);

  // The first archival's part is gone (as retention removes the oldest parts first).
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: oldPart }));
  const look = await reader.lookup(q);
  expect(look.details?.failed.retry).toEqual([`${job.jobId}-r`]);
  expect(look.details?.chunk_ids).toEqual(['timeout']);
  for (const doc of first.details?.failed.timeout ?? [])
    expect(look.details?.failed.timeout ?? []).not.toContain(doc);
  // The first archival's part had settled (its entry left the index when its sources were deleted):
  // the index says only that the part may hold the job, so the part is named, not listed as an archival.
  expect(look.archivals.map((a) => a.month)).toEqual([job.completedAt.slice(0, 7)]);
  expect(look.detailsSource).toBe('archive');
  expect(look.provenance.warnings).toEqual([expect.stringContaining(oldPart)]);
  expect(look.provenance.warnings[0]).toMatch(/does not exist/);
  // Without the row's months (a search) the same holds.
  const searched = await reader.lookup({ shopId, jobId: job.jobId });
  expect(searched.details).toEqual(look.details);
  expect(searched.provenance.warnings).toEqual(look.provenance.warnings);
  expect((await reader.readAllDetails(q)).provenance.warnings).toEqual(look.provenance.warnings);

  // Search: a document of the lost archival is not found, and the missing part is named; one of the
  // newer archival is found — the search does not fail as a whole.
  const search = (docId: string) =>
    searchCommand(cliContextFor(env), { shopId, docId, json: true }, memoryOutput());
  const lostDoc = first.details?.failed.timeout?.[0];
  if (typeof lostDoc !== 'string') throw new Error('seeded job lists no document');
  const gone = await search(lostDoc);
  expect(gone.jobs).toEqual([]);
  expect(gone.provenance.warnings).toEqual([expect.stringContaining(oldPart)]);
  const kept = await search(`${job.jobId}-r`);
  expect(kept.jobs.map((j) => [j.jobId, j.month])).toEqual([[job.jobId, job.completedAt.slice(0, 7)]]);
});

test('case 7: past the retention horizon a part is expired for the CLI as for the library, present or not; search says so', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'expired-shop', completedAt: inMonth(2, 16) });
  const want = await hotState(env, job.jobId);
  expect((await runMachine(env)).report?.jobsArchived).toBe(1);
  const month = job.completedAt.slice(0, 7);
  const [part] = await partsOf(env, job.shopId, month);
  const written = part ? partWrittenAt(part) : null;
  if (!part || !written) throw new Error('no dated part written');
  const past = new Date(written.getTime() + (retentionDays(12) + 1) * DAY);
  const within = new Date(written.getTime() + 30 * DAY);
  const lookup = (now: Date) =>
    lookupCommand(
      cliAt(env, 12, now),
      { shopId: job.shopId, jobId: job.jobId, searchMonths: 24, json: true },
      memoryOutput(),
    );
  const doc = want.details?.failed.timeout?.[0];
  if (typeof doc !== 'string') throw new Error('seeded job lists no document');
  const search = (now: Date) =>
    searchCommand(cliAt(env, 12, now), { shopId: job.shopId, docId: doc, json: true }, memoryOutput());

  // Within the horizon: served.
  expect((await lookup(within)).result.lookup).toMatchObject({
    details: want.details,
    detailsSource: 'archive',
  });
  expect((await search(within)).jobs.map((j) => j.jobId)).toEqual([job.jobId]);

  // Past it, still present (S3 runs lifecycle rules lazily): not served — expired, not "none".
  const present = lookup(past);
  await expect(present).rejects.toBeInstanceOf(ArchiveExpiredError);
  await expect(present).rejects.toMatchObject({ key: part, retentionMonths: 12 });
  const lib = new JobDetailsReader(env.s3, env.bucket, { retentionMonths: 12, clock: () => past });
  await expect(lib.readAllDetails(await queryOf(env, job))).rejects.toBeInstanceOf(ArchiveExpiredError);
  const expiredSearch = await search(past);
  expect(expiredSearch.jobs).toEqual([]);
  expect(expiredSearch.provenance.warnings).toEqual([expect.stringMatching(/expired/)]);

  // Gone as the rule removes it (its index outlives it by a month): the CLI says expired, as the
  // library always did — not CorruptObjectError.
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: part }));
  expect(await readStoredIndex(env, job.shopId, month)).not.toBeNull();
  const gone = lookup(past);
  await expect(gone).rejects.toBeInstanceOf(ArchiveExpiredError);
  await expect(gone).rejects.toMatchObject({ key: part, writtenAt: written.toISOString() });
  // Search says expired too, before any GET of the part's filters (not "committed part is missing").
  const goneSearch = await search(past);
  expect(goneSearch.jobs).toEqual([]);
  expect(goneSearch.provenance.warnings).toEqual([expect.stringMatching(/^part not searched: .*expired/)]);
});
