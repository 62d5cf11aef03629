import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { InvalidInputError } from '../../shared/errors';
import { STEP_BUNDLE, STEP_HANDLER } from './step-bundle';

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
export const stepEntry = (step: ArchiverStep): string => path.join(TREE_ROOT, 'functions', `${step}.ts`);
/** Where `npm run build` puts a step's bundle; the built construct deploys it as it is. */
export const prebuiltStepDir = (step: ArchiverStep): string => path.join(TREE_ROOT, 'lambda', step);

/**
 * The runtime every step runs on: the newest Node.js the installed aws-cdk-lib knows (cdk-nag's
 * AwsSolutions-L1 flags anything older).
 */
export const STEP_RUNTIME = Runtime.NODEJS_24_X;

export interface StepFunctionOptions {
  readonly step: ArchiverStep;
  readonly memoryMb: number;
  readonly timeout: Duration;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * One step's Lambda on ARM: its own role (no AWS managed policy: the role may write only to its own
 * log group) and its own log group with a retention. The code is the same esbuild bundle either way
 * (STEP_BUNDLE): prebuilt in the installed package (no bundler, no lock file needed at synth), or
 * bundled by NodejsFunction from the sources in a checkout — locally, never Docker, so `cdk synth`
 * works offline.
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
  const common = {
    runtime: STEP_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: opts.memoryMb,
    timeout: opts.timeout,
    role,
    logGroup,
    tracing: Tracing.ACTIVE,
    environment: { ...opts.environment },
  };
  if (!FROM_SOURCES) {
    const dir = prebuiltStepDir(opts.step);
    if (!existsSync(path.join(dir, STEP_BUNDLE.file)))
      throw new InvalidInputError(
        'step bundle',
        `${dir}/${STEP_BUNDLE.file} is missing: build the package (npm run build)`,
      );
    return new LambdaFunction(scope, `${id}Function`, {
      ...common,
      code: Code.fromAsset(dir),
      handler: STEP_HANDLER,
    });
  }
  return new NodejsFunction(scope, `${id}Function`, {
    ...common,
    entry: stepEntry(opts.step),
    handler: 'handler',
    projectRoot: TREE_ROOT,
    depsLockFilePath: path.join(TREE_ROOT, 'package-lock.json'),
    bundling: {
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      target: STEP_BUNDLE.target,
      sourceMap: STEP_BUNDLE.sourcemap,
      sourcesContent: STEP_BUNDLE.sourcesContent,
      mainFields: [...STEP_BUNDLE.mainFields],
      // Bundle the SDK too: the version we test is the version that runs, not whatever the runtime ships.
      externalModules: [],
      banner: STEP_BUNDLE.banner,
    },
  });
};
