/**
 * The real CLI as a process (`node bin/jobarchive.cjs …`) with its own embedded stack in a temp data
 * dir: exit codes, JSON on stdout, and no emulator process left behind — after a normal exit and
 * after SIGINT. The child gets an environment without the jest stack's endpoints, so it starts its
 * own stack like an operator's shell would.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DEMO_FLEET, type DemoResult } from '../../infra/cli/demo';
import type { SeedResult } from '../../infra/cli/seed';
import { isAlive } from '../../infra/local/process';
import type { RunReport } from '../../shared/archive/steps/types';
import { cleanEnv, collect, recordedPids, reportedPids } from '../support/child';

const ROOT = resolve(__dirname, '../..');
const BIN = join(ROOT, 'bin/jobarchive.cjs');

/** `PYTHON` names an interpreter with boto3 when `python3` on PATH has none (.ci/run sets it). */
const PYTHON = process.env.PYTHON ?? 'python3';

const cli = (args: string[]) => spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: cleanEnv() });

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'jda-cli-'));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

it('seed --json exits 0, prints the jobs as JSON, and leaves no emulator running', async () => {
  const run = collect(
    cli([
      'seed',
      '--shops',
      '2',
      '--jobs',
      '2',
      '--months',
      '1',
      '--seed',
      '5',
      '--json',
      '--data-dir',
      dataDir,
    ]),
  );
  const r = await run.done;
  expect(r.stderr).not.toMatch(/NodeVersionSupportWarning/);
  expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
  const printed = JSON.parse(r.stdout) as SeedResult;
  expect(printed.seed).toBe(5);
  expect(printed.jobs).toHaveLength(4);
  for (const j of printed.jobs)
    expect(j).toEqual({
      shopId: expect.any(String),
      jobId: expect.stringMatching(/^[a-z2-7]{13}$/),
      completedAt: expect.any(String),
      status: expect.stringMatching(/^(COMPLETED|FAILED|CONFLICT)$/),
    });

  const pids = [...reportedPids(r.stderr), ...recordedPids(dataDir)];
  expect(pids.length).toBeGreaterThanOrEqual(3);
  expect(pids.filter(isAlive)).toEqual([]);
});

it('bad arguments exit 2 with one line and never start a stack', async () => {
  const r = await collect(cli(['seed', '--shops', 'many', '--data-dir', dataDir])).done;
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toEqual([
    `jobarchive seed: invalid --shops: expected a whole number in [1, 10000], got "many" (see 'jobarchive seed --help')`,
  ]);
  expect(existsSync(join(dataDir, 'stack.json'))).toBe(false);
});

it('demo refuses endpoints from the environment (it writes a fake fleet and deletes hot objects)', async () => {
  const env = {
    ...cleanEnv(),
    AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9',
    AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
    ECOM_JOBS_TABLE: 'someone-elses-jobs',
    ECOM_JOB_DETAILS_BUCKET: 'someone-elses-details',
  };
  const r = await collect(spawn(process.execPath, [BIN, 'demo', '--data-dir', dataDir], { cwd: ROOT, env }))
    .done;
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(/^jobarchive demo: invalid environment: demo runs on the embedded stack only/);
});

it('SIGINT during a long seed stops the stack and exits 130', async () => {
  const child = cli(['seed', '--shops', '40', '--jobs', '25', '--data-dir', dataDir]);
  const run = collect(child);
  // Interrupt once seeding has begun (its first progress line), i.e. while the stack is up.
  await new Promise<void>((res, rej) => {
    const onData = () => {
      if (/seed: jobs \d+\/1000 /.test(run.stderr())) {
        child.stderr?.off('data', onData);
        res();
      }
    };
    child.stderr?.on('data', onData);
    child.on('close', () => rej(new Error(`exited before seeding started:\n${run.stderr()}`)));
  });
  child.kill('SIGINT');
  const r = await run.done;
  expect(r.code).toBe(130);
  expect(r.stderr).toContain('jobarchive seed: interrupted (SIGINT), stopping');
  const pids = [...reportedPids(r.stderr), ...recordedPids(dataDir)];
  expect(pids.filter(isAlive)).toEqual([]);
});

