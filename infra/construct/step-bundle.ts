/**
 * How a step's Lambda code is bundled — one description for both paths that produce it: the package
 * build (`npm run build` → `dist/lambda/<step>/index.mjs`, shipped prebuilt) and, in a checkout,
 * `NodejsFunction`'s own esbuild run. Plain data, so the construct need not load esbuild.
 */
export const STEP_BUNDLE = {
  /** The file a bundle is written to; the Lambda handler is `index.handler`. */
  file: 'index.mjs',
  format: 'esm',
  platform: 'node',
  /** Matches the functions' runtime (STEP_RUNTIME). */
  target: 'node24',
  sourcemap: true,
  // Maps name files and lines for stack traces; the sources themselves (~10 MB over four bundles,
  // mostly the AWS SDK) would only ride along in every deployment and in the package.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // CommonJS dependencies inside an ESM bundle still call require(); give them one.
  banner:
    "import { createRequire as topLevelCreateRequire } from 'node:module';const require = topLevelCreateRequire(import.meta.url);",
} as const;

/** The Lambda handler of every step, as a bundle exports it. */
export const STEP_HANDLER = 'index.handler';
