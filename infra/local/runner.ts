import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import type { Context } from 'aws-lambda';
import { handler as archiveBatch } from '../../functions/archive-batch';
import { handler as forget } from '../../functions/forget';
import { resetObservability } from '../../functions/observability';
import { handler as plan } from '../../functions/plan';
import { handler as redact } from '../../functions/redact';
import { handler as report } from '../../functions/report';
import { handler as tally } from '../../functions/tally';
import { s3ClientFrom } from '../../shared/clients';
import { config } from '../../shared/config';
import { JobArchiveError } from '../../shared/errors';
import { countRequests, type RequestCounts, zeroCounts } from '../../shared/metrics';
import { LAMBDA_SERVICE_ERRORS, TRANSIENT_ERRORS } from '../construct/retry-errors';
import { ARCHIVER_STEPS, type ArchiverStep } from '../construct/step-names';
import { assertLocallyExecutable } from './asl-guard';
import { LOCAL_ACCOUNT, LOCAL_BUCKET_PLACEHOLDER, LOCAL_REGION, localFunctionArn } from './asl-resolve';
import {
  type ChildOutcome,
  mapEmulatorArn,
  replaceDistributedMaps,
  runDistributedMap,
} from './distributed-map';
import { LocalStackError, loadOptional, UnsupportedLocallyError } from './errors';
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

// Any handler signature binds (its event type is the handler's business); the runner passes JSON.
const bind = (h: (event: never, context: Context) => unknown): StepHandler => h as StepHandler;

/** The real handlers, in process. */
export const STEP_HANDLERS: Readonly<Record<ArchiverStep, StepHandler>> = {
  plan: bind(plan),
  'archive-batch': bind(archiveBatch),
  tally: bind(tally),
  report: bind(report),
  forget: bind(forget),
  redact: bind(redact),
};

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
  /** What the handlers logged through Powertools Logger (structured, one object per line). */
  readonly logs: Record<string, unknown>[];
  /** What they published through Powertools Metrics (CloudWatch EMF documents). */
  readonly metrics: Record<string, unknown>[];
}

