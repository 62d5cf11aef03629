/**
 * The package from the outside, as a new user gets it: `npm pack`, the tarball installed into a
 * consumer project made from scratch in a temp dir (test/package/consumer/ holds its sources), and
 * there — plain `tsc`; an ES-module service on plain `node` that writes a job with the writer and
 * reads it back with the reader, against the stack the installed `jobarchive up` keeps running;
 * the installed `jobarchive run` archiving it; a CommonJS CDK app dropping the construct onto an
 * imported TableV2 and Bucket, with cdk-nag, asserting its template. The consumer imports nothing
 * but the package's `exports`.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ARCHIVER_STEPS, camelStep } from '../../infra/construct/step-names';
import { isAlive } from '../../infra/local/process';
import { SHIPPED_SETUP_FILE } from '../../infra/local/runner';
import { synthesizedLocalSetup } from '../../infra/local/synth';
import { cleanEnv, collect, recordedPids, reportedPids } from '../support/child';

const ROOT = resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, unknown>;
  files: string[];
};
/** The consumer's own dependencies, at the versions this project tests with. */
const CONSUMER_DEPS = [
  'typescript',
  '@types/node',
  'aws-cdk-lib',
  'constructs',
  'cdk-nag',
  '@aws-sdk/client-s3',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/lib-dynamodb',
];
const pinned = (dep: string): string =>
  `${dep}@${(JSON.parse(readFileSync(join(ROOT, 'node_modules', dep, 'package.json'), 'utf8')) as { version: string }).version}`;

/** Preloaded into a node process: any require of CDK's packages fails there. */
const NO_CDK = `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (/^(aws-cdk-lib|constructs|cdk-nag)(\\/|$)/.test(request)) {
    throw Object.assign(new Error('Cannot find module ' + request + ' (blocked)'), { code: 'MODULE_NOT_FOUND' });
  }
  return resolve.call(this, request, ...rest);
};
`;

let work: string;
let app: string;
let packedFiles: string[];
let unpackedSize: number;
let up: ChildProcess | undefined;

const sh = (cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): string =>
  execFileSync(cmd, args, {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 << 20,
  });
const node = (args: string[], env?: NodeJS.ProcessEnv): string => sh(process.execPath, args, app, env);
const bin = (name: string): string => join(app, 'node_modules/.bin', name);

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'jda-consumer-'));
  // prepack builds dist/ first; its progress lines precede npm's JSON.
  const packed = sh('npm', ['pack', '--json', '--pack-destination', work], ROOT);
  const [info] = JSON.parse(packed.slice(packed.search(/^\[/m))) as {
    filename: string;
    files: { path: string }[];
    unpackedSize: number;
  }[];
  if (!info) throw new Error(`npm pack printed no result:\n${packed}`);
  packedFiles = info.files.map((f) => f.path);
  unpackedSize = info.unpackedSize;

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }),
  );
  cpSync(join(__dirname, 'consumer'), app, { recursive: true });
  sh(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      join(work, info.filename),
      ...CONSUMER_DEPS.map(pinned),
    ],
    app,
  );
  sh(bin('tsc'), ['-p', '.'], app);
}, 600_000);

