#!/usr/bin/env node
'use strict';
/**
 * `jobarchive` launcher. In a checkout it runs the TypeScript sources through tsx (no build step);
 * installed from npm, where only the build ships, it runs `dist/`. Node is checked before anything
 * else is loaded: an older one gets one line naming the fix (in a checkout, the project's pinned Node
 * 22 from .ci/node runs it instead, as for every npm script).
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const source = join(__dirname, '../infra/cli/main.ts');
const major = Number(process.versions.node.split('.')[0]);
const pinned = join(__dirname, '../.ci/node22.cjs');
if (major < 22 && existsSync(source) && existsSync(pinned)) {
  const child = require('node:child_process').spawn(
    process.execPath,
    [pinned, 'node', __filename, ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  // A Ctrl-C reaches the whole process group, this process included: outlive it and end with the
  // CLI's own code (`up` ends 0 on Ctrl-C) instead of dying of the signal (130). A signal sent to
  // this process alone is passed on.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      if (child.exitCode === null) child.kill(sig);
    });
  }
  child.on('exit', (code, sig) => {
    process.exit(code ?? 128 + (require('node:os').constants.signals[sig] || 1));
  });
} else if (major < 22) {
  process.stderr.write(
    `jobarchive: needs Node.js >= 22 (this is ${process.version}); install Node 22 (e.g. \`nvm install 22\`) and run it again\n`,
  );
  process.exit(1);
} else if (existsSync(source)) {
  require('tsx/cjs');
  require(source).main(process.argv.slice(2));
} else {
  require('../dist/infra/cli/main.js').main(process.argv.slice(2));
}