it('demo (npm start) exits 0: seeds, archives, looks up an archived job, and leaves no process behind', async () => {
  const r = await collect(cli(['demo', '--json', '--data-dir', dataDir])).done;
  expect({ code: r.code, signal: r.signal, stderrTail: r.code === 0 ? '' : r.stderr.slice(-2000) }).toEqual({
    code: 0,
    signal: null,
    stderrTail: '',
  });
  const printed = JSON.parse(r.stdout) as DemoResult;
  expect(printed.seeded?.jobs.length).toBe(DEMO_FLEET.shops * DEMO_FLEET.jobsPerShop);
  expect(printed.run.status).toBe('SUCCEEDED');
  const report = printed.run.output as RunReport;
  expect(report.jobsArchived).toBeGreaterThan(0);
  expect(report.objectsDeleted).toBeGreaterThan(0);
  expect(printed.lookup?.lookup.detailsSource).toBe('archive');
  expect(printed.lookup?.lookup.provenance.parts.length).toBeGreaterThan(0);
  // The human report went to stderr, so stdout stayed one JSON document.
  expect(r.stderr).toContain('== archival run');
  expect(r.stderr).toContain('provenance: source archive');
  // It says what the product is for, and why its small fleet does not shrink the bytes.
  expect(r.stderr).toContain('== what this run shows');
  expect(r.stderr).toMatch(/objects: +\d+ small hot objects deleted, \d+ parts written/);
  expect(r.stderr).toMatch(/too few for\s+compressing them together/);

  const pids = [...reportedPids(r.stderr), ...recordedPids(dataDir)];
  expect(pids.filter(isAlive)).toEqual([]);
});

it('two `jobarchive run` on one data dir at once share its stack: neither stops it under the other; audit clean after', async () => {
  const dir = ['--data-dir', dataDir];
  const seeded = await collect(
    cli(['seed', '--shops', '3', '--jobs', '6', '--months', '3', '--seed', '11', '--json', ...dir]),
  ).done;
  expect(seeded.code).toBe(0);
  const jobs = (JSON.parse(seeded.stdout) as SeedResult).jobs;
  const pids = new Set(reportedPids(seeded.stderr));

  /** Two runs started together; each must finish its work on the stack whoever started it. */
  const both = async (a: string[], b: string[]) => {
    const runs = await Promise.all([
      collect(cli(['run', '--json', ...a, ...dir])).done,
      collect(cli(['run', '--json', ...b, ...dir])).done,
    ]);
    for (const r of runs) {
      for (const p of reportedPids(r.stderr)) pids.add(p);
      expect(r.stderr).not.toMatch(/ECONNREFUSED|socket hang up/);
      // On failure, what the run said (its quarantined jobs or failed groups are listed on stderr).
      const said = r.code === 0 ? {} : { stderr: r.stderr.slice(-3000), stdout: r.stdout.slice(0, 3000) };
      expect({ code: r.code, signal: r.signal, ...said }).toEqual({ code: 0, signal: null });
    }
    return runs.map((r) => JSON.parse(r.stdout) as RunReport);
  };
  // The same cutoff (the grace period keeps the hot objects), then different cutoffs that delete.
  await both(['--older-than-days', '30'], ['--older-than-days', '30']);
  const deleting = await both(
    ['--older-than-days', '30', '--grace-hours', '0'],
    ['--older-than-days', '45', '--grace-hours', '0'],
  );
  expect(deleting.every((r) => r.groupsFailedCount === 0 && r.jobsQuarantinedCount === 0)).toBe(true);

  const audit = await collect(cli(['audit', '--json', ...dir])).done;
  for (const p of reportedPids(audit.stderr)) pids.add(p);
  expect(audit.code).toBe(0);
  const found = JSON.parse(audit.stdout) as {
    totals: { mismatches: number; orphans: number; archivedJobs: number };
  };
  expect(found.totals).toMatchObject({ mismatches: 0, orphans: 0 });
  expect(found.totals.archivedJobs).toBeGreaterThan(0);
  expect(found.totals.archivedJobs).toBeLessThanOrEqual(jobs.length);

  // Every command has ended: nothing of any stack they shared is left running.
  expect([...pids, ...recordedPids(dataDir)].filter(isAlive)).toEqual([]);
});

