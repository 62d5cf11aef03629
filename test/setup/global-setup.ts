import { mkdtempSync, rmSync } from 'node:fs';
import { JEST_DATA_DIR_PREFIX, removeHandoff, staleHandoffs, writeHandoff } from '../../infra/local/handoff';
import {
  applyStackEnv,
  type LocalStack,
  stackEnv,
  startLocalStack,
  stopLocalStack,
} from '../../infra/local/stack';

/**
 * Starts ONE local stack for the whole jest run, in a fresh temp data dir (so parallel jest runs in
 * the same checkout never share or clobber each other's emulators), and exports its endpoints:
 * into process.env (workers are forked afterwards and inherit it) and into a handoff file that
 * test/setup/env.ts reads in case they do not.
 */
declare global {
  // Read by global-teardown.ts: jest runs both in the same process.
  var __JDA_LOCAL_STACK__: LocalStack | undefined;
}

/** Leftovers of jest runs killed before their teardown (their emulators died with them). */
const sweep = async (): Promise<void> => {
  for (const { pid, dataDir } of staleHandoffs()) {
    if (dataDir) {
      await stopLocalStack(dataDir).catch(() => false);
      rmSync(dataDir, { recursive: true, force: true });
    }
    removeHandoff(pid);
  }
};

export default async function globalSetup(): Promise<void> {
  await sweep();
  const dataDir = mkdtempSync(JEST_DATA_DIR_PREFIX);
  let stack: LocalStack;
  try {
    stack = await startLocalStack({ dataDir });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  globalThis.__JDA_LOCAL_STACK__ = stack;
  applyStackEnv(stack);
  writeHandoff(process.pid, {
    dataDir,
    dynamoEndpoint: stack.dynamoEndpoint,
    s3Endpoint: stack.s3Endpoint,
    tableName: stack.tableName,
    bucketName: stack.bucketName,
    env: stackEnv(stack),
  });
}
