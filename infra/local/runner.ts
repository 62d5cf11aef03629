import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { archiveBatchHandler } from '../../functions/archive-batch';
import { forgetHandler } from '../../functions/forget';
import { planHandler } from '../../functions/plan';
import { redactHandler } from '../../functions/redact';
import { reportHandler } from '../../functions/report';
import type { ObservabilitySink } from '../../functions/sink';
import { tallyHandler } from '../../functions/tally';
import type { BatchHooks } from '../../shared/archive/steps/batch/batch-steps';
import type { StepDeps } from '../../shared/archive/steps/context';
import { JobArchiveError } from '../../shared/errors';
import { countRequests, type RequestCounts, zeroCounts } from '../../shared/metrics';
import { LAMBDA_SERVICE_ERRORS, TRANSIENT_ERRORS } from '../construct/retry-errors';
import { ARCHIVER_STEPS, type ArchiverStep } from '../construct/step-names';
import { packageRoot } from '../package-root';
import { assertLocallyExecutable } from './asl-guard';
import { LOCAL_ACCOUNT, LOCAL_BUCKET_PLACEHOLDER, LOCAL_REGION, localFunctionArn } from './asl-resolve';
import { capturingSink } from './capture';
import {
  type ChildOutcome,
  mapEmulatorArn,
  replaceDistributedMaps,
  runDistributedMap,
} from './distributed-map';
import { LocalStackError, loadOptional, UnsupportedLocallyError } from './errors';
import { cachedDefaultSetup } from './setup-cache';
import type { DeployedSynthesisOptions, LocalSetup, SynthesisOptions } from './synth';

// The package's typings are ESM-only, but it ships a CommonJS build (exports.require), which is what
// this CommonJS project (and jest) can load synchronously.
type LocalStepFunctions = typeof import('aws-local-stepfunctions', { with: { 'resolution-mode': 'import' }});
const { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, StateMachine } = loadOptional(
  'aws-local-stepfunctions',
  'a local run',
  () => require('aws-local-stepfunctions') as LocalStepFunctions,
);
export type StateMachineDefinition = ConstructorParameters<LocalStepFunctions['StateMachine']>[0];

/** A step handler as Lambda calls it. */
export type StepHandler = (event: unknown, context: Context) => unknown;

/**
 * The real handlers, built by their factories over explicit dependencies — what functions/*.ts export
 * as `handler`, wired from the environment in Lambda. `hooks` reach the per-group body of ArchiveBatch
 * (tests that mean one stage of one group; production passes none).
 */
export const stepHandlers = (
  deps: () => StepDeps,
  sink: ObservabilitySink,
  hooks?: BatchHooks,
): Record<ArchiverStep, StepHandler> => ({
  plan: planHandler(deps, sink),
  'archive-batch': archiveBatchHandler(deps, sink, hooks),
  tally: tallyHandler(deps, sink),
  report: reportHandler(deps, sink),
  forget: forgetHandler(deps, sink),
  redact: redactHandler(deps, sink),
});

/** The file the build writes beside the compiled runner (absent in a checkout, which synthesizes). */
export const SHIPPED_SETUP_FILE = 'archiver-local.json';

// aws-cdk-lib is an optional peer of the package: loaded only when something must be synthesized.
const synth = (): typeof import('./synth') =>
  loadOptional(
    'aws-cdk-lib',
    'synthesizing the state machine for a local run with non-default props',
    () => require('./synth') as typeof import('./synth'),
  );

let shipped: LocalSetup | null | undefined;

/** The local setup for `opts`: the shipped one for default props when there is one, else synthesized. */
export const localSetup = (opts: SynthesisOptions = {}): LocalSetup => {
  if (opts.archive === undefined) {
    if (shipped === undefined) {
      const file = join(__dirname, SHIPPED_SETUP_FILE);
      shipped = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LocalSetup) : null;
    }
    if (shipped) return shipped;
    // A checkout: synthesized once per state of its sources (setup-cache.ts).
    return cachedDefaultSetup(packageRoot(), () => synth().synthesizedLocalSetup(opts));
  }
  return synth().synthesizedLocalSetup(opts);
};

