'use strict';
/**
 * jest's node environment, plus: a worker dies with its parent. jest-worker's children ignore their
 * IPC channel closing, so a jest run killed hard (an interrupted CI job) left a busy worker running —
 * and with it every embedded stack the worker held. On `disconnect` the worker exits; its exit hooks
 * (infra/local/owner-hooks.ts) release its stacks, and each supervisor stops emulators no one holds.
 * Loaded by jest in the worker's own context (not a test's sandbox), once per worker.
 */
const { TestEnvironment } = require('jest-environment-node');

let watching = false;

class WorkerEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    if (!watching && process.channel) {
      watching = true;
      process.once('disconnect', () => {
        process.stderr.write(`jest worker ${process.pid}: parent gone, exiting\n`);
        process.exit(1);
      });
    }
  }
}

module.exports = WorkerEnvironment;
