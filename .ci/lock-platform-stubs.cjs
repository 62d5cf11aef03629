#!/usr/bin/env node
// The npm registry this project's machines reach does not serve some other-platform binaries
// (e.g. @biomejs/cli-darwin-arm64), so `npm install` leaves them out of package-lock.json and
// `npm ci` then refuses the lock as out of sync. Those packages are optional and never installed
// on Linux x64; recording them with their os/cpu lets `npm ci` skip them like on any other registry.
// Run after every `npm install` that rewrites the lock:  node .ci/lock-platform-stubs.cjs
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const pkgs = lock.packages;

const OS = [
  'android',
  'darwin',
  'freebsd',
  'linux',
  'win32',
  'openharmony',
  'sunos',
  'aix',
  'netbsd',
  'openbsd',
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x'];

const platformOf = (name) => {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu =
    parts.find((p) => CPU.includes(p)) ??
    (parts.includes('eabi') || parts.includes('gnueabihf') ? 'arm' : undefined);
  const libc =
    parts.includes('musl') || parts.some((p) => p.startsWith('musl'))
      ? 'musl'
      : os === 'linux'
        ? 'glibc'
        : undefined;
  return { os, cpu, libc };
};

let added = 0;
for (const [where, meta] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = `${where}/node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (pkgs[nested] || pkgs[top]) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os || !cpu) continue; // not a platform binary: leave it to npm
    // Same shape and key order as npm writes for such entries, so a later `npm install` keeps the
    // lock byte-identical.
    pkgs[top] = {
      version,
      cpu: [cpu],
      ...(meta.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => a.localeCompare(b, 'en')));
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-platform-stubs: recorded ${added} other-platform optional package(s)`);
