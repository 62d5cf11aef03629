import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidInputError } from '../../shared/errors';
import { answers, ensureBucket, ensureTable, localClients } from './aws';
import { type ChildSpec, dynamoChild, MARKERS, s3rverChild, supervisorScript } from './emulators';
import type { LocalStackInfo } from './env';
import { LocalStackError } from './errors';
import { addHolder, holdersDir, liveHolders, removeHolder } from './holders';
import { checkJava } from './java';
import { tryLockSync, unlockSync, withStartLock } from './lock';
import { trackOwned, untrackOwned } from './owner-hooks';
import { freePort } from './ports';
import { pollUntil, runsProgram, signal } from './process';
import { readState, removeState, type StackState, statePath, writeState } from './state';

export { applyStackEnv, type LocalStackInfo, stackEnv } from './env';

/**
 * The embedded local stack: DynamoDB Local + s3rver as child processes on 127.0.0.1, data kept in a
 * folder so it survives between commands like an embedded database.
 *
 * Process layout: this process (the owner) spawns a detached supervisor (infra/local/supervisor.cjs),
 * which leads a new process group and runs both emulators in it. Stopping = signalling that group.
 * Every process using the stack — the owner and each one that reused it — holds it (holders.ts); the
 * stack runs while a holder lives. The last holder to stop or exit stops it at once; the supervisor
 * takes the group down when no holder is left (a SIGKILLed one runs no exit handler), so a crash
 * leaves no orphans and commands sharing a data dir never stop it under each other. `stack.json` in
 * the data dir lets the next start (or `stopLocalStack` from any process) clean up whatever a harder
 * crash left behind.
 */
export interface LocalStackOptions {
  /** Default: `defaultDataDir()`. */
  readonly dataDir?: string;
  /** Default `jobs`; created from shared/jobs/schema.ts if missing. */
  readonly tableName?: string;
  /** Default `job-details`; created if missing. */
  readonly bucketName?: string;
  /** Wipe the emulators' data first (refused while another process runs a stack on the dir). */
  readonly fresh?: boolean;
  /** The Java 17+ binary, default `java` from PATH. */
  readonly java?: string;
  /** Deadline for the emulators to answer, default 90 s. */
  readonly startTimeoutMs?: number;
  /** Abandons a start in progress (an interrupt): whatever it spawned is stopped, the start throws. */
  readonly signal?: AbortSignal;
}

export interface LocalStack extends LocalStackInfo {
  readonly dataDir: string;
  /** False when an already running stack for the same data dir was reused. */
  readonly owned: boolean;
  readonly pids: { readonly supervisor: number; readonly dynamodb: number; readonly s3rver: number };
  /**
   * Lets go of the stack: stops the emulators (and waits until their processes are gone) unless
   * another process still holds it. Idempotent.
   */
  stop(): Promise<void>;
  /** The stack's processes that are no longer running (empty while it is up), e.g. `dynamodb (pid 12)`. */
  gone(): string[];
}

export const DEFAULT_TABLE = 'jobs';
export const DEFAULT_BUCKET = 'job-details';
const DEFAULT_START_TIMEOUT_MS = 90_000;
const START_ATTEMPTS = 3;

/**
 * `$XDG_DATA_HOME/jobarchive`, else `.jobarchive/` in the working directory: the user's folder, never
 * the package's (installed, it lives in node_modules).
 */
