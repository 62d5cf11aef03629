import { rmSync } from 'node:fs';
import { readHandoff, removeHandoff } from '../../infra/local/handoff';
import { stopLocalStack } from '../../infra/local/stack';

/** Stops the run's stack and removes its temp data dir (see global-setup.ts). */
export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.__JDA_LOCAL_STACK__;
  const dataDir = stack?.dataDir ?? readHandoff()?.dataDir;
  try {
    if (stack) await stack.stop();
    // Whoever else may still hold it (a test process that reused the stack): the run is over. Same
    // process as the setup in practice; the state file makes this work from anywhere.
    if (dataDir) await stopLocalStack(dataDir);
  } finally {
    globalThis.__JDA_LOCAL_STACK__ = undefined;
    removeHandoff(process.pid);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