afterAll(async () => {
  if (up && up.exitCode === null && up.signalCode === null) {
    const stopped = collect(up).done;
    up.kill('SIGINT');
    await stopped;
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

it('the tarball ships the build, the CLI, the wire contract, the archive spec with its vectors and the Python reader — no tests, no TypeScript sources', () => {
  const snapshot = (f: string) => f.startsWith('docs/vectors/bucket/');
  const outside = packedFiles.filter((f) => !f.startsWith('dist/') && !snapshot(f)).sort();
  expect(outside).toEqual(
    [
      'README.md',
      'bin/jobarchive.cjs',
      'docs/archive-format.md',
      'docs/bench/archive.json',
      'docs/bench/steady-year.json',
      'docs/schema/flush-payload.schema.json',
      'docs/schema/platform-data.schema.json',
      'docs/vectors/README.md',
      'docs/vectors/expected.json',
      'docs/wire-format.md',
      'package.json',
      'shared/python/job_details_archive/__init__.py',
      'shared/python/job_details_archive/__main__.py',
      'shared/python/job_details_archive/errors.py',
      'shared/python/job_details_archive/format.py',
      'shared/python/job_details_archive/reader.py',
    ].sort(),
  );
  // The vectors' bucket: parts, month indexes and the shared index, as expected.json lists them.
  expect(packedFiles.filter(snapshot).length).toBeGreaterThanOrEqual(7);
  expect(packedFiles.filter((f) => /(^|\/)test\/|\.test\.|(?<!\.d)\.m?ts$/.test(f))).toEqual([]);
  for (const step of ARCHIVER_STEPS) expect(packedFiles).toContain(`dist/lambda/${step}.mjs`);
  // Every file the exports map names is in the tarball.
  const leaves = (v: unknown): string[] =>
    typeof v === 'string' ? [v] : Object.values(v as Record<string, unknown>).flatMap(leaves);
  const targets = leaves(manifest.exports).map((t) => t.replace(/^\.\//, ''));
  expect(targets.length).toBeGreaterThan(20);
  for (const t of targets) expect(packedFiles).toContain(t);
});

it('the tarball unpacks to at most 6 MB: one Lambda bundle for every step, no source maps', () => {
  process.stdout.write(
    `npm pack: ${packedFiles.length} files, ${(unpackedSize / 1e6).toFixed(2)} MB unpacked\n`,
  );
  expect(unpackedSize).toBeLessThanOrEqual(6_000_000);
  expect(packedFiles.filter((f) => f.endsWith('.map'))).toEqual([]);
  expect(
    packedFiles.filter((f) => /^dist\/lambda\/[^/]+\//.test(f) && !f.startsWith('dist/lambda/chunks/')),
  ).toEqual([]);
});

it('the local runner ships the definition CDK synthesizes, so an installed `jobarchive run` needs no CDK', () => {
  const shipped = `dist/infra/local/${SHIPPED_SETUP_FILE}`;
  expect(packedFiles).toContain(shipped);
  expect(JSON.parse(readFileSync(join(ROOT, shipped), 'utf8'))).toEqual(synthesizedLocalSetup());
});

it('the consumer builds with plain tsc and imports only through exports', () => {
  const sources = ['src/service.ts', 'src/cdk-app.cts']
    .map((f) => readFileSync(join(app, f), 'utf8'))
    .join('\n');
  const specifiers = [...sources.matchAll(/from '(job-details-archive[^']*)'/g)].map((m) => m[1]);
  expect(new Set(specifiers)).toEqual(
    new Set([
      'job-details-archive',
      'job-details-archive/reader',
      'job-details-archive/cdk',
      'job-details-archive/cdk/nag',
    ]),
  );
  for (const s of specifiers) expect(Object.keys(manifest.exports)).toContain(s?.replace(manifest.name, '.'));
  expect(existsSync(join(app, 'dist/service.js')) && existsSync(join(app, 'dist/cdk-app.cjs'))).toBe(true);
  // A path inside the package is not reachable, from either module system.
  expect(() => node(['-e', "require('job-details-archive/dist/shared/details/index.js')"])).toThrow(
    /ERR_PACKAGE_PATH_NOT_EXPORTED/,
  );
  // require and import share one module instance: an error class is the same either way.
  const same = node([
    '--input-type=module',
    '-e',
    "import { createRequire } from 'node:module'; import { InvalidInputError } from 'job-details-archive'; " +
      "const cjs = createRequire(import.meta.url)('job-details-archive'); console.log(cjs.InvalidInputError === InvalidInputError);",
  ]);
  expect(same.trim()).toBe('true');
  expect(node([bin('jobarchive'), '--version']).trim()).toBe(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
  );
});

it('a plain-node service writes and reads a job on the installed `jobarchive up`; `jobarchive run` archives it', async () => {
  const dataDir = join(work, 'stack');
  // With an IPC channel, `up` stops by itself if this test process dies.
  up = spawn(process.execPath, [bin('jobarchive'), 'up', '--json', '--data-dir', dataDir], {
    cwd: app,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const upRun = collect(up);
  const exports = await new Promise<Record<string, string>>((res, rej) => {
    up?.stdout?.on('data', () => {
      try {
        res(JSON.parse(upRun.stdout()) as Record<string, string>);
      } catch {
        // not the whole document yet
      }
    });
    void upRun.done.then((r) => rej(new Error(`up exited ${r.code} before its exports:\n${r.stderr}`)));
  });
  const env = { ...cleanEnv(), ...exports };

  const written = JSON.parse(node(['dist/service.js', 'write'], env)) as {
    shopId: string;
    jobId: string;
    completedAt: string;
    status: string;
    badInput: string;
  };
  expect(written.status).toBe('FAILED');
  expect(written.badInput).toMatch(/^InvalidInputError: invalid chunkIds/);
  const job = [written.shopId, written.jobId, written.completedAt];
  const details = {
    chunk_ids: ['p0', 'preparse'],
    failed: { timeout: ['doc-1'] },
    skipped: { invalid_json: ['doc-2'] },
    conflict: {},
  };
  expect(JSON.parse(node(['dist/service.js', 'read', ...job], env))).toEqual({ source: 'hot', details });

  // The installed CLI runs the archiver without CDK: aws-cdk-lib, constructs and cdk-nag cannot be
  // loaded in this process (installed here only for the CDK app below).
  const noCdk = join(work, 'no-cdk.cjs');
  writeFileSync(noCdk, NO_CDK);
  expect(() => node(['--require', noCdk, '-e', "require('aws-cdk-lib')"])).toThrow(/blocked/);
  const run = JSON.parse(
    node(
      ['--require', noCdk, bin('jobarchive'), 'run', '--data-dir', dataDir, '--grace-hours', '0', '--json'],
      cleanEnv(),
    ),
  ) as { jobsArchived: number };
  expect(run.jobsArchived).toBe(1);
  expect(JSON.parse(node(['dist/service.js', 'read', ...job], env))).toEqual({ source: 'archive', details });

  up.kill('SIGINT');
  const r = await upRun.done;
  expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
  const pids = [...reportedPids(r.stderr), ...recordedPids(dataDir)];
  expect(pids.filter(isAlive)).toEqual([]);
});

it('a CommonJS CDK app synthesizes the construct on an imported TableV2 and Bucket, cdk-nag on', () => {
  const out = JSON.parse(node(['dist/cdk-app.cjs', join(work, 'cdk.out')])) as Record<string, unknown>;
  expect(out).toEqual({
    stack: 'Indexer',
    functions: ARCHIVER_STEPS.map(camelStep).sort(),
    bundledAssets: 1,
    stateMachine: true,
  });
  // What would be deployed loads on its own, outside the package, and exports the handler.
  const outdir = join(work, 'cdk.out');
  const [asset] = readdirSync(outdir).filter(
    (d) => d.startsWith('asset.') && existsSync(join(outdir, d, 'plan.mjs')),
  );
  const bundles = ARCHIVER_STEPS.map((step) => pathToFileURL(join(outdir, asset ?? '', `${step}.mjs`)).href);
  const loaded = node([
    '--input-type=module',
    '-e',
    `for (const b of ${JSON.stringify(bundles)}) console.log(typeof (await import(b)).handler);`,
  ]);
  expect(loaded.trim().split('\n')).toEqual(ARCHIVER_STEPS.map(() => 'function'));
});
