import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from './process';

/**
 * Who holds the stack of a data dir: one file per hold, `holders/{pid}-{random}` holding the pid and
 * its start time (so a pid reused by another program never counts). The process that started the
 * stack and every process that reused it hold it; the stack runs while any holder lives, so commands
 * sharing a data dir never tear it down under each other. The supervisor (supervisor.cjs, same file
 * format) stops it once none is left; the last holder to stop does so at once.
 */
export const holdersDir = (dataDir: string): string => join(dataDir, 'holders');

/** Field 22 of /proc/<pid>/stat (start time in clock ticks), '' where /proc is not available. */
export const startTimeOf = (pid: number): string => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
};

/**
 * Takes a hold: its own file (`{pid}-{random}`), so holds of one process (or of several module
 * instances in one process, as jest makes) are released one by one. Returns the hold's id.
 */
export const addHolder = (dataDir: string): string => {
  const id = `${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(holdersDir(dataDir), { recursive: true });
  writeFileSync(join(holdersDir(dataDir), id), `${process.pid} ${startTimeOf(process.pid)}\n`);
  return id;
};

export const removeHolder = (dataDir: string, id: string): void => {
  rmSync(join(holdersDir(dataDir), id), { force: true });
};

/** Live holds' pids (one per hold); files of dead processes are removed on the way. */
export const liveHolders = (dataDir: string): number[] => {
  let names: string[];
  try {
    names = readdirSync(holdersDir(dataDir));
  } catch {
    return [];
  }
  const live: number[] = [];
  for (const name of names) {
    const file = join(holdersDir(dataDir), name);
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const [pidText, started = ''] = text.trim().split(' ');
    const pid = Number(pidText);
    if (isAlive(pid) && (started === '' || started === startTimeOf(pid))) live.push(pid);
    else rmSync(file, { force: true });
  }
  return live;
};
