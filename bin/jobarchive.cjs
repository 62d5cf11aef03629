#!/usr/bin/env node
'use strict';
/**
 * `jobarchive` launcher. In a checkout it runs the TypeScript sources through tsx (no build step);
 * installed from npm, where only the build ships, it runs `dist/`.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(`jobarchive: needs Node.js >= 22 (this is ${process.version})\n`);
  process.exit(1);
}
const source = join(__dirname, '../infra/cli/main.ts');
if (existsSync(source)) {
  require('tsx/cjs');
  require(source).main(process.argv.slice(2));
} else {
  require('../dist/infra/cli/main.js').main(process.argv.slice(2));
}
