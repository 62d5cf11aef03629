/**
 * `npm run build:python`: the construct as a jsii library, and its Python package.
 *
 * jsii compiles one project whose package.json carries a `jsii` section; this repository's root
 * package is the npm library (writer, reader, CLI, construct), so the jsii project is STAGED:
 * `.jsii-build/` (ignored by git) gets
 *   - the construct's sources and the shared/ and functions/ modules they import (found by following
 *     the imports from the jsii entry, `infra/construct/index.ts`, the package's `./cdk` entry),
 *   - a package.json (`job-details-archive-cdk`, python target `job_details_archive`), a tsconfig,
 *   - the prebuilt Lambda bundle (`lambda/`, step-bundle.ts), which the compiled construct deploys,
 *   - node_modules: a link to this checkout's (aws-cdk-lib and constructs are jsii libraries).
 * Then `jsii` compiles it (warnings are errors) and, unless `--compile-only`, `jsii-pacmak --targets
 * python --code-only` writes the Python package's sources to `.jsii-build/dist/python/`. Building the
 * wheel needs PyPI (setuptools, the jsii runtime), which is out of reach here: docs/deployment.md.
 *
 *   tsx infra/build/jsii.ts [--compile-only] [--out DIR]
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { buildSync } from 'esbuild';
import * as ts from 'typescript';
import { stepBundleOptions } from '../construct/step-bundle';
import { packageRoot } from '../package-root';

const ROOT = packageRoot();
/** The jsii entry: the `./cdk` face of the npm package, so both languages get one API. */
export const JSII_ENTRY = 'infra/construct/index.ts';
export const PYTHON_MODULE = 'job_details_archive';

/**
 * Our own source files the entry loads at run time or names in its types (relative to ROOT): the
 * TypeScript program rooted at the entry, less the packages (aws-cdk-lib, constructs; esbuild is
 * loaded lazily by the checkout-only bundling path, never by the compiled construct).
 */
export const jsiiSources = (entry: string = JSII_ENTRY): string[] => {
  const program = ts.createProgram([join(ROOT, entry)], {
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    resolveJsonModule: true,
    noEmit: true,
    types: [],
  });
  return program
    .getSourceFiles()
    .map((f) => relative(ROOT, f.fileName))
    .filter((f) => !f.startsWith('..') && !f.includes('node_modules') && !f.endsWith('.d.ts'))
    .sort();
};

/**
 * The Python stack the docs show (docs/deployment.md holds this text verbatim, a test checks it, and
 * every keyword in it against the generated package): the team's own table and bucket, the archiver
 * added in a few lines.
 */
export const PYTHON_SNIPPET = `from aws_cdk import Duration, Stack
from aws_cdk import aws_dynamodb as dynamodb, aws_s3 as s3, aws_sns as sns
from constructs import Construct
from job_details_archive import ArchiveStorageClass, JobDetailsArchive, StepMemoryProps


class EcomStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)
        jobs_table = dynamodb.TableV2(self, "Jobs", ...)   # the jobs table, as today
        details_bucket = s3.Bucket(self, "JobDetails")     # lifecycle rules are added to it
        ops_topic = sns.Topic(self, "Ops")                 # failed runs and the alarm reach it

        archive = JobDetailsArchive(
            self, "JobDetailsArchive",
            table=jobs_table,
            bucket=details_bucket,
            older_than_days=30,
            job_ttl_days=90,
            archive_storage_class=ArchiveStorageClass.GLACIER_IR,
            step_memory_mb=StepMemoryProps(archive_batch=2048),
            execution_timeout=Duration.hours(6),
            alarm_topic=ops_topic,
        )
        archive.grant_write(indexer_function)   # PutObject on job-details/*, table read/write
        archive.grant_read(admin_api_function)  # forensic reads, RestoreObject on parts


class EcomArchiveStack(Stack):
    """Or the construct creates the details bucket (with bucket= given, that bucket keeps its own logging)."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs) -> None:
        super().__init__(scope, construct_id, **kwargs)
        JobDetailsArchive(
            self, "JobDetailsArchive",
            table=dynamodb.TableV2.from_table_attributes(self, "Jobs", table_name="prod-EcomJobs", grant_index_permissions=True),
            # S3 access logs are off by default (about a quarter on top of the archival at 90 days:
            # jobarchive cost --access-log-days N); opted in here, into the account's central log
            # bucket (same region; its lifecycle keeps them) …
            server_access_logs_bucket=s3.Bucket.from_bucket_name(self, "AccessLogs", "acme-s3-access-logs"),
            server_access_logs_prefix="job-details-archive/",
            # … or, without one, into a log bucket of its own that keeps them this long:
            # access_logs_retention=Duration.days(30),
        )
`;

const README = `# job-details-archive (CDK construct for Python)

The \`JobDetailsArchive\` construct of job-details-archive, generated by jsii from the TypeScript
construct: a scheduled state machine that moves terminal jobs' diagnostic data from the hot S3 prefix
into indexed archive parts, plus the grants, alarms and lifecycle rules around it.

\`\`\`python
${PYTHON_SNIPPET}\`\`\`

Props are the TypeScript construct's in snake_case; see docs/deployment.md of the repository.
`;

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;

