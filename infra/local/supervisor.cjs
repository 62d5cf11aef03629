'use strict';
/**
 * Runs the emulators for one local stack and makes sure they never outlive their owner.
 *
 * The owner spawns this file detached, so it leads a new process group; the emulators are started
 * as ordinary children and share that group, so one `kill(-pgid)` stops everything. It shuts the
 * group down when:
 *  - the owner process is gone (IPC channel closed, or signal-0 polling every 500 ms says so —
 *    covers a SIGKILLed owner, which runs no exit handler);
 *  - any emulator exits (the stack is all-or-nothing; the owner sees the exit and fails or stops);
 *  - it receives SIGTERM / SIGINT / SIGHUP.
 * It waits for its children to exit (reaping them, so no zombies are left behind) before exiting.
 *
 * argv[2] is a JSON spec: { ownerPid, stateFile, children: [{ name, command, args, env, cwd, log }] }.
 */
const { spawn } = require('node:child_process');
const { openSync, readFileSync, rmSync } = require('node:fs');

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

const shutdown = async (reason) => {
  if (stopping) return;
  stopping = true;
  log(`stopping: ${reason}`);
  for (const c of running()) c.kill('SIGTERM');
  await allExited(5000);
  for (const c of running()) c.kill('SIGKILL');
  await allExited(2000);
  removeOwnState();
  process.exit(0);
};

for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => shutdown(sig));
process.on('disconnect', () => shutdown('owner disconnected'));
process.on('uncaughtException', (err) => {
  log(`uncaught: ${err.stack ?? err}`);
  shutdown('supervisor error');
});

setInterval(() => {
  if (!isAlive(spec.ownerPid)) shutdown(`owner ${spec.ownerPid} is gone`);
}, 500);

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
if (!isAlive(spec.ownerPid)) shutdown(`owner ${spec.ownerPid} is gone`);