export interface RunArchiverLocallyOptions extends SynthesisOptions {
  /** Execution input; the schedule sends `{}`. */
  readonly input?: Record<string, unknown>;
  /** Stand-ins for the real handlers, by step (tests). */
  readonly handlers?: Partial<Record<ArchiverStep, StepHandler>>;
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

/**
 * Runs the CDK-synthesized archiver definition with aws-local-stepfunctions, every Task bound to an
 * in-process handler by its function ARN. Inputs and outputs cross the boundary as JSON, as they do
 * through Lambda.
 */
export const runArchiverLocally = async (opts: RunArchiverLocallyOptions = {}): Promise<LocalRunResult> => {
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
  const handlers = { ...STEP_HANDLERS, ...opts.handlers };

  const taskInvocations: Record<string, number> = {};
  const handlerErrors: LocalHandlerError[] = [];
  const unexpectedErrors: LocalHandlerError[] = [];
  const localHandlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const retryIntervalOverrides: Record<string, number> = {};
  const taskStates = taskStatesOf(definition);
  if (taskStates.size === 0)
    throw new UnsupportedLocallyError('(top level)', 'no Task bound to an archiver step');

  const timing = { seconds: 0 };
  for (const [state, step] of taskStates) {
    taskInvocations[state] = 0;
    retryIntervalOverrides[state] = opts.retryDelayMs ?? 0;
    localHandlers[state] = async (input) => {
      taskInvocations[state] = (taskInvocations[state] ?? 0) + 1;
      try {
        const context = lambdaContext(step, timeoutMs[step], memoryMb[step]);
        const t0 = performance.now();
        try {
          const out = await handlers[step](JSON.parse(JSON.stringify(input)), context);
          return JSON.parse(JSON.stringify(out ?? null));
        } finally {
          timing.seconds += (performance.now() - t0) / 1000;
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
    const child = new StateMachine(processor as unknown as StateMachineDefinition).run(input as never, {
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
  if (maps.length > 0) {
    const cfg = config();
    const s3 = s3ClientFrom(cfg);
    countRequests(s3, 's3', mapRequests);
    const resolveBucket = (bucket: string): string => {
      const actual = requireBucket(cfg.detailsBucket);
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
  const machine = new StateMachine(runnable as unknown as StateMachineDefinition);
  const captured = captureObservability();
  const execution = captured.within(() =>
    machine.run((opts.input ?? {}) as never, {
      overrides: { taskResourceLocalHandlers: localHandlers as never, retryIntervalOverrides },
      context: {
        Execution: {
          Id: `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:execution:jda-archiver:${executionName}`,
          Name: executionName,
        },
      },
    }),
  );

  const transitions = countTransitions(execution.eventLogs);
  // Read once the execution is over and its event log drained (the log ends with the execution).
  const base = async () => {
    await transitions.done;
    return {
      taskSeconds: timing.seconds,
      stateTransitions: transitions.count + children.transitions,
      mapRequests,
      childExecutions: children.count,
      taskInvocations,
      handlerErrors,
      unexpectedErrors,
      logs: captured.logs,
      metrics: captured.metrics,
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
    captured.stop();
  }
};

const requireBucket = (bucket: string | undefined): string => {
  if (bucket === undefined)
    throw new UnsupportedLocallyError(
      '(definition)',
      'a Distributed Map without ECOM_JOB_DETAILS_BUCKET set',
    );
  return bucket;
};

/** Consumes the execution's event log as it is produced, counting billed transitions. */
const countTransitions = (events: AsyncGenerator<{ type: string }>) => {
  const t = { count: 0, done: Promise.resolve() };
  t.done = (async () => {
    for await (const e of events) if (e.type === 'StateEntered' || e.type === 'StateRetried') t.count++;
  })().catch(() => undefined);
  return t;
};

const CONSOLE_METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;
const OBSERVABILITY_ENV = {
  // Powertools writes to the global console in dev mode (else to its own stdout Console), so the
  // lines can be taken here instead of mixing into the CLI's stdout. Metrics stay on: dev mode alone
  // would disable them.
  POWERTOOLS_DEV: 'true',
  POWERTOOLS_METRICS_DISABLED: 'false',
  POWERTOOLS_LOG_LEVEL: 'INFO',
} as const;

interface Capture {
  readonly logs: Record<string, unknown>[];
  readonly metrics: Record<string, unknown>[];
}

/** Which run a log line belongs to: the run whose execution the writing code was started from. */
const captureScope = new AsyncLocalStorage<Capture>();
const active = new Set<Capture>();
let restore: (() => void) | undefined;

const take = (...args: unknown[]) => {
  const text = args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { message: text };
  }
  const doc =
    typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : { message: text };
  const owner = captureScope.getStore();
  for (const c of owner ? [owner] : active) ('_aws' in doc ? c.metrics : c.logs).push(doc);
};

/**
 * In Lambda, Powertools writes logs and EMF metrics to stdout, where CloudWatch takes them. In process,
 * the runner takes them instead, parsed: logs (level, message, keys) and metrics (`_aws` documents).
 * Runs may overlap in one process (two executions at once): the console and environment are patched
 * while any run is active, and each line goes to the run it was written from (AsyncLocalStorage).
 */
const captureObservability = () => {
  const c: Capture = { logs: [], metrics: [] };
  if (active.size === 0) {
    const savedEnv = Object.fromEntries(Object.keys(OBSERVABILITY_ENV).map((k) => [k, process.env[k]]));
    Object.assign(process.env, OBSERVABILITY_ENV);
    resetObservability();
    const saved = CONSOLE_METHODS.map((m) => [m, console[m]] as const);
    for (const m of CONSOLE_METHODS) console[m] = take;
    restore = () => {
      for (const [m, fn] of saved) console[m] = fn;
      for (const [k, v] of Object.entries(savedEnv)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      resetObservability();
    };
  }
  active.add(c);
  return {
    ...c,
    within: <T>(fn: () => T): T => captureScope.run(c, fn),
    stop: () => {
      active.delete(c);
      if (active.size === 0) {
        restore?.();
        restore = undefined;
      }
    },
  };
};
