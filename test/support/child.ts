import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The environment of a shell with no stack configured: none of AWS_ENDPOINT_URL*, ECOM_*, JDA_*. */
export const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(AWS_ENDPOINT_URL|ECOM_|JDA_)/.test(k)),
  ) as NodeJS.ProcessEnv;

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A child's output so far, and its end. */
export const collect = (
  child: ChildProcess,
): { done: Promise<Finished>; stdout: () => string; stderr: () => string } => {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  // Its end: exited, and its output read to the end. Counted here rather than taken from 'close',
  // which Node never emits for a child whose IPC channel the parent disconnected.
  const done = new Promise<Finished>((res, rej) => {
    child.on('error', rej);
    let open = [child.stdout, child.stderr].filter((s) => s !== null).length;
    let exit: Pick<Finished, 'code' | 'signal'> | undefined;
    const finish = (): void => {
      if (exit && open === 0) res({ ...exit, stdout, stderr });
    };
    for (const s of [child.stdout, child.stderr])
      s?.once('close', () => {
        open -= 1;
        finish();
      });
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      finish();
    });
  });
  return { done, stdout: () => stdout, stderr: () => stderr };
};

/** The emulator pids the CLI reported on stderr (from the stack it started). */
export const reportedPids = (stderr: string): number[] => {
  const m = /pids supervisor (\d+), dynamodb (\d+), s3rver (\d+)/.exec(stderr);
  if (!m) throw new Error(`no stack pids in stderr:\n${stderr}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
};

/** Whatever `<dir>/stack.json` still records (normally removed on stop). */
export const recordedPids = (dataDir: string): number[] => {
  const file = join(dataDir, 'stack.json');
  if (!existsSync(file)) return [];
  const s = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
  return [s.supervisorPid, s.dynamoPid, s.s3Pid].filter((p): p is number => typeof p === 'number');
};