/** The definition the local runner executes, as text (synthesized without bundling). */
export const localDefinitionString = (opts: SynthesisOptions = {}): string =>
  synth().localDefinitionString(opts);

/** The definition `cdk deploy` ships (real esbuild bundling, cdk-nag on), resolved the same way. Slow. */
export const deployedDefinitionString = (opts: DeployedSynthesisOptions = {}): string =>
  synth().deployedDefinitionString(opts);

/** The resolved ASL object the local runner executes. */
export const synthesizedDefinition = (opts: SynthesisOptions = {}): StateMachineDefinition =>
  JSON.parse(localSetup(opts).definition) as StateMachineDefinition;

/**
 * aws-local-stepfunctions calls `Promise.withResolvers` (Node ≥ 22, the project's engines) for every
 * Task; on an older Node that throws inside the Task, where a States.ALL Catch would turn the crash
 * into a quiet "success". Refuse before running anything.
 */
export const assertNodeForLocalRuns = (version: string = process.versions.node): void => {
  const major = Number(version.split('.')[0]);
  const P = Promise as unknown as { withResolvers?: unknown };
  if (major < 22 || typeof P.withResolvers !== 'function') {
    throw new LocalStackError(
      `the local state machine runner needs Node >= 22 (this is ${version}); see package.json engines`,
    );
  }
};

export interface LocalHandlerError {
  readonly state: string;
  readonly step: ArchiverStep;
  readonly name: string;
  readonly message: string;
}

export interface LocalRunResult {
  readonly status: 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  /** The execution's output; null unless SUCCEEDED. */
  readonly output: unknown;
  /** Error and cause of a FAILED execution. */
  readonly error?: { readonly error: string; readonly cause: string };
  /** Invocations per Task state name (retries count). */
  readonly taskInvocations: Record<string, number>;
  /** Seconds spent inside handlers, summed over every invocation (Lambda bills duration like this). */
  readonly taskSeconds: number;
  /**
   * CPU seconds (user + system) of this process from the execution's start to its end: the handlers'
   * CPU and the in-process Step Functions interpreter's; emulators in child processes are not in it.
   */
  readonly cpuSeconds: number;
  /**
   * CPU seconds of this process while at least one handler runs: what the steps' Lambda functions
   * would bill as CPU, an upper bound still — whatever else this process does while a handler waits on
   * a request (the interpreter moving other states, other handlers' work is each one's own) is in it;
   * the interpreter's work between handlers is not. Lambda bills this plus the time spent waiting.
   */
  readonly handlerCpuSeconds: number;
  /**
   * Per step: invocations, wall seconds inside its handler, and its share of `handlerCpuSeconds` (CPU
   * spent while several handlers run is split evenly between them, so the steps sum to it).
   */
  readonly steps: Readonly<
    Partial<Record<ArchiverStep, { invocations: number; seconds: number; cpuSeconds: number }>>
  >;
  /**
   * State transitions as STANDARD workflows are billed for them: every state entered and every retry,
   * in the run and in every child execution of its Distributed Map, from the interpreter's event logs.
   */
  readonly stateTransitions: number;
  /** Requests the emulated Distributed Map made (ItemReader GETs, ResultWriter PUTs): S3 bills them too. */
  readonly mapRequests: RequestCounts;
  /** Child executions the Distributed Map started (one per batch). */
  readonly childExecutions: number;
  /** Every error a handler threw, whether retried, caught or fatal. */
  readonly handlerErrors: LocalHandlerError[];
  /**
   * Handler errors that are neither one of ours (shared/errors.ts) nor a retriable one: a crash.
   * A batch step may have carried them as a failed group and the run may still say SUCCEEDED — check this.
   */
  readonly unexpectedErrors: LocalHandlerError[];
  /** What the handlers logged through the run's sink (structured as Powertools does, one object per line). */
  readonly logs: Record<string, unknown>[];
  /** What they published through it (CloudWatch EMF documents). */
  readonly metrics: Record<string, unknown>[];
}

