import { randomBytes } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { auditCommand } from '../../infra/cli/audit';
import { memoryOutput } from '../../infra/cli/output';
import {
  PACK_DECISIONS_KEY,
  parseSharedIndex,
  sharedIndexKey,
  WATERMARK_KEY,
} from '../../shared/archive/format';
import { PACK_DECISIONS_FORMAT } from '../../shared/archive/steps/plan/pack-decisions';
import { WATERMARK_FORMAT } from '../../shared/archive/steps/plan/watermark';
import { TERMINAL_STATUSES } from '../../shared/jobs/schema';
import { getObjectBytes, putJson } from '../../shared/s3/objects';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  inMonth,
  readIndex,
  runMachine,
  type SeededJob,
  seedBigJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Issue 31, case 1: a shop-month is never split between an index of its own and the month's shared
 * index (readers consult the own index first, so the shared half would be invisible). Its parts may be
 * planned on several pages of a run, or by a run after one that died before Report: the first decision
 * (own or shared) holds for every later part. Real steps on the embedded stack (synthesized machine).
 */
jest.setTimeout(240_000);

const bigDocs = (): string[] => Array.from({ length: 400 }, () => randomBytes(12).toString('hex'));

/** Where each job's record is: its shop's own index, the month's shared index, or both. */
const whereIs = async (env: ArchiverEnv, jobs: readonly SeededJob[], month: string) => {
  const key = sharedIndexKey(month);
  const got = await getObjectBytes(env.s3, env.bucket, key);
  const shared = got ? parseSharedIndex(got.bytes, key) : null;
  const out: Record<string, string> = {};
  for (const j of jobs) {
    const own = (await readIndex(env, j.shopId, month))?.jobs[j.jobId] !== undefined;
    const packed = shared?.views.get(j.shopId)?.jobs[j.jobId] !== undefined;
    out[j.jobId] = own && packed ? 'both' : own ? 'own' : packed ? 'shared' : 'none';
  }
  return out;
};

const uniform = (jobs: readonly SeededJob[], where: Record<string, string>) =>
  new Set(jobs.map((j) => where[j.jobId])).size === 1 && jobs.every((j) => where[j.jobId] !== 'none');

