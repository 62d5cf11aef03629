#!/usr/bin/env node
'use strict';
/**
 * `jobarchive` launcher: registers tsx so the TypeScript sources run as they are (no build step),
 * then hands the command line to infra/cli/main.ts.
 */
require('tsx/cjs');
require('../infra/cli/main.ts').main(process.argv.slice(2));