export interface RunArchiverLocallyOptions extends SynthesisOptions {
  /** Execution input; the schedule sends `{}`. */
  readonly input?: Record<string, unknown>;
  /**
   * The handler of each step, built over the sink this run captures their logs and metrics into:
   * `(sink) => stepHandlers(() => deps, sink)` for the real ones.
   */
  readonly handlers: (sink: ObservabilitySink) => Readonly<Record<ArchiverStep, StepHandler>>;
  /** The steps' bucket: the Distributed Map's ItemReader reads it and its ResultWriter writes it. */
  readonly bucket: string;
  /**
   * Builds the Distributed Map emulation's S3 client: its own, since its requests are counted as the
   * map's (`mapRequests`), apart from the steps'. Destroyed when the run ends.
   */
  readonly mapS3: () => S3Client;
  /** A definition to run instead of synthesizing one (e.g. from `synthesizedDefinition()`, done once). */
  readonly definition?: StateMachineDefinition;
  /** `$$.Execution.Name`. @default a unique `local-…` name */
  readonly executionName?: string;
  /** Wait before each retry; the definition's backoff would make tests slow. @default 0 */
  readonly retryDelayMs?: number;
}

const EXPECTED_NAMES: ReadonlySet<string> = new Set([...LAMBDA_SERVICE_ERRORS, ...TRANSIENT_ERRORS]);

const isExpectedError = (err: unknown): boolean =>
  err instanceof JobArchiveError || (err instanceof Error && EXPECTED_NAMES.has(err.name));

/** Task state name → step, from each Task's (resolved) Resource ARN, through Map/Parallel nesting. */
const taskStatesOf = (definition: unknown): Map<string, ArchiverStep> => {
  const stepOfArn = new Map(ARCHIVER_STEPS.map((s) => [localFunctionArn(s), s] as const));
  const out = new Map<string, ArchiverStep>();
  const walk = (machine: unknown): void => {
    const states = (machine as { States?: Record<string, Record<string, unknown>> }).States ?? {};
    for (const [name, state] of Object.entries(states)) {
      const step = stepOfArn.get(String(state.Resource));
      if (state.Type === 'Task' && step !== undefined) out.set(name, step);
      if (state.ItemProcessor !== undefined) walk(state.ItemProcessor);
      if (state.Iterator !== undefined) walk(state.Iterator);
      if (Array.isArray(state.Branches)) state.Branches.forEach(walk);
    }
  };
  walk(definition);
  return out;
};

