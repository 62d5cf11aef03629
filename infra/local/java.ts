import { spawnSync } from 'node:child_process';
import { LocalStackError } from './errors';

export const MIN_JAVA = 17;

/** Major version from `java -version` output: `"17.0.15"` → 17, legacy `"1.8.0_392"` → 8. */
export const parseJavaMajor = (versionOutput: string): number | undefined => {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!m?.[1]) return undefined;
  const first = Number(m[1]);
  return first === 1 && m[2] !== undefined ? Number(m[2]) : first;
};

/**
 * Checks, before anything is spawned, that `java` runs and is new enough for DynamoDB Local, so a
 * missing JDK is one clear error instead of an emulator that never answers.
 */
export const checkJava = (java: string): void => {
  const res = spawnSync(java, ['-version'], { encoding: 'utf8', timeout: 30_000 });
  if (res.error) {
    const missing = (res.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new LocalStackError(
      `Java ${MIN_JAVA}+ is needed to run DynamoDB Local, but ${missing ? `\`${java}\` was not found on PATH` : `\`${java} -version\` failed: ${res.error.message}`}`,
      { cause: res.error },
    );
  }
  const out = `${res.stderr}${res.stdout}`;
  const major = parseJavaMajor(out);
  if (res.status !== 0 || major === undefined) {
    throw new LocalStackError(
      `Java ${MIN_JAVA}+ is needed to run DynamoDB Local, but \`${java} -version\` did not report a version: ${out.trim().slice(0, 300)}`,
    );
  }
  if (major < MIN_JAVA) {
    throw new LocalStackError(
      `Java ${MIN_JAVA}+ is needed to run DynamoDB Local; \`${java}\` is Java ${major}`,
    );
  }
};