test('a shop-month cut by plan pages goes whole to its own index or whole to the shared one', async () => {
  const env = await archiverEnv({ planPageJobs: 3, packBelowKb: 1 });
  const month = inMonth(3, 2).toISOString().slice(0, 7);
  const s = 'split-s.myshopify.com';
  const t = 'split-t.myshopify.com';
  // GSI order: [S big, S, S] | [S, T, T] | [T big]. S's first part is large (own), its second small;
  // T's first part is small (shared), its second large.
  const sJobs = [
    await seedBigJob(env, s, inMonth(3, 2), bigDocs()),
    await seedTerminalJob(env, { shopId: s, completedAt: inMonth(3, 3), flushes: 1 }),
    await seedTerminalJob(env, { shopId: s, completedAt: inMonth(3, 4), flushes: 1 }),
    await seedTerminalJob(env, { shopId: s, completedAt: inMonth(3, 5), flushes: 1 }),
  ];
  const tJobs = [
    await seedTerminalJob(env, { shopId: t, completedAt: inMonth(3, 6), flushes: 1 }),
    await seedTerminalJob(env, { shopId: t, completedAt: inMonth(3, 7), flushes: 1 }),
    await seedBigJob(env, t, inMonth(3, 8), bigDocs()),
  ];

  const run = await runMachine(env);
  expect(run.run.status).toBe('SUCCEEDED');
  expect(run.pages.length).toBeGreaterThanOrEqual(3);
  expect(run.report).toMatchObject({ jobsArchived: 7, groupsFailedCount: 0 });
  const where = await whereIs(env, [...sJobs, ...tJobs], month);
  // S's first part went to its own index: so does the rest; T's first part was packed: so is the rest.
  expect(sJobs.map((j) => where[j.jobId])).toEqual(['own', 'own', 'own', 'own']);
  expect(tJobs.map((j) => where[j.jobId])).toEqual(['shared', 'shared', 'shared']);
  // audit reads both indexes of the month: nothing split, nothing amiss.
  const audit = await auditCommand(
    cliContextFor(env),
    { maxHeads: 10, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(audit.mismatches).toEqual([]);
  expect(audit.totals).toMatchObject({ archivedJobs: 7, hotJobs: 0 });
});

test('after a run that died before Report, a later part of a shop-month follows its first', async () => {
  const env = await archiverEnv({ packBelowKb: 1 });
  const at = inMonth(3, 2);
  const month = at.toISOString().slice(0, 7);
  const monthStart = `${month}-01T00:00:00.000Z`;
  // A watermark from a run before this month: the month is archived for the first time (packFrom).
  const before = {
    format: WATERMARK_FORMAT,
    cutoff: monthStart,
    keys: Object.fromEntries(TERMINAL_STATUSES.map((st) => [st, monthStart])),
    retry: [],
    runId: 'run-before',
  };
  await putJson(env, WATERMARK_KEY, before);
  const s = 'crash-s.myshopify.com';
  const first = [
    await seedBigJob(env, s, inMonth(3, 2), bigDocs()),
    await seedTerminalJob(env, { shopId: s, completedAt: inMonth(3, 3), flushes: 1 }),
  ];
  const run1 = await runMachine(env, { keepWatermark: true });
  expect(run1.report).toMatchObject({ jobsArchived: 2, groupsFailedCount: 0 });
  expect(run1.pages[0]?.planned.map((g) => g.pack ?? 'own')).toEqual(['own']);
  // The run is killed after its batches, before Report: the watermark stays where it was.
  await putJson(env, WATERMARK_KEY, before);
  // A late small job of the same shop-month; the next run plans the month again.
  const late = await seedTerminalJob(env, { shopId: s, completedAt: inMonth(3, 4), flushes: 1 });
  const run2 = await runMachine(env, { keepWatermark: true });
  expect(run2.run.status).toBe('SUCCEEDED');
  expect(run2.report).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
  const where = await whereIs(env, [...first, late], month);
  expect(uniform([...first, late], where)).toBe(true);
  expect(where[late.jobId]).toBe('own');
  const audit = await auditCommand(
    cliContextFor(env),
    { maxHeads: 10, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(audit.mismatches.filter((m) => m.kind === 'split-shop-month')).toEqual([]);
});

const shop = 'unread-s.myshopify.com';
/** A document that is not JSON, or one naming a month that does not exist (damage: never half-read). */
const unreadable: [string, (month: string) => string][] = [
  ['not JSON', () => 'not json'],
  [
    'with month 13',
    (month) =>
      JSON.stringify({
        format: PACK_DECISIONS_FORMAT,
        months: { [month]: { [shop]: 'shared' }, [`${month.slice(0, 4)}-13`]: { [shop]: 'own' } },
      }),
  ],
];

test.each(unreadable)(
  'an unreadable decisions document (%s) is no halt: its months are routed by the shared views from then on',
  async (_, body) => {
    const env = await archiverEnv({ packBelowKb: 128 });
    const job = await seedTerminalJob(env, { shopId: shop, completedAt: inMonth(3, 2), flushes: 1 });
    const month = job.completedAt.slice(0, 7);
    await env.s3.send(
      new PutObjectCommand({ Bucket: env.bucket, Key: PACK_DECISIONS_KEY, Body: body(month) }),
    );
    const run = await runMachine(env);
    expect(run.run.status).toBe('SUCCEEDED');
    expect(run.report).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
    // Not in any view yet: its own index (consistent whatever an earlier part did).
    expect(run.pages[0]?.planned.map((g) => g.pack)).toEqual(['if-packed']);
    expect(await whereIs(env, [job], month)).toEqual({ [job.jobId]: 'own' });
    const doc = JSON.parse(
      (await getObjectBytes(env.s3, env.bucket, PACK_DECISIONS_KEY))?.bytes.toString() ?? '{}',
    );
    expect(doc.months).toEqual({ [month]: 'by-view' });
  },
);
