import * as path from 'node:path';
import { ARCHIVER_STEPS, type ArchiverStep } from './step-names';

/**
 * How the steps' Lambda code is bundled — one description for both paths that produce it: the package
 * build (`npm run build` → `dist/lambda/`, shipped prebuilt) and, in a checkout, the construct's own
 * local esbuild run at synth. Plain data, so the construct need not load esbuild to describe it.
 *
 * ONE bundle for all six functions: every step is an entry (`<step>.mjs`) of one esbuild run with
 * code splitting, so the AWS SDK and the library sit once in shared chunks (`chunks/`) instead of
 * once per step (six copies made the package 17.8 MB). All functions deploy the same asset (uploaded
 * once) and differ only by handler, `<step>.handler`; a cold start loads only its step's chunks.
 */
export const STEP_BUNDLE = {
  format: 'esm',
  platform: 'node',
  /** Matches the functions' runtime (STEP_RUNTIME). */
  target: 'node24',
  /**
   * Source maps are left out unless asked for (`JDA_SOURCEMAPS=1` at build or synth): they were ~60%
   * of the package, and Lambda only uses them with NODE_OPTIONS=--enable-source-maps.
   */
  sourcemapEnv: 'JDA_SOURCEMAPS',
  mainFields: ['module', 'main'],
  // CommonJS dependencies inside an ESM bundle still call require(); give them one.
  banner:
    "import { createRequire as topLevelCreateRequire } from 'node:module';const require = topLevelCreateRequire(import.meta.url);",
} as const;

/** The file a step's entry is bundled to (beside `chunks/`). */
export const stepBundleFile = (step: ArchiverStep): string => `${step}.mjs`;

/** The Lambda handler of a step in the shared bundle. */
export const stepHandler = (step: ArchiverStep): string => `${step}.handler`;

/** Whether source maps were asked for (env var STEP_BUNDLE.sourcemapEnv = 1/true). */
export const sourceMapsRequested = (env: NodeJS.ProcessEnv = process.env): boolean =>
  /^(1|true)$/i.test(env[STEP_BUNDLE.sourcemapEnv] ?? '');

/**
 * The esbuild options (plain data) that bundle every step from `treeRoot`'s `functions/` into
 * `outdir`: both the package build and the construct's synth-time bundling run exactly these.
 */
export const stepBundleOptions = (treeRoot: string, outdir: string, sourcemap: boolean) => ({
  entryPoints: Object.fromEntries(
    ARCHIVER_STEPS.map((step) => [step, path.join(treeRoot, 'functions', `${step}.ts`)]),
  ),
  outdir,
  outExtension: { '.js': '.mjs' },
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: STEP_BUNDLE.format,
  platform: STEP_BUNDLE.platform,
  target: STEP_BUNDLE.target,
  sourcemap,
  // Maps (when asked for) name files and lines; the sources themselves would only ride along.
  sourcesContent: false,
  mainFields: [...STEP_BUNDLE.mainFields],
  banner: { js: STEP_BUNDLE.banner },
  logLevel: 'warning' as const,
});
