import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `stack.json` in the data dir: who runs the emulators for this dir. The next start uses it to reuse
 * a live stack or to clean up one whose owner crashed; `stopLocalStack` uses it from any process.
 */
export interface StackState {
  readonly version: 1;
  /** The process that started the stack and stops it. */
  readonly ownerPid: number;
  /** The detached supervisor; it leads the process group the emulators run in (pgid = its pid). */
  readonly supervisorPid: number;
  readonly pgid: number;
  readonly dynamoPid: number;
  readonly s3Pid: number;
  readonly dynamoPort: number;
  readonly s3Port: number;
  readonly dynamoEndpoint: string;
  readonly s3Endpoint: string;
  readonly tableName: string;
  readonly bucketName: string;
  readonly startedAt: string;
}

export const STATE_FILE = 'stack.json';

export const statePath = (dataDir: string): string => join(dataDir, STATE_FILE);

const isPid = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;

/** The state of `dataDir`, or undefined if there is none or it is unreadable (treated as no stack). */
export const readState = (dataDir: string): StackState | undefined => {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(statePath(dataDir), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const s = raw as Partial<StackState>;
  const ok =
    s.version === 1 &&
    isPid(s.ownerPid) &&
    isPid(s.supervisorPid) &&
    isPid(s.pgid) &&
    isPid(s.dynamoPid) &&
    isPid(s.s3Pid) &&
    typeof s.dynamoEndpoint === 'string' &&
    typeof s.s3Endpoint === 'string' &&
    typeof s.tableName === 'string' &&
    typeof s.bucketName === 'string';
  return ok ? (s as StackState) : undefined;
};

/** Written via a temp file + rename so a reader never sees half a file. */
export const writeState = (dataDir: string, state: StackState): void => {
  const tmp = `${statePath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, statePath(dataDir));
};

/** Removes the state only if it still describes the stack led by `supervisorPid` (a newer one may own it). */
export const removeState = (dataDir: string, supervisorPid: number): void => {
  if (readState(dataDir)?.supervisorPid === supervisorPid) rmSync(statePath(dataDir), { force: true });
};