export const defaultDataDir = (env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string =>
  env.XDG_DATA_HOME ? join(resolve(env.XDG_DATA_HOME), 'jobarchive') : resolve(cwd, '.jobarchive');

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const checkNames = (tableName: string, bucketName: string): void => {
  if (!TABLE_NAME.test(tableName)) {
    throw new InvalidInputError('tableName', `${JSON.stringify(tableName)} is not a DynamoDB table name`);
  }
  if (!BUCKET_NAME.test(bucketName) || bucketName.includes('..')) {
    throw new InvalidInputError('bucketName', `${JSON.stringify(bucketName)} is not an S3 bucket name`);
  }
};

/**
 * Supervisors this process spawned, until reaped: whichever of its holds stops the stack last (the
 * owner's or a reused one's), the stop waits for Node to reap the supervisor, so no pid of the stack
 * is left (not even a zombie) when stop() returns.
 */
const spawnedHere = new Map<number, ChildProcess>();

const reaped = async (supervisorPid: number): Promise<void> => {
  const sup = spawnedHere.get(supervisorPid);
  if (!sup) return;
  await pollUntil(() => sup.exitCode !== null || sup.signalCode !== null, 5_000, 10);
  spawnedHere.delete(supervisorPid);
};

/** Starts within one process queue per data dir; across processes the lock file serialises them. */
const queues = new Map<string, Promise<unknown>>();

export const startLocalStack = async (opts: LocalStackOptions = {}): Promise<LocalStack> => {
  const dataDir = resolve(opts.dataDir ?? defaultDataDir());
  const tableName = opts.tableName ?? DEFAULT_TABLE;
  const bucketName = opts.bucketName ?? DEFAULT_BUCKET;
  checkNames(tableName, bucketName);
  const timeoutMs = opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new InvalidInputError('startTimeoutMs', 'must be a positive number');

  const run = (queues.get(dataDir) ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => {
      mkdirSync(dataDir, { recursive: true });
      interruptedCheck(opts.signal);
      return withStartLock(
        dataDir,
        timeoutMs,
        () =>
          startUnlocked(
            dataDir,
            tableName,
            bucketName,
            opts.fresh ?? false,
            opts.java ?? 'java',
            timeoutMs,
            opts.signal,
          ),
        opts.signal,
      );
    });
  queues.set(dataDir, run);
  try {
    return await run;
  } finally {
    if (queues.get(dataDir) === run) queues.delete(dataDir);
  }
};

/** Throws when the start was abandoned (checked between its steps and in its waits). */
const interruptedCheck = (signal: AbortSignal | undefined): void => {
  if (signal?.aborted) throw new LocalStackError('start-up interrupted');
};

/**
 * Stops the stack recorded in `dataDir` (default: `defaultDataDir()`), whoever owns it. Returns false if no
 * stack was recorded there.
 */
export const stopLocalStack = async (dataDir?: string): Promise<boolean> => {
  const dir = resolve(dataDir ?? defaultDataDir());
  const state = readState(dir);
  if (!state) return false;
  await stopGroup(state);
  removeState(dir, state.supervisorPid);
  rmSync(holdersDir(dir), { recursive: true, force: true });
  return true;
};

/**
 * This process lets go of the stack; the last holder stops it. Under the start lock, so a process
 * joining right now is either counted or starts a new stack after this one is gone.
 */
const release = async (
  dataDir: string,
  state: StackState,
  hold: string,
  timeoutMs: number,
): Promise<void> => {
  untrackOwned(hold);
  removeHolder(dataDir, hold);
  await withStartLock(dataDir, timeoutMs, async () => {
    if (liveHolders(dataDir).length > 0) return;
    await stopGroup(state);
    removeState(dataDir, state.supervisorPid);
  });
  if (runningPids(state).length === 0) await reaped(state.supervisorPid);
};

/** The same at exit, synchronously (an exit handler cannot wait): the supervisor finishes the job. */
const releaseAtExit = (dataDir: string, state: StackState, hold: string) => (): void => {
  removeHolder(dataDir, hold);
  if (liveHolders(dataDir).length > 0 || !tryLockSync(dataDir)) return;
  try {
    if (liveHolders(dataDir).length === 0 && runningPids(state).length > 0)
      signal(state.pgid, 'SIGTERM', true);
  } finally {
    unlockSync(dataDir);
  }
};

/** Holds a running stack from this process until `release`; returns the hold. */
const hold = (dataDir: string, state: StackState): string => {
  const id = addHolder(dataDir);
  trackOwned(id, releaseAtExit(dataDir, state, id));
  return id;
};

const startUnlocked = async (
  dataDir: string,
  tableName: string,
  bucketName: string,
  fresh: boolean,
  java: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<LocalStack> => {
  const existing = readState(dataDir);
  if (existing) {
    if (await isLive(existing)) {
      if (fresh) {
        throw new LocalStackError(
          `process ${existing.ownerPid} runs a local stack on ${dataDir}; stop it before starting fresh`,
        );
      }
      await provision(existing, tableName, bucketName);
      const id = hold(dataDir, existing);
      return reused(dataDir, existing, tableName, bucketName, id, timeoutMs);
    }
    // Left behind by an owner that died without its supervisor cleaning up: make sure it is gone.
    await stopGroup(existing);
    removeState(dataDir, existing.supervisorPid);
  }
  if (fresh) {
    for (const sub of ['dynamodb', 's3']) rmSync(join(dataDir, sub), { recursive: true, force: true });
  }
  checkJava(java);

  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(dataDir, tableName, bucketName, java, timeoutMs, signal);
    } catch (err) {
      // Another process can take a port between our probe and the emulator's bind: try new ports.
      if (!portTaken.has(err as object) || attempt >= START_ATTEMPTS) throw err;
    }
  }
};

