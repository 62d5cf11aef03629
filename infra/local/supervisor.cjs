'use strict';
/**
 * Runs the emulators for one local stack and makes sure they never outlive their owner.
 *
 * The owner spawns this file detached, so it leads a new process group; the emulators are started
 * as ordinary children and share that group, so one `kill(-pgid)` stops everything. It shuts the
 * group down when:
 *  - no process holds the stack any more (holders.ts: a file per holding process, checked every
 *    500 ms and when the owner's IPC channel closes — covers SIGKILLed holders, which run no exit
 *    handler). The decision is taken under the data dir's start lock, so a process joining the
 *    stack at that moment is either counted or waits and starts a new one;
 *  - any emulator exits (the stack is all-or-nothing; the owner sees the exit and fails or stops);
 *  - it receives SIGTERM / SIGINT / SIGHUP.
 * It waits for its children to exit (reaping them, so no zombies are left behind) before exiting.
 *
 * argv[2] is a JSON spec: { ownerPid, stateFile, holdersDir, lockFile,
 *   children: [{ name, command, args, env, cwd, log }] }.
 */
const { spawn } = require('node:child_process');
const { openSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const spec = JSON.parse(process.argv[2] ?? '{}');
const children = new Map(); // name -> ChildProcess
let stopping = false;

const log = (msg) => process.stderr.write(`${new Date().toISOString()} supervisor ${process.pid}: ${msg}\n`);

const send = (msg) => {
  if (process.connected) process.send(msg, (err) => err && log(`send failed: ${err.message}`));
};

const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
};

/** Field 22 of /proc/<pid>/stat: with the pid, it names one process (holders.ts writes the same). */
const startTimeOf = (pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
};

const liveHolders = () => {
  let names = [];
  try {
    names = readdirSync(spec.holdersDir);
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    try {
      const [pid, started = ''] = readFileSync(join(spec.holdersDir, name), 'utf8').trim().split(' ');
      return isAlive(Number(pid)) && (started === '' || started === startTimeOf(Number(pid))) ? [pid] : [];
    } catch {
      return [];
    }
  });
};

/** The data dir's start lock (lock.ts's protocol: our pid in a file created exclusively). */
const tryLock = () => {
  try {
    writeFileSync(spec.lockFile, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  try {
    const holder = Number(readFileSync(spec.lockFile, 'utf8'));
    if (!isAlive(holder)) rmSync(spec.lockFile, { force: true });
  } catch {
    // Released meanwhile.
  }
  return false;
};
const unlock = () => {
  try {
    if (readFileSync(spec.lockFile, 'utf8') === String(process.pid)) rmSync(spec.lockFile, { force: true });
  } catch {
    // Not ours any more.
  }
};

let heldBy = '';
/** Stops the stack once nobody holds it; a start in progress (lock taken) is waited out. */
const checkHolders = () => {
  if (stopping) return;
  const holders = [...new Set(liveHolders())].sort().join(', ');
  if (holders !== heldBy) log(`held by: ${holders || 'nobody'}`);
  heldBy = holders;
  if (holders !== '' || !tryLock()) return;
  if (liveHolders().length > 0) {
    unlock();
    return;
  }
  shutdown('no process holds the stack', unlock);
};

const removeOwnState = () => {
  try {
    const state = JSON.parse(readFileSync(spec.stateFile, 'utf8'));
    if (state.supervisorPid === process.pid) rmSync(spec.stateFile, { force: true });
  } catch {
    // No state file (not written yet, or the owner already removed it).
  }
};

const running = () => [...children.values()].filter((c) => c.exitCode === null && c.signalCode === null);

/** Resolves once every child has exited, or after `ms` (a deadline, not a synchronisation sleep). */
const allExited = (ms) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const check = () => {
      if (running().length === 0) {
        clearTimeout(timer);
        resolve();
      }
    };
    for (const c of running()) c.once('exit', check);
    check();
  });

const shutdown = async (reason, then = () => {}) => {
  if (stopping) return;
  stopping = true;
  log(`stopping: ${reason}`);
  for (const c of running()) c.kill('SIGTERM');
  await allExited(5000);
  for (const c of running()) c.kill('SIGKILL');
  await allExited(2000);
  removeOwnState();
  then();
  process.exit(0);
};

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => shutdown(sig));
process.on('disconnect', checkHolders);
process.on('uncaughtException', (err) => {
  log(`uncaught: ${err.stack ?? err}`);
  shutdown('supervisor error');
});

setInterval(checkHolders, 500);

for (const c of spec.children ?? []) {
  const out = openSync(c.log, 'w');
  const child = spawn(c.command, c.args, {
    cwd: c.cwd,
    env: { ...process.env, ...c.env },
    stdio: ['ignore', out, out],
  });
  children.set(c.name, child);
  child.on('error', (err) => {
    log(`${c.name} failed to start: ${err.message}`);
    send({ type: 'exit', name: c.name, code: null, signal: null, error: err.message });
    shutdown(`${c.name} failed to start`);
  });
  child.on('exit', (code, signal) => {
    log(`${c.name} exited (code ${code}, signal ${signal})`);
    if (!stopping) send({ type: 'exit', name: c.name, code, signal });
    shutdown(`${c.name} exited`);
  });
}

send({ type: 'spawned', pids: Object.fromEntries([...children].map(([name, c]) => [name, c.pid ?? 0])) });
checkHolders();