const lambdaContext = (step: ArchiverStep, timeoutMs: number, memoryMb: number): Context => {
  const deadline = Date.now() + timeoutMs;
  const unsupported = () => {
    throw new Error('callback-style Lambda completion is not supported; return a Promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `jda-${step}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: localFunctionArn(step),
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/jda-${step}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
};

/** Definitions aws-local-stepfunctions has validated in this process (by their JSON). */
const validated = new Set<string>();

/**
 * The interpreter for a definition, validated the first time this process meets it: validation
 * compiles the ASL JSON schema (ajv) on every construction, a third of a test's CPU when each run
 * and each Distributed Map child execution built it again for the same definition.
 */
const machineOf = (definition: Record<string, unknown>): InstanceType<typeof StateMachine> => {
  const key = JSON.stringify(definition);
  // The interpreter rewrites the definition it is given (and replaceDistributedMaps' copy shares
  // objects with the caller's): given the caller's object, the same definition never had the same
  // JSON twice and was validated again on every run and every child execution.
  const machine = new StateMachine(
    structuredClone(definition) as unknown as StateMachineDefinition,
    validated.has(key) ? { validationOptions: { noValidate: true } } : {},
  );
  validated.add(key);
  return machine;
};

/**
 * Runs the CDK-synthesized archiver definition with aws-local-stepfunctions, every Task bound to an
 * in-process handler by its function ARN. Inputs and outputs cross the boundary as JSON, as they do
 * through Lambda.
 */
export const runArchiverLocally = async (opts: RunArchiverLocallyOptions): Promise<LocalRunResult> => {
  assertNodeForLocalRuns();
  const setup = localSetup(opts);
  const definition = opts.definition ?? (JSON.parse(setup.definition) as StateMachineDefinition);
  // Distributed Maps become Tasks bound to the emulation (distributed-map.ts); their processors run
  // as child executions of their own. Both are checked for what the interpreter cannot run.
  const { definition: runnable, maps } = replaceDistributedMaps(
    definition as unknown as Record<string, unknown>,
  );
  const boundArns = [
    ...ARCHIVER_STEPS.map((s) => localFunctionArn(s)),
    ...maps.map((m) => mapEmulatorArn(m.state)),
  ];
  assertLocallyExecutable(runnable, boundArns);
  for (const m of maps) assertLocallyExecutable(m.processor, boundArns);
  const { timeoutMs, memoryMb } = setup;
  const sink = capturingSink();
  const handlers = opts.handlers(sink);

  const taskInvocations: Record<string, number> = {};
  const handlerErrors: LocalHandlerError[] = [];
  const unexpectedErrors: LocalHandlerError[] = [];
  const localHandlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const retryIntervalOverrides: Record<string, number> = {};
  const taskStates = taskStatesOf(definition);
  if (taskStates.size === 0)
    throw new UnsupportedLocallyError('(top level)', 'no Task bound to an archiver step');

  const timing = { seconds: 0 };
  const steps: Partial<Record<ArchiverStep, { invocations: number; seconds: number; cpuSeconds: number }>> =
    {};
  const cpuStart = process.cpuUsage();
  const cpu = handlerCpu();
  for (const [state, step] of taskStates) {
    taskInvocations[state] = 0;
    retryIntervalOverrides[state] = opts.retryDelayMs ?? 0;
    localHandlers[state] = async (input) => {
      taskInvocations[state] = (taskInvocations[state] ?? 0) + 1;
      try {
        const context = lambdaContext(step, timeoutMs[step], memoryMb[step]);
        const t0 = performance.now();
        const t = steps[step] ?? { invocations: 0, seconds: 0, cpuSeconds: 0 };
        steps[step] = t;
        const leave = cpu.enter(t);
        try {
          const out = await handlers[step](JSON.parse(JSON.stringify(input)), context);
          return JSON.parse(JSON.stringify(out ?? null));
        } finally {
          leave();
          const seconds = (performance.now() - t0) / 1000;
          timing.seconds += seconds;
          t.invocations++;
          t.seconds += seconds;
        }
      } catch (thrown) {
        const err = thrown instanceof Error ? thrown : new Error(String(thrown));
        const record = { state, step, name: err.name, message: err.message };
        handlerErrors.push(record);
        if (!isExpectedError(err)) unexpectedErrors.push(record);
        throw err;
      }
    };
  }

  const executionName = opts.executionName ?? `local-${Date.now()}-${randomBytes(4).toString('hex')}`;
  const stateMachineArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:jda-archiver`;
  const children = { count: 0, transitions: 0 };
  const mapRequests = zeroCounts();
  const runChild = async (
    processor: Record<string, unknown>,
    input: unknown,
    name: string,
  ): Promise<ChildOutcome> => {
    children.count++;
    const child = machineOf(processor).run(input as never, {
      overrides: { taskResourceLocalHandlers: localHandlers as never, retryIntervalOverrides },
      context: {
        Execution: { Id: `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`, Name: name },
      },
    });
    const counted = countTransitions(child.eventLogs);
    try {
      return { status: 'SUCCEEDED', output: await child.result };
    } catch (err) {
      if (!(err instanceof ExecutionError)) throw err;
      const cause = err.cause instanceof Error ? err.cause : new Error(String(err.cause));
      return { status: 'FAILED', error: cause.name, cause: cause.message };
    } finally {
      await counted.done;
      children.transitions += counted.count;
    }
  };
  const mapS3 = maps.length > 0 ? opts.mapS3() : undefined;
  if (mapS3) {
    const s3 = mapS3;
    countRequests(s3, 's3', mapRequests);
    const resolveBucket = (bucket: string): string => {
      const actual = opts.bucket;
      if (bucket !== LOCAL_BUCKET_PLACEHOLDER && bucket !== actual)
        throw new UnsupportedLocallyError(
          '(definition)',
          `the bucket ${bucket}, which is not the steps' bucket`,
        );
      return actual;
    };
    for (const spec of maps) {
      localHandlers[spec.state] = (input) =>
        runDistributedMap(spec, input, { s3, resolveBucket, stateMachineArn, executionName, runChild });
    }
  }
  const machine = machineOf(runnable);
  const execution = machine.run((opts.input ?? {}) as never, {
    overrides: { taskResourceLocalHandlers: localHandlers as never, retryIntervalOverrides },
    context: {
      Execution: {
        Id: `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:execution:jda-archiver:${executionName}`,
        Name: executionName,
      },
    },
  });

  const transitions = countTransitions(execution.eventLogs);
  // Read once the execution is over and its event log drained (the log ends with the execution).
  const base = async () => {
    await transitions.done;
    const whole = process.cpuUsage(cpuStart);
    return {
      taskSeconds: timing.seconds,
      cpuSeconds: (whole.user + whole.system) / 1e6,
      handlerCpuSeconds: cpu.seconds(),
      steps,
      stateTransitions: transitions.count + children.transitions,
      mapRequests,
      childExecutions: children.count,
      taskInvocations,
      handlerErrors,
      unexpectedErrors,
      logs: sink.logs,
      metrics: sink.metrics,
    };
  };
  try {
    const output: unknown = await execution.result;
    return { status: 'SUCCEEDED', output, ...(await base()) };
  } catch (err) {
    if (err instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT', output: null, ...(await base()) };
    if (err instanceof ExecutionAbortedError) return { status: 'ABORTED', output: null, ...(await base()) };
    if (err instanceof ExecutionError) {
      const cause = err.cause instanceof Error ? err.cause : new Error(String(err.cause));
      return {
        status: 'FAILED',
        output: null,
        error: { error: cause.name, cause: cause.message },
        ...(await base()),
      };
    }
    throw err;
  } finally {
    mapS3?.destroy();
  }
};

