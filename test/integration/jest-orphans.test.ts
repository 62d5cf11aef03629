/**
 * A jest run killed hard (an interrupted CI job: SIGKILL to jest's parent process) leaves no worker
 * behind, and no emulator a worker started. A real jest runs two test files in workers with this
 * project's test environment (test/setup/environment.cjs); one of them holds an embedded stack.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isAlive, pollUntil } from '../../infra/local/process';
import { stopLocalStack } from '../../infra/local/stack';
import { cleanEnv, collect, recordedPids } from '../support/child';

const ROOT = resolve(__dirname, '../..');

let work: string;
let runner: ChildProcess | undefined;
afterAll(async () => {
  // Whatever a failed assertion left: the jest this test started, the stack its worker started.
  if (runner && runner.exitCode === null && runner.signalCode === null) runner.kill('SIGKILL');
  if (work) {
    await stopLocalStack(join(work, 'stack'));
    rmSync(work, { recursive: true, force: true });
  }
});

/** A test file that records its worker's pid (and starts a stack when `dataDir` is given), then waits. */
const blockingTest = (name: string, dataDir?: string): string => `
const { writeFileSync } = require('node:fs');
test('${name} blocks', async () => {
  ${
    dataDir
      ? `const { startLocalStack } = require(${JSON.stringify(join(ROOT, 'infra/local/stack.ts'))});
  await startLocalStack({ dataDir: ${JSON.stringify(dataDir)} });`
      : ''
  }
  writeFileSync(${JSON.stringify(join('PIDS', name))}, String(process.pid));
  await new Promise(() => undefined);
}, 600000);
`;

it('SIGKILL of the jest parent: its workers exit, and the stack a worker held stops', async () => {
  work = mkdtempSync(join(tmpdir(), 'jda-orphans-'));
  const pids = join(work, 'pids');
  const dataDir = join(work, 'stack');
  mkdirSync(pids);
  mkdirSync(join(work, 'tests'));
  writeFileSync(join(work, 'tests/a.test.js'), blockingTest('a', dataDir).replaceAll('"PIDS', `"${pids}`));
  writeFileSync(join(work, 'tests/b.test.js'), blockingTest('b').replaceAll('"PIDS', `"${pids}`));
  writeFileSync(
    join(work, 'jest.config.js'),
    `module.exports = ${JSON.stringify({
      rootDir: work,
      testEnvironment: join(ROOT, 'test/setup/environment.cjs'),
      testMatch: ['**/tests/*.test.js'],
      // The stack's TypeScript sources, as this project's own jest config transforms them.
      transform: {
        '^.+\\.ts$': [
          join(ROOT, 'node_modules/ts-jest'),
          { diagnostics: false, tsconfig: join(ROOT, 'tsconfig.json') },
        ],
      },
      maxWorkers: 2,
    })};`,
  );
  runner = spawn(process.execPath, [join(ROOT, 'node_modules/jest/bin/jest.js')], {
    cwd: work,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = collect(runner);
  const started = await pollUntil(
    () => ['a', 'b'].every((n) => existsSync(join(pids, n))) || runner?.exitCode !== null,
    90_000,
    100,
  );
  expect({ started, exited: runner.exitCode, stderr: runner.exitCode === null ? '' : run.stderr() }).toEqual({
    started: true,
    exited: null,
    stderr: '',
  });
  const workers = ['a', 'b'].map((n) => Number(readFileSync(join(pids, n), 'utf8')));
  const stack = recordedPids(dataDir);
  expect(workers.every(isAlive) && stack.length === 3 && stack.every(isAlive)).toBe(true);
  expect(workers).not.toContain(runner.pid);

  runner.kill('SIGKILL');
  await run.done;
  const gone = await pollUntil(() => [...workers, ...stack].every((pid) => !isAlive(pid)), 30_000, 100);
  expect([...workers, ...stack].filter(isAlive)).toEqual([]);
  expect(gone).toBe(true);
});