it('--version prints the package version', async () => {
  const r = await collect(cli(['--version'])).done;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  expect({ code: r.code, stdout: r.stdout.trim() }).toEqual({ code: 0, stdout: pkg.version });
});

it('a reader that closes stdout early (`jobarchive lifecycle | head -1`) ends the command quietly, exit 0, no EPIPE trace', async () => {
  const child = cli(['lifecycle']);
  // Our end of the pipe closes before the CLI has written anything: its writes meet a closed pipe.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
});

it('a reader of stdout and stderr (`jobarchive … 2>&1 | head`) that closes early: the exit code is still the command’s, not a crash on EPIPE', async () => {
  // A usage error writes its line to stderr only: with the pipe closed it meets EPIPE there.
  const child = cli(['no-such-command']);
  child.stdout.destroy();
  child.stderr.destroy();
  const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  expect(code).toBe(2);
});

const aFile = (dir: string): string => {
  writeFileSync(join(dir, 'file'), 'x');
  return join(dir, 'file');
};

it.each([
  ['a file', (d: string) => aFile(d), /is a file, not a folder/],
  ['a folder inside a file', (d: string) => join(aFile(d), 'stack'), /cannot be created: .*file is a file/],
  ['a folder no one may create', () => '/proc/jobarchive-data', /is not a writable folder/],
])('a bad --data-dir (%s) is one line and exit 2, before any stack starts', async (_what, make, problem) => {
  const bad = make(dataDir);
  const r = await collect(cli(['audit', '--data-dir', bad])).done;
  expect(r.code).toBe(2);
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(problem)]);
  expect(r.stderr).toContain('--data-dir');
  expect(existsSync(join(dataDir, 'stack.json'))).toBe(false);
});

it('up keeps the stack up, prints exports any AWS client can use, shares it, and exits 0 on Ctrl-C', async () => {
  const child = cli(['up', '--data-dir', dataDir]);
  const run = collect(child);
  const lines: string[] = [];
  await new Promise<void>((res, rej) => {
    const rl = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    rl.on('line', (l) => {
      lines.push(l);
      if (l.startsWith('export ECOM_JOB_DETAILS_BUCKET=')) res();
    });
    rl.once('close', () => rej(new Error(`up printed no exports; stderr:\n${run.stderr()}`)));
  });
  const env = Object.fromEntries(
    lines
      .filter((l) => l.startsWith('export '))
      .map((l) => l.slice('export '.length).split('=', 2) as [string, string]),
  );
  expect(Object.keys(env).sort()).toEqual(
    [
      'AWS_ACCESS_KEY_ID',
      'AWS_DEFAULT_REGION',
      'AWS_ENDPOINT_URL_DYNAMODB',
      'AWS_ENDPOINT_URL_S3',
      'AWS_REGION',
      'AWS_SECRET_ACCESS_KEY',
      'ECOM_JOBS_TABLE',
      'ECOM_JOB_DETAILS_BUCKET',
    ].sort(),
  );
  // Any client pointed by those variables alone talks to it; another command on the dir shares it.
  const s3 = new S3Client({
    endpoint: env.AWS_ENDPOINT_URL_S3,
    region: env.AWS_REGION,
    forcePathStyle: true,
    credentials: {
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '',
    },
  });
  try {
    await s3.send(new PutObjectCommand({ Bucket: env.ECOM_JOB_DETAILS_BUCKET, Key: 'hello', Body: 'up' }));
  } finally {
    s3.destroy();
  }
  // boto3 (and aws-cli, which reads the same variables) with the printed exports alone: no region,
  // endpoint or key of the test's own environment, no ~/.aws config.
  const py = spawnSync(
    PYTHON,
    [
      '-c',
      [
        'import boto3, json, os',
        "s3, ddb = boto3.client('s3'), boto3.client('dynamodb')",
        "body = s3.get_object(Bucket=os.environ['ECOM_JOB_DETAILS_BUCKET'], Key='hello')['Body'].read().decode()",
        "table = ddb.describe_table(TableName=os.environ['ECOM_JOBS_TABLE'])['Table']['TableName']",
        "print(json.dumps({'body': body, 'table': table}))",
      ].join('\n'),
    ],
    {
      encoding: 'utf8',
      env: {
        // The shell's environment minus every AWS_* variable (pyenv & co. need theirs), no ~/.aws files.
        ...Object.fromEntries(Object.entries(cleanEnv()).filter(([k]) => !k.startsWith('AWS_'))),
        AWS_CONFIG_FILE: join(dataDir, 'no-aws-config'),
        AWS_SHARED_CREDENTIALS_FILE: join(dataDir, 'no-aws-credentials'),
        ...env,
      },
    },
  );
  expect(py.stderr).toBe('');
  expect(JSON.parse(py.stdout)).toEqual({ body: 'up', table: env.ECOM_JOBS_TABLE });
  const seeded = await collect(
    cli(['seed', '--shops', '1', '--jobs', '1', '--months', '1', '--data-dir', dataDir]),
  ).done;
  expect(seeded.code).toBe(0);
  expect(seeded.stderr).toMatch(/already running, reused/);
  const pids = reportedPids(run.stderr());
  expect(pids.filter(isAlive)).toEqual(pids); // the seed's end did not stop it

  child.kill('SIGINT');
  const r = await run.done;
  expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
  expect([...pids, ...recordedPids(dataDir)].filter(isAlive)).toEqual([]);
});

