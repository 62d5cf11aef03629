import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalStackInfo } from './env';
import { isAlive } from './process';

/**
 * How the jest global setup hands its stack to test workers when they do not inherit its
 * environment: a small JSON file named after the jest main process, which is the workers' parent
 * (child-process workers) or the test process itself (in-band runs, worker threads).
 */
export interface StackHandoff extends LocalStackInfo {
  readonly dataDir: string;
  readonly env: Readonly<Record<string, string>>;
}

const PREFIX = 'jda-jest-stack-';
/** Prefix of the temp data dirs the jest global setup creates. */
export const JEST_DATA_DIR_PREFIX = join(tmpdir(), 'jda-jest-');

export const handoffFile = (jestPid: number): string => join(tmpdir(), `${PREFIX}${jestPid}.json`);

export const writeHandoff = (jestPid: number, handoff: StackHandoff): void => {
  writeFileSync(handoffFile(jestPid), `${JSON.stringify(handoff, null, 2)}\n`);
};

export const removeHandoff = (jestPid: number): void => rmSync(handoffFile(jestPid), { force: true });

const readOne = (pid: number): StackHandoff | undefined => {
  try {
    const h = JSON.parse(readFileSync(handoffFile(pid), 'utf8')) as Partial<StackHandoff>;
    const ok =
      typeof h.dataDir === 'string' &&
      typeof h.dynamoEndpoint === 'string' &&
      typeof h.s3Endpoint === 'string' &&
      typeof h.env === 'object' &&
      h.env !== null;
    return ok ? (h as StackHandoff) : undefined;
  } catch {
    return undefined;
  }
};

/** The handoff of the jest run this process belongs to, if any. */
export const readHandoff = (): StackHandoff | undefined => readOne(process.ppid) ?? readOne(process.pid);

/**
 * Handoffs left by jest runs whose main process is gone (killed before its teardown ran), with the
 * temp data dir each names when that dir is one of ours (never an arbitrary path from a bad file).
 */
export const staleHandoffs = (): { pid: number; dataDir: string | undefined }[] =>
  readdirSync(tmpdir())
    .filter((name) => name.startsWith(PREFIX) && name.endsWith('.json'))
    .map((name) => Number(name.slice(PREFIX.length, -'.json'.length)))
    .filter((pid) => Number.isInteger(pid) && pid > 0 && !isAlive(pid))
    .map((pid) => {
      const dataDir = readOne(pid)?.dataDir;
      return { pid, dataDir: dataDir?.startsWith(JEST_DATA_DIR_PREFIX) ? dataDir : undefined };
    });
