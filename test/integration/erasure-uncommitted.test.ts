import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { forgetShop } from '../../shared/erasure/forget';
import { getRequest } from '../../shared/erasure/ledger';
import { ErasureIncompleteError } from '../../shared/errors';
import {
  archiverEnv,
  cliContextFor,
  daysAgo,
  HOUR,
  listKeys,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import { whereNamed } from '../support/erasure-fixtures';

/**
 * Issue 31, case 8: a run killed mid-batch leaves a shared part it never committed (its intent beside
 * it), holding every packed shop's full records. No shared index names it, so forget's rewrite of
 * shared parts never saw it and reported the shop forgotten while its records were still stored. Now
 * forget deletes such a part once abandoned, and until then stays pending naming it; audit lists it
 * under the forgotten shop and exits non-zero.
 */
jest.setTimeout(300_000);

const GONE = 'uc-gone.myshopify.com';
const KEPT = 'uc-kept.myshopify.com';

test('an uncommitted shared part holding a forgotten shop: pending while young, deleted once abandoned', async () => {
  const env = await archiverEnv({ packBelowKb: 128 });
  const at = daysAgo(45);
  for (const shopId of [GONE, KEPT])
    for (const n of [0, 1])
      await seedTerminalJob(env, { shopId, completedAt: new Date(at.getTime() + n * 60_000) });
  // Killed before the commit: the shared part and its intent stay, no shared index names the part.
  const crashed = await runMachine(env, {
    input: { olderThanDays: 30, graceHours: 0 },
    crash: { before: 'commit' },
  });
  expect(crashed.run.status).not.toBe('SUCCEEDED');
  const parts = await listKeys(env.s3, env.bucket, 'job-details-cold/_shared/');
  expect(parts).toHaveLength(1);
  const part = parts[0] as string;

  // Young: its run may be about to commit (and would then refuse the shop itself). Pending, named.
  const first = forgetShop(env.deps, { shopId: GONE, requestId: 'uc-1', runId: 'forget-uc-1' });
  await expect(first).rejects.toThrow(ErasureIncompleteError);
  await expect(first).rejects.toThrow(part);
  const pending = (await getRequest(env, 'uc-1'))?.request;
  expect(pending).toMatchObject({ state: 'pending', receipt: { complete: false, uncommittedPartsLeft: 1 } });
  expect(pending?.pendingReason).toContain(part);
  expect((await whereNamed(env, 'uc-gone')).filter((w) => w.includes('_shared'))).toEqual([
    `body of ${part}`,
  ]);

  // Audit names the part under the forgotten shop and exits non-zero.
  const io = memoryOutput();
  const audit = await auditCommand(cliContextFor(env), { maxHeads: 100, concurrency: 4, json: false }, io);
  expect(audit.erasure.forgottenLeftovers).toEqual([
    expect.objectContaining({ shopId: GONE, uncommittedParts: [part], newerJobs: 0 }),
  ]);
  expect(auditExitCode(audit)).toBe(4);
  expect(io.stdout.join('\n')).toContain(`uncommitted shared part holding it: ${part}`);

  // Abandoned (past the archiver's own 12 hours): forget deletes it and completes.
  env.advance(13 * HOUR);
  const done = await forgetShop(env.deps, {
    shopId: GONE,
    requestId: 'uc-1',
    runId: 'forget-uc-2',
    runTimeoutSeconds: 12 * 3600,
  });
  expect(done.counts.uncommittedParts).toBe(1);
  expect((await getRequest(env, 'uc-1'))?.request).toMatchObject({
    state: 'complete',
    receipt: { complete: true, uncommittedParts: 1 },
  });
  expect(await whereNamed(env, 'uc-gone')).toEqual([]);
  expect(await listKeys(env.s3, env.bucket, 'job-details-cold/_shared/')).toEqual([]);
  // The other shop's jobs were never archived: their hot copies are all there for the next run.
  const again = await runMachine(env, { input: { olderThanDays: 30, graceHours: 0 } });
  expect(again.report).toMatchObject({ jobsArchived: 2, groupsFailedCount: 0 });
  const audited = await auditCommand(
    cliContextFor(env),
    { maxHeads: 100, concurrency: 4, json: true },
    memoryOutput(),
  );
  expect(audited.erasure.forgottenLeftovers).toEqual([]);
});
