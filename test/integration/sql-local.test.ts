import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { runCli } from '../../infra/cli/main';
import { memoryOutput } from '../../infra/cli/output';
import { parseSqlOptions, type SqlCommandResult, sqlCommand } from '../../infra/cli/sql';
import { LocalSqlEngine } from '../../infra/local/sql-engine';
import {
  COLD_PREFIX,
  type FlatDocument,
  type FlatJob,
  flattenPart,
  partPlace,
} from '../../shared/archive/format';
import { DOCUMENTED_QUERIES } from '../../shared/sql/queries';
import {
  cliContextFor,
  inMonth,
  listKeys,
  monthOfDate,
  partLines,
  runLocal,
  seedTerminalJob,
  setUpMachineRuns,
} from '../support/archiver-fixtures';
import { collect } from '../support/child';

/**
 * `jobarchive sql` on the embedded stack: jobs archived by the synthesized state machine (local
 * runner, real handlers), their parts read back through S3 into DuckDB, and every documented query
 * answering what a brute-force pass over the parts' flattened rows says.
 */
jest.setTimeout(240_000);

const runs = setUpMachineRuns();
const M2 = monthOfDate(inMonth(2, 1));
const M3 = monthOfDate(inMonth(3, 1));

let jobs: FlatJob[] = [];
let documents: FlatDocument[] = [];

const sql = async (args: Record<string, unknown>): Promise<SqlCommandResult> => {
  const io = memoryOutput();
  const r = await sqlCommand(cliContextFor(runs.env), parseSqlOptions({ json: true, ...args }), io);
  if (!r) throw new Error('no result');
  expect(io.json<SqlCommandResult>().rows).toEqual(r.rows);
  return r;
};

beforeAll(async () => {
  const e = runs.env;
  for (const [shopId, n] of [
    ['shop-a', 3],
    ['shop-b', 2],
  ] as const) {
    for (let i = 0; i < n; i++) {
      await seedTerminalJob(e, { shopId, completedAt: inMonth(2, 3 + i), status: 'FAILED' });
      await seedTerminalJob(e, {
        shopId,
        completedAt: inMonth(3, 3 + i),
        status: i % 2 ? 'CONFLICT' : 'COMPLETED',
      });
    }
  }
  const r = await runLocal(runs.env, { input: {}, definition: runs.definition });
  expect(r.handlerErrors).toEqual([]);
  expect(r.status).toBe('SUCCEEDED');
  // Brute force: every part gunzipped whole, flattened.
  for (const key of await listKeys(e.s3, e.bucket, COLD_PREFIX)) {
    const at = partPlace(key);
    if (!at) continue;
    const flat = flattenPart(await partLines(e, key), at, key);
    jobs.push(...flat.jobs);
    documents.push(...flat.documents);
  }
  expect(jobs).toHaveLength(10);
});

afterAll(() => {
  jobs = [];
  documents = [];
});

const count = <T>(list: T[], key: (t: T) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const t of list) out[key(t)] = (out[key(t)] ?? 0) + 1;
  return out;
};

test('a free statement sees every archived job; the load is counted', async () => {
  const r = await sql({
    _: ['SELECT shop_id, job_id, status, completed_at FROM fleet_jobs ORDER BY job_id'],
  });
  expect(r.rows).toEqual(
    [...jobs]
      .sort((a, b) => (a.job_id < b.job_id ? -1 : 1))
      .map((j) => ({ shop_id: j.shop_id, job_id: j.job_id, status: j.status, completed_at: j.completed_at })),
  );
  expect(r.load).toMatchObject({ jobs: 10, documents: documents.length, skippedGlacier: 0 });
  expect(r.load.requests).toBe(r.load.parts + 1);
});

test('failures-by-reason counts failed listings per month and reason', async () => {
  const r = await sql({ query: 'failures-by-reason', _: [M3, M2] });
  const failed = documents.filter((d) => d.kind === 'failed');
  expect(r.rows.length).toBeGreaterThan(0);
  for (const row of r.rows) {
    const these = failed.filter((d) => d.month === row.month && d.reason === row.reason);
    expect(row).toEqual({
      month: row.month,
      reason: row.reason,
      listings: these.length,
      jobs: new Set(these.map((d) => d.job_id)).size,
      shops: new Set(these.map((d) => d.shop_id)).size,
    });
  }
  expect(r.rows.reduce((n, row) => n + Number(row.listings), 0)).toBe(failed.length);
});

test('shops-with-reason lists each shop that hit the reason', async () => {
  const r = await sql({ query: 'shops-with-reason', _: ['failed', 'timeout', M3, M2] });
  const hit = documents.filter((d) => d.kind === 'failed' && d.reason === 'timeout');
  expect(Object.fromEntries(r.rows.map((row) => [row.shop_id, row.listings]))).toEqual(
    count(hit, (d) => d.shop_id),
  );
});

