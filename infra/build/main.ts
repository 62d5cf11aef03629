/**
 * `npm run build`: the package as npm ships it, in `dist/`.
 *
 * 1. tsc (tsconfig.build.json): CommonJS + `.d.ts` for infra/, functions/, shared/ — no tests.
 * 2. The embedded stack's helper scripts (`infra/local/*.cjs`), which run as their own processes.
 * 3. ONE prebuilt Lambda bundle for every archiver step (`dist/lambda/<step>.mjs` + shared
 *    `chunks/`, step-bundle.ts), so the installed construct deploys code without a bundler or our
 *    lock file, and the SDK ships once, not six times.
 *
 * No source maps unless asked for: `JDA_SOURCEMAPS=1 npm run build` adds them (tsc's and the bundle's).
 * 4. The local runner's setup (`dist/infra/local/archiver-local.json`: the synthesized definition,
 *    timeouts and memory of the default construct), so `jobarchive run` installed needs no CDK.
 * 5. The ESM face of every `exports` entry (`dist/esm/*.mjs` + `.d.mts`): a wrapper re-exporting the
 *    CommonJS build, so `import` and `require` share one module instance (an `instanceof` check on
 *    our errors holds whichever way the caller loaded us).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';
import { sourceMapsRequested, stepBundleOptions } from '../construct/step-bundle';
import { PREBUILT_BUNDLE_DIR } from '../construct/step-functions';
import { SHIPPED_SETUP_FILE } from '../local/runner';
import { synthesizedLocalSetup } from '../local/synth';
import { packageRoot } from '../package-root';
import { esmEntries, wrapperSource, wrapperTypes } from './esm-wrappers';

const ROOT = packageRoot();
const DIST = join(ROOT, 'dist');
const SOURCE_MAPS = sourceMapsRequested();
const log = (line: string): void => {
  process.stdout.write(`build: ${line}\n`);
};

const compile = (): void => {
  execFileSync(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '-p',
      join(ROOT, 'tsconfig.build.json'),
      ...(SOURCE_MAPS ? ['--sourceMap', '--inlineSources'] : []),
    ],
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
  // PREBUILT_BUNDLE_DIR resolves against this file's tree (the checkout); the build lands in dist/.
  const outdir = join(DIST, relative(ROOT, PREBUILT_BUNDLE_DIR));
  const result = await build({ ...stepBundleOptions(ROOT, outdir, SOURCE_MAPS), metafile: true });
  const outputs = Object.entries(result.metafile.outputs);
  const kb = outputs.reduce((sum, [, o]) => sum + o.bytes, 0) / 1024;
  log(
    `lambda/ ${outputs.length} files, ${kb.toFixed(0)} KB (one bundle, every step${SOURCE_MAPS ? ', source maps' : ''})`,
  );
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
