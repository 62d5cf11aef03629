import { rmSync } from 'node:fs';
import type { CfnElement } from 'aws-cdk-lib';
import { createArchiveApp } from '../construct/archive-stack';
import type { JobDetailsArchiveProps } from '../construct/props';
import { resolveArchiveProps } from '../construct/props-validation';
import { ARCHIVER_STEPS, type ArchiverStep, camelStep } from '../construct/step-names';
import { LOCAL_BUCKET_PLACEHOLDER, localFunctionArn, resolveDefinitionString } from './asl-resolve';

/**
 * CDK synthesis of the archiver for local runs: the only part of the local runner that loads
 * aws-cdk-lib (the runner loads it on demand; the package's build ships its default result).
 */
export interface SynthesisOptions {
  /** Props of the construct (e.g. `maxConcurrency`); the definition depends on a few of them. */
  readonly archive?: JobDetailsArchiveProps;
}

/**
 * What a local run takes from the construct: its state machine's definition (function ARNs resolved
 * to local ones) and each step's timeout and memory. Synthesized by CDK (this file) — or, in the
 * installed package, read from `archiver-local.json`, which `npm run build` synthesizes next to the
 * compiled runner (runner.ts; a test holds it equal to a fresh synthesis), so `jobarchive run` needs no CDK.
 */
export interface LocalSetup {
  readonly definition: string;
  readonly timeoutMs: Readonly<Record<ArchiverStep, number>>;
  readonly memoryMb: Readonly<Record<ArchiverStep, number>>;
}

export interface DeployedSynthesisOptions extends SynthesisOptions {
  /** Called with the cloud assembly directory (bundled assets included) before it is removed. */
  readonly inspectAssembly?: (directory: string) => void;
}

/**
 * Synthesizes the archiver stack and returns its state machine's DefinitionString with every function
 * ARN replaced by `localFunctionArn(step)`. `bundling: true` is the app exactly as deployed (esbuild,
 * cdk-nag); `false` skips bundling, which cannot change the definition — a test holds us to that.
 */
const resolvedDefinitionString = (bundling: boolean, opts: DeployedSynthesisOptions): string => {
  const { app, stack } = bundling
    ? createArchiveApp({ archive: opts.archive })
    : createArchiveApp({ archive: opts.archive, nag: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const assembly = app.synth();
  try {
    opts.inspectAssembly?.(assembly.directory);
    const template = assembly.getStackArtifact(stack.artifactId).template as {
      Resources: Record<string, { Properties?: { DefinitionString?: unknown } }>;
    };
    const archive = stack.archive;
    const machineId = stack.getLogicalId(archive.stateMachine.node.defaultChild as CfnElement);
    const stepOf = new Map<string, ArchiverStep>();
    for (const step of ARCHIVER_STEPS) {
      stepOf.set(
        stack.getLogicalId(archive.functions[camelStep(step)].node.defaultChild as CfnElement),
        step,
      );
    }
    const bucketId = stack.getLogicalId(archive.bucket.node.defaultChild as CfnElement);
    return resolveDefinitionString(
      template.Resources[machineId]?.Properties?.DefinitionString,
      (id) => {
        const step = stepOf.get(id);
        return step === undefined ? undefined : localFunctionArn(step);
      },
      (id) => (id === bucketId ? LOCAL_BUCKET_PLACEHOLDER : undefined),
    );
  } finally {
    rmSync(assembly.directory, { recursive: true, force: true });
  }
};

let defaultLocal: string | undefined;

/** The definition the local runner executes, as text (synthesized without bundling). */
export const localDefinitionString = (opts: SynthesisOptions = {}): string => {
  if (opts.archive !== undefined) return resolvedDefinitionString(false, opts);
  defaultLocal ??= resolvedDefinitionString(false, opts);
  return defaultLocal;
};

/**
 * The definition `cdk deploy` ships (real esbuild bundling, cdk-nag on), resolved the same way. Slow.
 * @public — runner.ts loads this module lazily (so an install without CDK never does), out of knip's sight.
 */
export const deployedDefinitionString = (opts: DeployedSynthesisOptions = {}): string =>
  resolvedDefinitionString(true, opts);

/** Definition, timeouts and memory of the construct with `opts.archive` props, as a local run needs them. */
export const synthesizedLocalSetup = (opts: SynthesisOptions = {}): LocalSetup => {
  const { timeout, memoryMb } = resolveArchiveProps(opts.archive ?? {});
  const per = <T>(f: (step: ArchiverStep) => T) =>
    Object.fromEntries(ARCHIVER_STEPS.map((step) => [step, f(step)])) as Record<ArchiverStep, T>;
  return {
    definition: localDefinitionString(opts),
    timeoutMs: per((step) => timeout[step].toMilliseconds()),
    memoryMb: per((step) => memoryMb[step]),
  };
};
