import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, DockerImage, Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { InvalidInputError } from '../../shared/errors';
import { sourceMapsRequested, stepBundleFile, stepBundleOptions, stepHandler } from './step-bundle';

import { ARCHIVER_STEPS, type ArchiverStep } from './step-names';

export { ARCHIVER_STEPS, type ArchiverStep };

/** Steps that read/write whole batches of objects get more time by default. */
const HEAVY_STEPS: readonly ArchiverStep[] = ['archive-batch', 'forget', 'redact'];
/**
 * Memory from the measured peaks (docs/benchmarks.md "Memory"): ArchiveBatch peaks at 255 MB on a
 * 100 MB shop-month and 380 MB on a 1 GB one, so 512 MB (Lambda bills memory × time; the step waits on
 * S3 GETs, not CPU). Forget and redact rewrite whole parts: 1024 MB.
 */
export const defaultMemoryMb = (step: ArchiverStep): number =>
  step === 'forget' || step === 'redact' ? 1024 : 512;
export const defaultTimeout = (step: ArchiverStep): Duration =>
  HEAVY_STEPS.includes(step) ? Duration.minutes(15) : Duration.minutes(5);

/** `archive-batch` → `ArchiveBatch`: construct ids and state names. */
export const pascalStep = (step: ArchiverStep): string =>
  step
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/** This file's tree root: the checkout (running the `.ts` sources) or `dist/` (the installed build). */
const TREE_ROOT = path.resolve(__dirname, '../..');
/** Running from the TypeScript sources (a checkout, tests) rather than the package's build. */
const FROM_SOURCES = path.extname(__filename) === '.ts';
/** Where `npm run build` puts the shared bundle; the built construct deploys it as it is. */
export const PREBUILT_BUNDLE_DIR = path.join(TREE_ROOT, 'lambda');

/**
 * The code of every step: ONE asset (step-bundle.ts), bound once by the first function and shared by
 * the others. Installed, it is the prebuilt `lambda/` of the package (no bundler, no lock file needed at
 * synth); in a checkout, the construct bundles the sources with esbuild at synth — locally, never
 * Docker, so `cdk synth` works offline.
 */
export const createStepCode = (): Code => {
  if (!FROM_SOURCES) {
    for (const step of ARCHIVER_STEPS) {
      const file = path.join(PREBUILT_BUNDLE_DIR, stepBundleFile(step));
      if (!existsSync(file))
        throw new InvalidInputError('step bundle', `${file} is missing: build the package (npm run build)`);
    }
    return Code.fromAsset(PREBUILT_BUNDLE_DIR);
  }
  return Code.fromAsset(path.join(TREE_ROOT, 'functions'), {
    // The bundle also holds shared/ and the SDK: hash what is deployed, not the entry folder.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: local bundling always succeeds or throws.
      image: DockerImage.fromRegistry('job-details-archive/no-docker-bundling'),
      local: {
        tryBundle(outputDir: string): boolean {
          const esbuild = require('esbuild') as typeof import('esbuild');
          esbuild.buildSync(stepBundleOptions(TREE_ROOT, outputDir, sourceMapsRequested()));
          return true;
        },
      },
    },
  });
};

/**
 * The runtime every step runs on: the newest Node.js the installed aws-cdk-lib knows (cdk-nag's
 * AwsSolutions-L1 flags anything older).
 */
export const STEP_RUNTIME = Runtime.NODEJS_24_X;

export interface StepFunctionOptions {
  readonly step: ArchiverStep;
  /** The shared code of every step (createStepCode). */
  readonly code: Code;
  readonly memoryMb: number;
  readonly timeout: Duration;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * One step's Lambda on ARM: its own role (no AWS managed policy: the role may write only to its own
 * log group) and its own log group with a retention. The code is the shared bundle; the handler names
 * the step's entry in it.
 */
export const createStepFunction = (scope: Construct, opts: StepFunctionOptions): LambdaFunction => {
  const id = pascalStep(opts.step);
  const logGroup = new LogGroup(scope, `${id}Logs`, {
    retention: opts.logRetention,
    removalPolicy: opts.removalPolicy,
  });
  const role = new Role(scope, `${id}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: `job-details-archive ${opts.step} step`,
  });
  logGroup.grantWrite(role);
  return new LambdaFunction(scope, `${id}Function`, {
    runtime: STEP_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: opts.memoryMb,
    timeout: opts.timeout,
    role,
    logGroup,
    tracing: Tracing.ACTIVE,
    environment: { ...opts.environment },
    code: opts.code,
    handler: stepHandler(opts.step),
  });
};
