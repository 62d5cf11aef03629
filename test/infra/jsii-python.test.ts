import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildPythonPackage, JSII_ENTRY, PYTHON_MODULE, PYTHON_SNIPPET } from '../../infra/build/jsii';
import { ARCHIVER_STEPS } from '../../infra/construct/step-names';

/**
 * The construct for a Python CDK app (issue: the team's infrastructure is a Python CDK app): the jsii
 * compile of the construct is clean (warnings are errors), and jsii-pacmak's Python package exposes
 * `JobDetailsArchive` with every prop in snake_case, the enums and the step-keyed props, and ships the
 * Lambda bundle the construct deploys. The Python CDK runtime (PyPI) is out of reach here, so the
 * package is checked as generated source (parsed by python3), not imported.
 */
const ROOT = resolve(__dirname, '../..');
let dir: string;
let python: string;
let assembly: {
  types: Record<
    string,
    { kind: string; properties?: { name: string }[]; interfaces?: string[]; members?: { name: string }[] }
  >;
};
let tarball: string[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'jda-jsii-'));
  // Throws on any jsii error or warning (--fail-on-warnings): the compile is clean or this fails.
  buildPythonPackage(dir, { log: (line) => process.stdout.write(`${line}\n`) });
  assembly = JSON.parse(readFileSync(join(dir, '.jsii'), 'utf8'));
  const out = join(dir, 'dist/python/src', PYTHON_MODULE);
  python = readFileSync(join(out, '__init__.py'), 'utf8');
  const tgz = execFileSync('sh', ['-c', `ls ${join(out, '_jsii')}/*.jsii.tgz`], { encoding: 'utf8' }).trim();
  tarball = execFileSync('tar', ['tzf', tgz], { encoding: 'utf8' }).trim().split('\n');
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const fqn = (name: string): string => `job-details-archive-cdk.${name}`;
/** A struct's properties, its bases' included. */
const structProps = (name: string): string[] => {
  const t = assembly.types[fqn(name)];
  if (!t) throw new Error(`${name} is not in the assembly`);
  return [
    ...(t.properties ?? []).map((p) => p.name),
    ...(t.interfaces ?? []).flatMap((i) =>
      i.startsWith('job-details-archive-cdk.') ? structProps(i.split('.')[1] ?? '') : [],
    ),
  ];
};
/** The keyword parameters of a Python class's `__init__` (the generated signature). */
const initParams = (cls: string): string[] => {
  // A construct is `class X(Base, …):`, a struct `class X:`.
  const start = python.search(new RegExp(`\\nclass ${cls}[(:]`));
  const init = python.indexOf('def __init__(', start);
  const end = python.indexOf(') -> None:', init);
  if (start < 0 || init < 0 || end < 0) throw new Error(`no class ${cls} with an __init__ in the package`);
  return [...python.slice(init, end).matchAll(/^\s+([a-z_][a-z0-9_]*):/gm)].map((m) => m[1] ?? '');
};

it('jsii compiles the construct entry clean, into an assembly with the construct and its types', () => {
  expect(JSII_ENTRY).toBe('infra/construct/index.ts');
  const kinds = Object.fromEntries(
    [
      'JobDetailsArchive',
      'JobDetailsArchiveProps',
      'ArchiveStorageClass',
      'RestoreTier',
      'StepMemoryProps',
      'ArchiveStack',
    ].map((n) => [n, assembly.types[fqn(n)]?.kind]),
  );
  expect(kinds).toEqual({
    JobDetailsArchive: 'class',
    JobDetailsArchiveProps: 'interface',
    ArchiveStorageClass: 'enum',
    RestoreTier: 'enum',
    StepMemoryProps: 'interface',
    ArchiveStack: 'class',
  });
});

it('the Python package exposes JobDetailsArchive taking every prop in snake_case', () => {
  const props = structProps('JobDetailsArchiveProps');
  expect(props).toEqual(
    expect.arrayContaining(['olderThanDays', 'stepMemoryMb', 'archiveStorageClass', 'table']),
  );
  const params = initParams('JobDetailsArchive');
  expect(params.slice(0, 2)).toEqual(['scope', 'id']);
  expect(params.slice(2).sort()).toEqual(props.map(snake).sort());
  expect(params).toEqual(
    expect.arrayContaining(['older_than_days', 'job_ttl_days', 'step_memory_mb', 'archive_storage_class']),
  );
  expect(initParams('StepMemoryProps').sort()).toEqual(
    ARCHIVER_STEPS.map((s) => snake(s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()))).sort(),
  );
  expect(python).toMatch(/class ArchiveStorageClass\(enum\.Enum\):[\s\S]*?GLACIER_IR = "GLACIER_IR"/);
  expect(python).toMatch(/def grant_write\(/);
});

it('the package is valid Python and ships the Lambda bundle the construct deploys', () => {
  execFileSync('python3', ['-c', 'import ast, sys; ast.parse(sys.stdin.read())'], { input: python });
  for (const step of ARCHIVER_STEPS) expect(tarball).toContain(`package/lambda/${step}.mjs`);
  expect(tarball.some((f) => f.startsWith('package/lambda/chunks/'))).toBe(true);
  expect(tarball.filter((f) => f.endsWith('.map'))).toEqual([]);
});

it('docs/deployment.md shows the Python stack, whose every keyword the package takes', () => {
  const docs = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8');
  expect(docs).toContain(PYTHON_SNIPPET);
  const used = [...PYTHON_SNIPPET.matchAll(/^\s+([a-z_]+)=/gm)].map((m) => m[1] ?? '');
  const taken = new Set([...initParams('JobDetailsArchive'), ...initParams('StepMemoryProps')]);
  expect(used.filter((k) => !taken.has(k))).toEqual([]);
  expect(used.length).toBeGreaterThan(5);
  // Where the access logs go and how long they stay (the alternative, commented out, included).
  for (const k of ['server_access_logs_bucket', 'server_access_logs_prefix', 'access_logs_retention']) {
    expect([k, taken.has(k), PYTHON_SNIPPET.includes(`${k}=`)]).toEqual([k, true, true]);
  }
});