const manifest = (): object => {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
    devDependencies: Record<string, string>;
  };
  const cdk = root.devDependencies['aws-cdk-lib'];
  const constructs = root.devDependencies.constructs;
  return {
    name: 'job-details-archive-cdk',
    version: root.version,
    description: 'The job-details-archive CDK construct (JobDetailsArchive) for jsii languages (Python).',
    license: root.license,
    author: { name: 'job-details-archive', roles: ['author'] },
    repository: { type: 'git', url: 'https://example.invalid/job-details-archive.git' },
    main: JSII_ENTRY.replace(/\.ts$/, '.js'),
    types: JSII_ENTRY.replace(/\.ts$/, '.d.ts'),
    peerDependencies: { 'aws-cdk-lib': cdk, constructs },
    // jsii wants the lowest version the peer range allows, exactly, as the devDependency.
    devDependencies: {
      'aws-cdk-lib': installedVersion('aws-cdk-lib'),
      constructs: installedVersion('constructs'),
    },
    files: ['**/*.js', '**/*.d.ts', '.jsii', 'lambda/**', '!node_modules/**', '!dist/**'],
    jsii: {
      outdir: 'dist',
      tsconfig: 'tsconfig.jsii.json',
      validateTsconfig: 'minimal',
      targets: { python: { distName: 'job-details-archive', module: PYTHON_MODULE } },
    },
  };
};

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'node16',
    moduleResolution: 'node16',
    strict: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    declaration: true,
    composite: false,
    incremental: false,
    inlineSourceMap: false,
    types: ['node'],
  },
  include: ['infra/**/*.ts', 'shared/**/*.ts', 'functions/**/*.ts'],
  exclude: ['node_modules', 'dist', '**/*.d.ts'],
};

export interface StageResult {
  readonly dir: string;
  readonly sources: readonly string[];
}

/** Lays out the jsii project in `dir` (wiped first). */
export const stageJsiiProject = (dir: string): StageResult => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const sources = jsiiSources();
  for (const file of sources) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(ROOT, file), join(dir, file));
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest(), null, 2)}\n`);
  writeFileSync(join(dir, 'tsconfig.jsii.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  writeFileSync(join(dir, 'README.md'), README);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { dir, sources };
};

/** The shared Lambda bundle the compiled construct deploys (`<dir>/lambda`, as in the npm build). */
const bundleLambda = (dir: string): void => {
  buildSync(stepBundleOptions(ROOT, join(dir, 'lambda'), false));
};

/** jsii compile: returns its output; throws (with that output) on any error or warning. */
export const compileJsii = (dir: string): string =>
  execFileSync(
    process.execPath,
    [require.resolve('jsii/bin/jsii'), '--fail-on-warnings', '--silence-warnings=reserved-word'],
    {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );

/** The Python package's sources (no wheel: that needs PyPI). Returns the folder they are in. */
export const generatePython = (dir: string): string => {
  execFileSync(
    process.execPath,
    [
      require.resolve('jsii-pacmak/bin/jsii-pacmak'),
      '--targets',
      'python',
      '--code-only',
      '--outdir',
      'dist',
    ],
    {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return join(dir, 'dist', 'python');
};

/**
 * Stage, bundle, compile and (unless compileOnly) generate the Python package in `dir`, logging each
 * step with its time. Throws on any jsii error or warning.
 */
export const buildPythonPackage = (
  dir: string,
  opts: { compileOnly?: boolean; log?: (line: string) => void } = {},
): { python?: string; compileSeconds: number } => {
  const log = opts.log ?? ((): void => undefined);
  const seconds = (since: number): number => (Date.now() - since) / 1000;
  const t0 = Date.now();
  const { sources } = stageJsiiProject(dir);
  log(`staged ${sources.length} sources in ${relative(process.cwd(), dir) || dir}`);
  bundleLambda(dir);
  const t1 = Date.now();
  compileJsii(dir);
  const compileSeconds = seconds(t1);
  log(`jsii compile clean in ${compileSeconds.toFixed(1)} s (.jsii assembly)`);
  if (opts.compileOnly) return { compileSeconds };
  const t2 = Date.now();
  const python = generatePython(dir);
  if (!existsSync(python)) throw new Error(`jsii-pacmak wrote nothing to ${python}`);
  log(`jsii-pacmak python sources in ${seconds(t2).toFixed(1)} s → ${python}`);
  log(`total ${seconds(t0).toFixed(1)} s`);
  return { python, compileSeconds };
};

const main = (): void => {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const dir = (outAt >= 0 ? args[outAt + 1] : undefined) ?? join(ROOT, '.jsii-build');
  buildPythonPackage(dir, {
    compileOnly: args.includes('--compile-only'),
    log: (line) => process.stdout.write(`build:python: ${line}\n`),
  });
};

if (require.main === module) {
  try {
    main();
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    process.stderr.write(`build:python: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}\n`);
    process.exit(1);
  }
}
