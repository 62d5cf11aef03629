/**
 * Stacks this process holds, released synchronously when it exits or is interrupted: its holder file
 * goes, and the stack is stopped at once if no other process holds it (the fast path). The
 * supervisor's holder watch is the backstop for exits that run no handler (SIGKILL).
 */
const owned = new Map<string, () => void>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const killAll = (): void => {
  for (const release of owned.values()) release();
  owned.clear();
};

let hooked = false;

const onSignal = (sig: NodeJS.Signals): void => {
  // An earlier listener of the same signal may have stopped our stacks (and unhooked us) already.
  if (!hooked) return;
  killAll();
  // Alone, our listener would swallow the signal's default "terminate"; re-raise it without us.
  // When others listen, they decide how the process ends.
  const alone = process.listeners(sig).every((l) => l === onSignal);
  unhook();
  if (alone) process.kill(process.pid, sig);
};

const hook = (): void => {
  hooked = true;
  process.on('exit', killAll);
  for (const sig of SIGNALS) process.on(sig, onSignal);
};

const unhook = (): void => {
  hooked = false;
  process.off('exit', killAll);
  for (const sig of SIGNALS) process.off(sig, onSignal);
};

export const trackOwned = (hold: string, release: () => void): void => {
  if (owned.size === 0) hook();
  owned.set(hold, release);
};

export const untrackOwned = (hold: string): void => {
  if (!owned.delete(hold)) return;
  if (owned.size === 0) unhook();
};
