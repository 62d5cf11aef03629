import { makeContext } from '../../infra/cli/context';
import { memoryOutput } from '../../infra/cli/output';
import { parseRedactOptions, redactCommand } from '../../infra/cli/redact';
import { parseConfig } from '../../shared/config';
import { getRequest } from '../../shared/erasure/ledger';
import { archiverEnv, cliContextFor, inMonth, listKeys, runMachine } from '../support/archiver-fixtures';
import { bucketContents, seedDocJob } from '../support/redact-fixtures';

/**
 * Issue 31 (smaller point): a redaction killed between its journal and its index switch left a
 * journal every rerun took for a redaction still running — PENDING (exit 5) for an hour, whatever the
 * part's size. The journal now carries its writer's deadline (sized to the part: the writer never
 * switches past it), and a rerun a minute after that finishes the redaction.
 */
jest.setTimeout(300_000);

const SHOP = 'rk-shop.myshopify.com';
const DOC = 'customer-killed-7';

test('a redact killed mid-rewrite is finished by a rerun minutes later', async () => {
  const env = await archiverEnv();
  await seedDocJob(env, SHOP, inMonth(2, 3), [{ failed: { timeout: [DOC, 'keep-1'] } }]);
  expect((await runMachine(env)).run.status).toBe('SUCCEEDED');
  const opts = parseRedactOptions({ shop: SHOP, doc: DOC, 'request-id': 'rk-1' });
  await expect(
    redactCommand(cliContextFor(env), opts, memoryOutput(), {
      crashPoint: (p) => {
        if (p === 'new-part-written') throw Object.assign(new Error('killed'), { name: 'Crash' });
      },
    }),
  ).rejects.toThrow('killed');
  expect(
    (await listKeys(env.s3, env.bucket, `job-details-index/${SHOP}/`)).filter((k) => k.includes('/redact/')),
  ).toHaveLength(1);

  // Right away: it may still be running (pending, as before).
  expect((await redactCommand(cliContextFor(env), opts, memoryOutput())).exitCode).toBe(5);
  // Five minutes later (a small part's writer has 2 minutes, plus the margin): rolled back and redone.
  const later = makeContext({
    ddb: env.ddb,
    s3: env.s3,
    table: env.table,
    bucket: env.bucket,
    cfg: parseConfig(process.env),
    now: () => new Date(Date.now() + 5 * 60_000),
  });
  const { exitCode, results } = await redactCommand(later, opts, memoryOutput());
  expect(exitCode).toBe(0);
  expect(results[0]?.report.archive.journalsResolved).toBe(1);
  expect((await getRequest(env, 'rk-1'))?.request.state).toBe('complete');
  for (const [key, v] of await bucketContents(env))
    expect({ key, has: v.text.includes(DOC) }).toEqual({ key, has: false });
});
