/**
 * `npm run build`: the package as npm ships it, in `dist/`.
 *
 * 1. tsc (tsconfig.build.json): CommonJS + `.d.ts` for infra/, functions/, shared/ — no tests.
 * 2. The embedded stack's helper scripts (`infra/local/*.cjs`), which run as their own processes.
 * 3. One prebuilt Lambda bundle per archiver step (`dist/lambda/<step>/index.mjs`, STEP_BUNDLE), so
 *    the installed construct deploys code without a bundler or our lock file.
 * 4. The local runner's setup (`dist/infra/local/archiver-local.json`: the synthesized definition,
 *    timeouts and memory of the default construct), so `jobarchive run` installed needs no CDK.
 * 5. The ESM face of every `exports` entry (`dist/esm/*.mjs` + `.d.mts`): a wrapper re-exporting the
 *    CommonJS build, so `import` and `require` share one module instance (an `instanceof` check on
 *    our errors holds whichever way the caller loaded us).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { STEP_BUNDLE } from '../construct/step-bundle';
import { ARCHIVER_STEPS, prebuiltStepDir, stepEntry } from '../construct/step-functions';
import { SHIPPED_SETUP_FILE } from '../local/runner';
import { synthesizedLocalSetup } from '../local/synth';
import { packageRoot } from '../package-root';
import { esmEntries, wrapperSource, wrapperTypes } from './esm-wrappers';

const ROOT = packageRoot();
const DIST = join(ROOT, 'dist');
const log = (line: string): void => {
  process.stdout.write(`build: ${line}\n`);
};

const compile = (): void => {
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')],
    {
      stdio: 'inherit',
    },
  );
  log('tsc → dist/');
};

const copyHelperScripts = (): void => {
  const from = join(ROOT, 'infra/local');
  for (const name of readdirSync(from).filter((n) => n.endsWith('.cjs'))) {
    copyFileSync(join(from, name), join(DIST, 'infra/local', name));
  }
};

const bundleSteps = async (): Promise<void> => {
  for (const step of ARCHIVER_STEPS) {
    // prebuiltStepDir resolves against this file's tree (the checkout); the build lands in dist/.
    const outdir = join(DIST, relative(ROOT, prebuiltStepDir(step)));
    await build({
      entryPoints: [stepEntry(step)],
      outfile: join(outdir, STEP_BUNDLE.file),
      bundle: true,
      format: STEP_BUNDLE.format,
      platform: STEP_BUNDLE.platform,
      target: STEP_BUNDLE.target,
      sourcemap: STEP_BUNDLE.sourcemap,
      sourcesContent: STEP_BUNDLE.sourcesContent,
      mainFields: [...STEP_BUNDLE.mainFields],
      banner: { js: STEP_BUNDLE.banner },
      logLevel: 'warning',
    });
    const kb = statSync(join(outdir, STEP_BUNDLE.file)).size / 1024;
    log(`lambda/${step}/${STEP_BUNDLE.file} ${kb.toFixed(0)} KB`);
  }
};

const writeLocalSetup = (): void => {
  const file = join(DIST, 'infra/local', SHIPPED_SETUP_FILE);
  writeFileSync(file, `${JSON.stringify(synthesizedLocalSetup())}\n`);
  log(`infra/local/${SHIPPED_SETUP_FILE} (the synthesized definition for local runs)`);
};

const writeEsmWrappers = (): void => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: unknown };
  for (const entry of esmEntries(manifest.exports)) {
    const cjs = join(ROOT, entry.require);
    const names = Object.keys(require(cjs) as object);
    const wrapper = join(ROOT, entry.import);
    mkdirSync(dirname(wrapper), { recursive: true });
    writeFileSync(wrapper, wrapperSource(relative(dirname(wrapper), cjs), names));
    writeFileSync(join(ROOT, entry.importTypes), wrapperTypes(relative(dirname(wrapper), cjs)));
    log(`${entry.subpath} → ${entry.import} (${names.length} names)`);
  }
};

const main = async (): Promise<void> => {
  rmSync(DIST, { recursive: true, force: true });
  compile();
  copyHelperScripts();
  await bundleSteps();
  writeLocalSetup();
  writeEsmWrappers();
};

main().catch((err: unknown) => {
  process.stderr.write(`build: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
