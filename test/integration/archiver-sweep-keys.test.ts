import { PutObjectCommand } from '@aws-sdk/client-s3';
import { auditCommand } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { jobPrefix } from '../../shared/details';
import {
  archiverEnv,
  cliContextFor,
  DAY,
  inMonth,
  listKeys,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';

/**
 * Issue 31, case 3: a key under the hot prefix whose job id is not a valid id (a non-ASCII one, one of
 * 70 characters) is quarantined and reported by the orphan sweep, kept byte for byte, and never halts
 * a run: the runs after sweep and archive as usual. Real steps on the embedded stack (synthesized machine).
 */
jest.setTimeout(180_000);

test('a hot key the sweep cannot parse is quarantined and reported, never a halt', async () => {
  const env = await archiverEnv();
  const good = await seedTerminalJob(env, { shopId: 'shop-sweep-keys', completedAt: inMonth(2, 3) });
  const bad = ['job-details/ünïcode-job/x.json.gz', `job-details/${'j'.repeat(70)}/x.json.gz`];
  for (const key of bad) {
    await env.s3.send(new PutObjectCommand({ Bucket: env.bucket, Key: key, Body: 'not a job' }));
  }
  // Old enough to be an orphan's: the sweep would plan it if its id were one.
  env.advance(120 * DAY);
  try {
    const first = await runMachine(env);
    expect(first.run.status).toBe('SUCCEEDED');
    expect(first.report).toMatchObject({ jobsArchived: 1, groupsFailedCount: 0 });
    for (const key of bad) {
      const id = key.split('/')[1] as string;
      const q = first.report?.jobsQuarantined.find((x) => x.jobId === id);
      expect(q?.reason).toMatch(/not a valid job id/);
    }
    expect(await listKeys(env.s3, env.bucket, jobPrefix(good.jobId))).toEqual([]);
    // Kept where they are; audit names them and exits non-zero.
    expect((await listKeys(env.s3, env.bucket, 'job-details/')).sort()).toEqual([...bad].sort());
    const audit = await auditCommand(
      cliContextFor(env),
      { maxHeads: 10, concurrency: 4, json: true },
      memoryOutput(),
    );
    expect(audit.orphans.map((o) => o.jobId).sort()).toEqual(bad.map((k) => k.split('/')[1]).sort());
    expect(auditExitCode(audit)).not.toBe(0);

    // The next sweeping run meets them again: reported again, no halt.
    const again = await runMachine(env);
    expect(again.run.status).toBe('SUCCEEDED');
    expect(again.report?.jobsQuarantinedCount).toBe(bad.length);
  } finally {
    env.advance(-120 * DAY);
  }
});
