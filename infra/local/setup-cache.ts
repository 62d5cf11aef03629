import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalSetup } from './synth';

/**
 * A checkout's cache of the default local setup (the synthesized definition, timeouts and memory a
 * local run takes from the construct). The installed package ships it (`archiver-local.json`); a
 * checkout synthesized it in every process that ran the archiver — 3–4 s of CPU for `jobarchive run`
 * and for each test file on the state machine. The cache is keyed by a hash of every source file
 * synthesis can read (infra/, shared/, functions/, the lock file, cdk.json), so an edit anywhere
 * there synthesizes afresh; it lives in node_modules/.cache (npm ci starts it empty).
 */
const INPUT_DIRS = ['infra', 'shared', 'functions'];
const INPUT_FILES = ['package-lock.json', 'cdk.json'];

const sourceFiles = (root: string, dir: string): string[] => {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(root, rel));
    else if (e.name.endsWith('.ts')) out.push(rel);
  }
  return out;
};

/** The cache file for the sources as they are now (undefined where they cannot be read). */
const cacheFile = (root: string): string | undefined => {
  try {
    const hash = createHash('sha256');
    const files = [...INPUT_DIRS.flatMap((d) => sourceFiles(root, d)).sort(), ...INPUT_FILES];
    for (const f of files) {
      hash.update(`${f}\0`);
      hash.update(readFileSync(join(root, f)));
    }
    return join(root, 'node_modules/.cache/job-details-archive', `local-setup-${hash.digest('hex')}.json`);
  } catch {
    return undefined;
  }
};

/** The default setup from the cache, or synthesized by `synthesize` and cached (written atomically). */
export const cachedDefaultSetup = (root: string, synthesize: () => LocalSetup): LocalSetup => {
  const file = cacheFile(root);
  if (file === undefined) return synthesize();
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LocalSetup;
  } catch {
    // Not cached yet (or unreadable): synthesize below.
  }
  const setup = synthesize();
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(setup));
    renameSync(tmp, file);
  } catch {
    // A read-only checkout: synthesize every time, as before.
  }
  return setup;
};