/** Errors from a launch whose emulator could not bind its port (retried with fresh ports). */
const portTaken = new WeakSet<object>();

const launch = async (
  dataDir: string,
  tableName: string,
  bucketName: string,
  java: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<LocalStack> => {
  interruptedCheck(signal);
  const dirs = { dynamodb: join(dataDir, 'dynamodb'), s3: join(dataDir, 's3'), logs: join(dataDir, 'logs') };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  const dynamoPort = await freePort();
  let s3Port = await freePort();
  while (s3Port === dynamoPort) s3Port = await freePort();
  const children = [
    dynamoChild(java, dirs.dynamodb, dynamoPort, join(dirs.logs, 'dynamodb.log')),
    s3rverChild(dirs.s3, s3Port, join(dirs.logs, 's3rver.log')),
  ];
  const deadline = Date.now() + timeoutMs;

  // Held before the supervisor starts watching for holders.
  const holdId = addHolder(dataDir);
  const sup = spawnSupervisor(dataDir, children, join(dirs.logs, 'supervisor.log'));
  const watch = watchSupervisor(sup, children, signal);
  let pids: Awaited<ReturnType<typeof watch.spawned>>;
  try {
    pids = await watch.spawned(timeoutMs);
  } catch (err) {
    removeHolder(dataDir, holdId);
    throw err;
  }
  const state: StackState = {
    version: 1,
    ownerPid: process.pid,
    supervisorPid: pids.supervisor,
    pgid: pids.supervisor,
    dynamoPid: pids.dynamodb,
    s3Pid: pids.s3rver,
    dynamoPort,
    s3Port,
    dynamoEndpoint: `http://127.0.0.1:${dynamoPort}`,
    s3Endpoint: `http://127.0.0.1:${s3Port}`,
    tableName,
    bucketName,
    startedAt: new Date().toISOString(),
  };
  writeState(dataDir, state);
  trackOwned(holdId, releaseAtExit(dataDir, state, holdId));

  spawnedHere.set(pids.supervisor, sup);
  // Dead is not yet reaped: release waits for Node to collect our child, so no zombie of it is left.
  const stop = once(() => release(dataDir, state, holdId, timeoutMs));
  try {
    await waitReady(state, watch, deadline, dirs.logs);
    await provision(state, tableName, bucketName);
  } catch (err) {
    // Not started: nobody else can hold it yet.
    untrackOwned(holdId);
    removeHolder(dataDir, holdId);
    await stopGroup(state);
    await reaped(state.supervisorPid);
    removeState(dataDir, state.supervisorPid);
    throw err;
  }
  return { ...info(dataDir, state, tableName, bucketName), owned: true, stop, gone: () => gonePids(state) };
};

const spawnSupervisor = (dataDir: string, children: readonly ChildSpec[], logFile: string): ChildProcess => {
  const log = openSync(logFile, 'w');
  try {
    const spec = {
      ownerPid: process.pid,
      stateFile: statePath(dataDir),
      holdersDir: holdersDir(dataDir),
      lockFile: join(dataDir, 'stack.lock'),
      children,
    };
    const sup = spawn(process.execPath, [supervisorScript(), JSON.stringify(spec)], {
      cwd: dataDir,
      detached: true,
      stdio: ['ignore', log, log, 'ipc'],
    });
    // The stack must not keep its owner alive: when the owner ends, the supervisor notices and stops.
    sup.unref();
    (sup.channel as { unref?: () => void } | null | undefined)?.unref?.();
    return sup;
  } finally {
    closeSync(log);
  }
};

type SupervisorMessage =
  | { type: 'spawned'; pids: Record<string, number> }
  | { type: 'exit'; name: string; code: number | null; signal: string | null; error?: string };

/** Follows the supervisor's reports while starting; `failure` is set once an emulator or it died. */
const watchSupervisor = (
  sup: ChildProcess,
  children: readonly ChildSpec[],
  abort: AbortSignal | undefined,
) => {
  let failure: LocalStackError | undefined;
  let pids: Record<string, number> | undefined;
  const fail = (what: string, log?: string): void => {
    if (failure) return;
    const tail = log ? logTail(log) : '';
    failure = new LocalStackError(
      `local stack failed to start: ${what}${tail ? `\n--- ${log}\n${tail}` : ''}`,
    );
    if (/Address already in use|EADDRINUSE|BindException/.test(tail)) portTaken.add(failure);
  };
  sup.on('message', (m: SupervisorMessage) => {
    if (m.type === 'spawned') pids = m.pids;
    else if (m.type === 'exit') {
      const log = children.find((c) => c.name === m.name)?.log;
      fail(`${m.name} exited (code ${m.code}, signal ${m.signal})${m.error ? `: ${m.error}` : ''}`, log);
    }
  });
  sup.on('error', (err) => fail(`supervisor could not start: ${err.message}`));
  sup.on('exit', (code, sig) => fail(`supervisor exited (code ${code}, signal ${sig})`));

  // An interrupt fails the start like a dying emulator: the caller stops whatever was spawned.
  abort?.addEventListener('abort', () => {
    failure ??= new LocalStackError('start-up interrupted');
  });
  if (abort?.aborted) failure ??= new LocalStackError('start-up interrupted');

  return {
    failure: (): LocalStackError | undefined => failure,
    spawned: async (timeoutMs: number) => {
      const ok = await pollUntil(() => pids !== undefined || failure !== undefined, timeoutMs, 20);
      if (failure) {
        // Whatever it already spawned goes with it (the group is the supervisor's).
        if (sup.pid) signal(sup.pid, 'SIGTERM', true);
        throw failure;
      }
      const supervisor = sup.pid ?? 0;
      const dynamodb = pids?.dynamodb ?? 0;
      const s3rver = pids?.s3rver ?? 0;
      if (!ok || !supervisor || !dynamodb || !s3rver) {
        if (supervisor) signal(supervisor, 'SIGKILL', true);
        throw new LocalStackError(
          `local stack supervisor did not report its emulators within ${timeoutMs} ms`,
        );
      }
      return { supervisor, dynamodb, s3rver };
    },
  };
};

/** Polls until both emulators answer, failing fast when one of them dies. */
const waitReady = async (
  state: StackState,
  watch: ReturnType<typeof watchSupervisor>,
  deadline: number,
  logDir: string,
): Promise<void> => {
  const probe = localClients({ dynamo: state.dynamoEndpoint, s3: state.s3Endpoint }, true);
  try {
    const ready = await pollUntil(
      async () => {
        const failure = watch.failure();
        if (failure) throw failure;
        return answers(probe);
      },
      Math.max(0, deadline - Date.now()),
      100,
    );
    if (!ready) {
      throw new LocalStackError(
        `local stack did not answer within the start deadline (DynamoDB ${state.dynamoEndpoint}, S3 ${state.s3Endpoint}); logs in ${logDir}`,
      );
    }
  } finally {
    probe.destroy();
  }
};

/** A recorded stack is reusable when all its processes run and both endpoints answer. */
const isLive = async (state: StackState): Promise<boolean> => {
  if (
    !runsProgram(state.supervisorPid, MARKERS.supervisor) ||
    !runsProgram(state.dynamoPid, MARKERS.dynamodb) ||
    !runsProgram(state.s3Pid, MARKERS.s3rver)
  ) {
    return false;
  }
  const probe = localClients({ dynamo: state.dynamoEndpoint, s3: state.s3Endpoint }, true);
  try {
    return await pollUntil(() => answers(probe), 5_000, 200);
  } finally {
    probe.destroy();
  }
};

const provision = async (state: StackState, tableName: string, bucketName: string): Promise<void> => {
  const clients = localClients({ dynamo: state.dynamoEndpoint, s3: state.s3Endpoint });
  try {
    await Promise.all([ensureTable(clients.ddb, tableName), ensureBucket(clients.s3, bucketName)]);
  } finally {
    clients.destroy();
  }
};

/** Our processes of `state` still running (a pid now used by another program does not count). */
const runningPids = (state: StackState): number[] =>
  [
    [state.supervisorPid, MARKERS.supervisor],
    [state.dynamoPid, MARKERS.dynamodb],
    [state.s3Pid, MARKERS.s3rver],
  ]
    .filter(([pid, marker]) => runsProgram(pid as number, marker as string))
    .map(([pid]) => pid as number);

/** Our processes of `state` that no longer run, by name and pid. */
const gonePids = (state: StackState): string[] =>
  (
    [
      ['supervisor', state.supervisorPid, MARKERS.supervisor],
      ['dynamodb', state.dynamoPid, MARKERS.dynamodb],
      ['s3rver', state.s3Pid, MARKERS.s3rver],
    ] as const
  )
    .filter(([, pid, marker]) => !runsProgram(pid, marker))
    .map(([name, pid]) => `${name} (pid ${pid})`);

/**
 * SIGTERM to the group, then SIGKILL if anything outlives a bounded wait. The group is signalled only
 * while one of our processes is in it: a group id is not reused while the group has members.
 */
const stopGroup = async (state: StackState): Promise<void> => {
  const gone = () => runningPids(state).length === 0;
  if (gone()) return;
  signal(state.pgid, 'SIGTERM', true);
  if (await pollUntil(gone, 10_000)) return;
  const left = runningPids(state);
  if (left.length > 0) signal(state.pgid, 'SIGKILL', true);
  for (const pid of left) signal(pid, 'SIGKILL', false);
  if (!(await pollUntil(gone, 5_000))) {
    throw new LocalStackError(
      `local stack processes ${runningPids(state).join(', ')} did not exit after SIGKILL`,
    );
  }
};

const info = (dataDir: string, state: StackState, tableName: string, bucketName: string) => ({
  dataDir,
  dynamoEndpoint: state.dynamoEndpoint,
  s3Endpoint: state.s3Endpoint,
  tableName,
  bucketName,
  pids: { supervisor: state.supervisorPid, dynamodb: state.dynamoPid, s3rver: state.s3Pid },
});

const reused = (
  dataDir: string,
  state: StackState,
  tableName: string,
  bucketName: string,
  hold: string,
  timeoutMs: number,
): LocalStack => ({
  ...info(dataDir, state, tableName, bucketName),
  owned: false,
  stop: once(() => release(dataDir, state, hold, timeoutMs)),
  gone: () => gonePids(state),
});

const once = (fn: () => Promise<void>): (() => Promise<void>) => {
  let p: Promise<void> | undefined;
  return () => {
    p ??= fn();
    return p;
  };
};

const logTail = (file: string): string => {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n').trim();
  } catch {
    return '';
  }
};
