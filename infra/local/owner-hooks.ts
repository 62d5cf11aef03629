import { signal } from './process';

/**
 * Process groups this process owns, signalled synchronously when it exits or is interrupted: the
 * fast path. The supervisor's owner watch is the backstop for exits that run no handler (SIGKILL).
 * `isOurs` guards against signalling a group id that was freed and reused after the stack died
 * behind our back (e.g. `stopLocalStack` from another process).
 */
const owned = new Map<number, () => boolean>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

const killAll = (): void => {
  for (const [pgid, isOurs] of owned) if (isOurs()) signal(pgid, 'SIGTERM', true);
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

export const trackOwned = (pgid: number, isOurs: () => boolean): void => {
  if (owned.size === 0) hook();
  owned.set(pgid, isOurs);
};

export const untrackOwned = (pgid: number): void => {
  if (!owned.delete(pgid)) return;
  if (owned.size === 0) unhook();
};