test('document-history answers one document of one shop, newest first', async () => {
  const doc = documents.find((d) => d.shop_id === 'shop-a' && d.kind === 'failed');
  if (!doc) throw new Error('no failed document seeded');
  const r = await sql({ query: 'document-history', _: ['shop-a', doc.doc_id, M3, M2] });
  const want = documents
    .filter((d) => d.shop_id === 'shop-a' && d.doc_id === doc.doc_id)
    .map((d) => ({
      completed_at: d.completed_at,
      job_id: d.job_id,
      status: d.status,
      kind: d.kind,
      reason: d.reason,
    }))
    .sort((a, b) => b.completed_at.localeCompare(a.completed_at) || a.job_id.localeCompare(b.job_id));
  expect(r.rows).toEqual(want);
  // The seed lists a document in every job of the shop with the same flush index: a real history.
  expect(r.rows.length).toBeGreaterThan(1);
});

test('jobs-per-status counts one shop per month and status', async () => {
  const r = await sql({ query: 'jobs-per-status', _: ['shop-a', M3, M2] });
  expect(Object.fromEntries(r.rows.map((row) => [`${row.month} ${row.status}`, row.jobs]))).toEqual(
    count(
      jobs.filter((j) => j.shop_id === 'shop-a'),
      (j) => `${j.month} ${j.status}`,
    ),
  );
});

test('every documented query runs with its example parameters', async () => {
  for (const q of DOCUMENTED_QUERIES) {
    const r = await sql({ query: q.name, _: q.params.map((p) => p.example) });
    expect(r.columns.length).toBeGreaterThan(0);
  }
});

test('user SQL cannot reach files or the network', async () => {
  await expect(sql({ _: ["SELECT * FROM read_csv('/etc/passwd')"] })).rejects.toMatchObject({
    name: 'InvalidInputError',
  });
  await expect(sql({ _: ['SELECT nope FROM jobs'] })).rejects.toThrow(/nope/);
});

test('a statement DuckDB rejects is a bad argument: exit 2, one line naming the SQL', async () => {
  const io = memoryOutput();
  const code = await runCli(['sql', 'SELEC 1', '--bucket', runs.env.bucket], io);
  expect(code).toBe(2);
  expect(io.stdout).toEqual([]);
  expect(io.stderr.at(-1)).toMatch(
    /^jobarchive sql: invalid SQL: .*SELEC.* \(see 'jobarchive sql --help'\)$/,
  );
});

/**
 * The CLI as a process, on the jest stack's endpoints (no stack of its own): a statement that never
 * ends stops on SIGINT / SIGTERM with 130 / 143. Before, only SIGKILL ended it (DuckDB finishes its
 * statement before the process can exit). Synchronised on the line saying the statement runs.
 */
test.each([
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const)('a statement that never ends stops on %s (exit %d)', async (sig, exitCode) => {
  const bin = join(resolve(__dirname, '../..'), 'bin/jobarchive.cjs');
  const forever = 'WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t';
  const child = spawn(process.execPath, [bin, 'sql', forever, '--bucket', runs.env.bucket], {
    env: process.env,
  });
  const run = collect(child);
  await new Promise<void>((res, rej) => {
    const onData = (): void => {
      if (run.stderr().includes('running the statement')) {
        child.stderr?.off('data', onData);
        res();
      }
    };
    child.stderr?.on('data', onData);
    void run.done.then((r) => rej(new Error(`sql exited ${r.code} before its statement ran:\n${r.stderr}`)));
  });
  child.kill(sig);
  const r = await run.done;
  expect({ code: r.code, signal: r.signal, stdout: r.stdout }).toEqual({
    code: exitCode,
    signal: null,
    stdout: '',
  });
  expect(r.stderr).toContain(`jobarchive sql: interrupted (${sig}), stopping`);
});

/**
 * An interrupt that lands while a statement is being prepared (after the CLI said it runs, before
 * DuckDB began it) still stops it: DuckDB clears interrupts when a statement begins, so the engine
 * keeps the interrupt and sends it again once the statement is pending. Before, this statement ran
 * for ever (the CLI process ignored SIGINT / SIGTERM: a CI run left two such processes behind).
 */
test('an interrupt before the statement begins stops it', async () => {
  const engine = await LocalSqlEngine.load(runs.env.s3, runs.env.bucket);
  try {
    engine.interrupt();
    await expect(
      engine.query('WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t'),
    ).rejects.toThrow(/interrupt/i);
  } finally {
    engine.close();
  }
});
