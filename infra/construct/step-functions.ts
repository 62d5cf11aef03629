import * as path from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** The archiver's steps; each is `functions/<step>.ts` exporting `handler`. Order is the run's order. */
export const ARCHIVER_STEPS = ['plan', 'archive-batch', 'tally', 'report'] as const;
export type ArchiverStep = (typeof ARCHIVER_STEPS)[number];

/** Steps that read/write whole batches of objects get more memory and time by default. */
const HEAVY_STEPS: readonly ArchiverStep[] = ['archive-batch'];
export const defaultMemoryMb = (step: ArchiverStep): number => (HEAVY_STEPS.includes(step) ? 1024 : 512);
export const defaultTimeout = (step: ArchiverStep): Duration =>
  HEAVY_STEPS.includes(step) ? Duration.minutes(15) : Duration.minutes(5);

/** `archive-batch` → `ArchiveBatch`: construct ids and state names. */
export const pascalStep = (step: ArchiverStep): string =>
  step
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

const PROJECT_ROOT = path.resolve(__dirname, '../..');
export const stepEntry = (step: ArchiverStep): string => path.join(PROJECT_ROOT, 'functions', `${step}.ts`);

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
 * One step's Lambda: bundled locally by esbuild (never Docker — `cdk synth` must work offline),
 * ESM with source maps, its own role (no AWS managed policy: the role may write only to its own
 * log group) and its own log group with a retention.
 */
export const createStepFunction = (scope: Construct, opts: StepFunctionOptions): NodejsFunction => {
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
  return new NodejsFunction(scope, `${id}Function`, {
    entry: stepEntry(opts.step),
    handler: 'handler',
    runtime: STEP_RUNTIME,
    architecture: Architecture.ARM_64,
    memorySize: opts.memoryMb,
    timeout: opts.timeout,
    role,
    logGroup,
    tracing: Tracing.ACTIVE,
    environment: { ...opts.environment },
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
    bundling: {
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      sourceMap: true,
      mainFields: ['module', 'main'],
      // Bundle the SDK too: the version we test is the version that runs, not whatever the runtime ships.
      externalModules: [],
      // CommonJS dependencies inside an ESM bundle still call require(); give them one.
      banner:
        "import { createRequire as topLevelCreateRequire } from 'node:module';const require = topLevelCreateRequire(import.meta.url);",
    },
  });
};
