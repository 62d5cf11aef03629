import { accessSync, constants, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const code = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? String(err);

const isDir = (path: string): boolean | undefined => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return undefined;
  }
};

/**
 * Why `dir` cannot hold the stack, or null: checked before anything is started, so a bad folder is
 * one line naming the problem. A missing folder is created here (and a probe file written and
 * removed: permissions alone do not tell a read-only file system, nor what root may do).
 */
export const dataDirProblem = (dir: string): string | null => {
  const here = isDir(dir);
  if (here === false) return `${dir} is a file, not a folder`;
  const missing: string[] = [];
  if (here === undefined) {
    let up = dir;
    while (isDir(up) === undefined && dirname(up) !== up) {
      missing.unshift(up);
      up = dirname(up);
    }
    if (isDir(up) === false) return `${dir} cannot be created: ${up} is a file`;
  }
  try {
    // Level by level (a recursive mkdir can spin on file systems such as /proc).
    for (const d of missing) mkdirSync(d);
    accessSync(dir, constants.W_OK | constants.X_OK);
    const probe = join(dir, `.write-probe-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (err) {
    return `${dir} is not a writable folder (${code(err)})`;
  }
  return null;
};
