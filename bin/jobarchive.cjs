#!/usr/bin/env node
'use strict';
/**
 * `jobarchive` launcher: registers tsx so the TypeScript sources run as they are (no build step),
 * then hands the command line to infra/cli/main.ts.
 */
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  process.stderr.write(`jobarchive: needs Node.js >= 22 (this is ${process.version})\n`);
  process.exit(1);
}
require('tsx/cjs');
require('../infra/cli/main.ts').main(process.argv.slice(2));
