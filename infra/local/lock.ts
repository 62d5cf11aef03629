import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalStackError } from './errors';
import { isAlive, pollUntil } from './process';

/**
 * `stack.lock` in the data dir serialises starts: two processes starting the same dir at once must
 * not both spawn emulators, nor take a half-started stack for a dead one. A lock whose holder died
 * is taken over. Callers queue starts within one process themselves.
 */
const lockPath = (dataDir: string): string => join(dataDir, 'stack.lock');

const tryLock = (path: string): boolean => {
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = Number(readFileSafe(path));
  // Starts within one process are queued by the caller, so our own pid here is a leftover of an
  // earlier process that had the same pid.
  if (holder === process.pid || !isAlive(holder)) rmSync(path, { force: true });
  return false;
};

const readFileSafe = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/** One attempt at the lock, synchronously (exit handlers cannot wait); release with `unlockSync`. */
export const tryLockSync = (dataDir: string): boolean => tryLock(lockPath(dataDir));

export const unlockSync = (dataDir: string): void => {
  if (readFileSafe(lockPath(dataDir)) === String(process.pid)) rmSync(lockPath(dataDir), { force: true });
};

export const withStartLock = async <T>(
  dataDir: string,
  timeoutMs: number,
  fn: () => Promise<T>,
  abort?: AbortSignal,
): Promise<T> => {
  const path = lockPath(dataDir);
  const locked = await pollUntil(() => abort?.aborted === true || tryLock(path), timeoutMs, 100);
  if (abort?.aborted) {
    if (locked) unlockSync(dataDir);
    throw new LocalStackError('start-up interrupted');
  }
  if (!locked) {
    throw new LocalStackError(
      `timed out waiting for process ${readFileSafe(path)} to finish starting ${dataDir}`,
    );
  }
  try {
    return await fn();
  } finally {
    if (readFileSafe(path) === String(process.pid)) rmSync(path, { force: true });
  }
};
