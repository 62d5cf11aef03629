import { readFileSync } from 'node:fs';

/**
 * Process liveness and process-group signalling for the emulators. Liveness is checked by signal 0
 * plus, on Linux, the /proc state: a zombie answers signal 0 but is already dead, and an orphaned
 * emulator's zombie lingers wherever PID 1 does not reap.
 */
export const isAlive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const state = procState(pid);
  return state !== 'Z' && state !== 'X';
};

/** The one-letter state from /proc/<pid>/stat, or undefined where /proc is not available. */
const procState = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses; the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
};

/**
 * Whether `pid` still runs the program we started (its command line contains `marker`), so a stale
 * state file never makes us signal an unrelated process that reused the pid. Without /proc we
 * cannot tell and trust the pid.
 */
export const runsProgram = (pid: number, marker: string): boolean => {
  if (!isAlive(pid)) return false;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // A process on its way out has released its memory, command line included, but still runs: it
    // is still ours (counting it gone made stop() return with a pid alive — a JVM exits slowly).
    return cmdline === '' || cmdline.includes(marker);
  } catch {
    return true;
  }
};

/** Sends `signal` to a process group (or a single pid); "no such process" is not an error. */
export const signal = (pid: number, sig: NodeJS.Signals, group: boolean): void => {
  try {
    process.kill(group ? -pid : pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
};

/** Polls `check` every `intervalMs` until it returns true or `timeoutMs` passes; returns its last answer. */
export const pollUntil = async (
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 50,
): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};