/** Consumes the execution's event log as it is produced, counting billed transitions. */
const countTransitions = (events: AsyncGenerator<{ type: string }>) => {
  const t = { count: 0, done: Promise.resolve() };
  t.done = (async () => {
    for await (const e of events) if (e.type === 'StateEntered' || e.type === 'StateRetried') t.count++;
  })().catch(() => undefined);
  return t;
};

/**
 * CPU of this process while handlers run, each stretch between a handler's start or end split evenly
 * between the handlers running in it (added to each one's `cpuSeconds`), so nothing counts twice.
 */
export const handlerCpu = (usage: () => NodeJS.CpuUsage = process.cpuUsage) => {
  const running = new Set<{ cpuSeconds: number }>();
  let total = 0;
  let last = usage();
  const tick = () => {
    const now = usage();
    const spent = (now.user - last.user + now.system - last.system) / 1e6;
    last = now;
    if (running.size === 0) return;
    total += spent;
    for (const r of running) r.cpuSeconds += spent / running.size;
  };
  return {
    /** A handler starts, adding to `into`; the returned function says it ended. */
    enter(into: { cpuSeconds: number }): () => void {
      tick();
      // One entry per invocation (two invocations of a step are two entries, one object each).
      const me = { cpuSeconds: 0 };
      running.add(me);
      return () => {
        tick();
        running.delete(me);
        into.cpuSeconds += me.cpuSeconds;
      };
    },
    seconds: () => total,
  };
};