it('up spawned with an IPC channel stops (exit 0, no emulator left) when its parent goes away', async () => {
  const child = spawn(process.execPath, [BIN, 'up', '--json', '--data-dir', dataDir], {
    cwd: ROOT,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const run = collect(child);
  await new Promise<void>((res, rej) => {
    child.stdout?.on('data', () => {
      if (run.stdout().includes('ECOM_JOB_DETAILS_BUCKET')) res();
    });
    void run.done.then((r) => rej(new Error(`up exited ${r.code} before its exports:\n${r.stderr}`)));
  });
  child.disconnect(); // what a crashed parent's exit does to the channel
  const r = await run.done;
  expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
  expect([...reportedPids(r.stderr), ...recordedPids(dataDir)].filter(isAlive)).toEqual([]);
});

it('up notices its stack died (an emulator killed under it), says so, and exits 1', async () => {
  const child = cli(['up', '--data-dir', dataDir]);
  const run = collect(child);
  await new Promise<void>((res, rej) => {
    child.stdout?.on('data', () => {
      if (run.stdout().includes('ECOM_JOB_DETAILS_BUCKET')) res();
    });
    void run.done.then((r) => rej(new Error(`up exited ${r.code} before its exports:\n${r.stderr}`)));
  });
  const [, dynamodb] = reportedPids(run.stderr());
  process.kill(dynamodb as number, 'SIGKILL');
  const r = await run.done;
  expect({ code: r.code, signal: r.signal }).toEqual({ code: 1, signal: null });
  expect(r.stderr).toMatch(
    /jobarchive up: the embedded stack died \(.*dynamodb \(pid \d+\).* no longer running; logs in .*\); exiting/,
  );
  expect([...reportedPids(r.stderr), ...recordedPids(dataDir)].filter(isAlive)).toEqual([]);
});

it('Ctrl-C while up is starting its stack stops the start, says so, exits 130 and leaves no process', async () => {
  const child = cli(['up', '--data-dir', dataDir]);
  const run = collect(child);
  // stack.json is written once the supervisor reports its emulators, before they answer (DynamoDB
  // Local's JVM takes seconds to): the start is under way.
  const state = join(dataDir, 'stack.json');
  await new Promise<void>((res, rej) => {
    const watcher = watch(dataDir, () => {
      if (existsSync(state)) {
        watcher.close();
        res();
      }
    });
    void run.done.then((r) => {
      watcher.close();
      rej(new Error(`up exited ${r.code} before its stack was recorded:\n${r.stderr}`));
    });
  });
  const pids = recordedPids(dataDir);
  child.kill('SIGINT');
  const r = await run.done;
  expect({ code: r.code, signal: r.signal }).toEqual({ code: 130, signal: null });
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(
    'jobarchive up: interrupted (SIGINT) while the embedded stack was starting; stopping it',
  );
  expect(pids.length).toBe(3);
  expect([...pids, ...recordedPids(dataDir)].filter(isAlive)).toEqual([]);
});
