import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DescribeTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { applyStackEnv, LOCAL_CREDENTIALS } from '../../infra/local/env';
import { LocalStackError } from '../../infra/local/errors';
import {
  handoffFile,
  JEST_DATA_DIR_PREFIX,
  removeHandoff,
  staleHandoffs,
  writeHandoff,
} from '../../infra/local/handoff';
import { parseJavaMajor } from '../../infra/local/java';
import { isAlive, pollUntil } from '../../infra/local/process';
import {
  defaultDataDir,
  type LocalStack,
  stackEnv,
  startLocalStack,
  stopLocalStack,
} from '../../infra/local/stack';
import { readState, statePath } from '../../infra/local/state';
import { dynamoClientFrom, s3ClientFrom } from '../../shared/clients';
import { config, parseConfig, resetConfig } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';
import { JOBS_TABLE } from '../../shared/jobs/schema';
import { freshBucket, freshTable, sharedStack, testDdb, testS3 } from '../support/local';

const ROOT = resolve(__dirname, '../..');
const STACK_MODULE = join(ROOT, 'infra/local/stack.ts');

/** Dead for sure: signal 0 says "no such process" (the process was also reaped). */
const gone = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
};

const tempDirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'jda-stack-test-'));
  tempDirs.push(dir);
  return dir;
};

/** Clients for a stack other than the global one, built like entry points build theirs. */
const clientsFor = (stack: LocalStack) => {
  const cfg = parseConfig({ ...stackEnv(stack) });
  return { s3: s3ClientFrom(cfg), ddb: dynamoClientFrom(cfg) };
};

/** Puts `count` tiny objects, at most `concurrency` in flight. */
const putMany = async (s3: S3Client, bucket: string, count: number, concurrency: number): Promise<void> => {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: `many/${String(i).padStart(5, '0')}`, Body: `${i}` }),
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
};

afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('the jest run’s local stack', () => {
  const s3 = testS3();
  const ddb = testDdb();
  afterAll(() => {
    s3.destroy();
    ddb.destroy();
  });

  test('both emulators answer and the default table and bucket exist', async () => {
    const stack = sharedStack();
    expect(stack.dynamoEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(stack.s3Endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const tables = await ddb.send(new ListTablesCommand({}));
    expect(tables.TableNames).toContain('jobs');
    const buckets = await s3.send(new ListBucketsCommand({}));
    expect(buckets.Buckets?.map((b) => b.Name)).toContain('job-details');
    await expect(s3.send(new HeadBucketCommand({ Bucket: 'job-details' }))).resolves.toBeDefined();
  });

  test('the environment points shared/config.ts at the stack', () => {
    const stack = sharedStack();
    const cfg = parseConfig(process.env);
    expect(cfg).toMatchObject({
      s3Endpoint: stack.s3Endpoint,
      dynamoEndpoint: stack.dynamoEndpoint,
      jobsTable: 'jobs',
      detailsBucket: 'job-details',
      region: 'us-east-1',
    });
  });

  test('the jobs table has both GSIs with the schema’s projections', async () => {
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: 'jobs' }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    const gsis = new Map((Table?.GlobalSecondaryIndexes ?? []).map((g) => [g.IndexName, g]));
    expect([...gsis.keys()].sort()).toEqual(['GSI_JobLookup_v2', 'GSI_JobsByStatus_v2']);

    const lookup = gsis.get('GSI_JobLookup_v2');
    expect(lookup?.KeySchema).toEqual([{ AttributeName: 'job_id', KeyType: 'HASH' }]);
    expect(lookup?.Projection?.ProjectionType).toBe('KEYS_ONLY');

    const byStatus = gsis.get('GSI_JobsByStatus_v2');
    expect(byStatus?.KeySchema).toEqual([
      { AttributeName: 'job_status', KeyType: 'HASH' },
      { AttributeName: 'status_created_at', KeyType: 'RANGE' },
    ]);
    expect(byStatus?.Projection?.ProjectionType).toBe('INCLUDE');
    expect([...(byStatus?.Projection?.NonKeyAttributes ?? [])].sort()).toEqual(
      [...JOBS_TABLE.gsiJobsByStatus.nonKeyAttributes].sort(),
    );
  });

  test('freshBucket and freshTable create new, distinct, empty resources', async () => {
    const [b1, b2, t1, t2] = await Promise.all([freshBucket(), freshBucket(), freshTable(), freshTable()]);
    expect(b1).not.toBe(b2);
    expect(t1).not.toBe(t2);
    expect(b1).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: b1 }));
    expect(listed.KeyCount).toBe(0);
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: t1 }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.ItemCount).toBe(0);
    expect(Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual([
      'GSI_JobLookup_v2',
      'GSI_JobsByStatus_v2',
    ]);
  });

  test('DeleteObjects honours per-key ETags as S3 does: 412 entry on mismatch, NoSuchKey when absent', async () => {
    const bucket = await freshBucket();
    const put = async (key: string, body: string) =>
      ((await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }))).ETag ?? '').replace(
        /"/g,
        '',
      );
    const same = await put('same', 'a');
    await put('changed', 'b');
    await put('plain', 'c');
    const out = await s3.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: {
          Objects: [
            { Key: 'same', ETag: `"${same}"` },
            { Key: 'changed', ETag: '"0123456789abcdef0123456789abcdef"' },
            { Key: 'absent', ETag: `"${same}"` },
            { Key: 'plain' },
            { Key: 'absent-plain' },
          ],
          Quiet: true,
        },
      }),
    );
    expect(Object.fromEntries((out.Errors ?? []).map((e) => [e.Key, e.Code]))).toEqual({
      changed: 'PreconditionFailed',
      absent: 'NoSuchKey',
    });
    const left = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    expect((left.Contents ?? []).map((o) => o.Key)).toEqual(['changed']);
  });

  test('GetObject honours If-Match as S3 does: the bytes when the ETag matches, 412 when it differs, NoSuchKey when absent', async () => {
    const bucket = await freshBucket();
    const etag =
      (await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'version one' }))).ETag ?? '';
    const get = (key: string, ifMatch: string, range?: string) =>
      s3
        .send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            IfMatch: ifMatch,
            ...(range ? { Range: range } : {}),
          }),
        )
        .then(
          async (r) => ({ body: await r.Body?.transformToString() }),
          (err: { name?: string; $metadata?: { httpStatusCode?: number } }) => ({
            error: err.name,
            status: err.$metadata?.httpStatusCode,
          }),
        );
    expect(await get('k', etag)).toEqual({ body: 'version one' });
    expect(await get('k', etag, 'bytes=0-6')).toEqual({ body: 'version' });
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'version two' }));
    expect(await get('k', etag, 'bytes=0-6')).toEqual({ error: 'PreconditionFailed', status: 412 });
    expect(await get('absent', etag)).toEqual({ error: 'NoSuchKey', status: 404 });
  });

  test('ListObjectsV2 pages through more than 1,000 objects with continuation tokens', async () => {
    const bucket = await freshBucket();
    await putMany(s3, bucket, 1100, 32);
    const keys: string[] = [];
    let pages = 0;
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      pages++;
      keys.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      if (page.IsTruncated) expect(token).toBeTruthy();
    } while (token);
    expect(pages).toBe(2);
    expect(keys).toHaveLength(1100);
    expect(new Set(keys).size).toBe(1100);
    expect(keys).toEqual([...keys].sort());
  });

  test('a GET right after a PUT sees the whole new object and its ETag (read-after-write, like S3)', async () => {
    // Contract check. Stock s3rver answers a PUT before the file is fully written (our entry patches
    // that); the race only shows under load (it failed a CI run), so this cannot force it — it pins
    // the behaviour the archiver's index rewrite → re-read relies on.
    const bucket = await freshBucket();
    for (let i = 0; i < 10; i++) {
      const body = Buffer.alloc(1024 * 1024 + i, i % 251);
      const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'rewritten.json', Body: body }));
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'rewritten.json' }));
      const bytes = Buffer.from(
        await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
      );
      expect(bytes.equals(body)).toBe(true);
      expect(got.ETag).toBe(put.ETag);
    }
  });

  test('GETs racing PUTs of the same key each see one whole version with its ETag (as S3)', async () => {
    // Contract check. Stock s3rver stats the object, then opens it by path: a rename between them
    // streamed the new body cut to the old length (it failed whole batches' shared-index reads in the
    // fleet benchmark, 2 runs of 3; none of 5 since GETs take the PUTs' key lock). The window is too
    // narrow for this test to force; it pins what the archiver relies on.
    const bucket = await freshBucket();
    const bodies = [Buffer.alloc(4096, 1), Buffer.alloc(300 * 1024, 2)];
    const md5s = bodies.map((b) => `"${createHash('md5').update(b).digest('hex')}"`);
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'raced', Body: bodies[0] }));
    const puts = Array.from({ length: 40 }, (_, i) =>
      s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'raced', Body: bodies[i % 2] })),
    );
    const gets = Array.from({ length: 80 }, async () => {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'raced' }));
      const bytes = Buffer.from(
        await (got.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
      );
      return { which: bodies.findIndex((b) => b.equals(bytes)), etag: got.ETag, length: bytes.length };
    });
    const [, seen] = await Promise.all([Promise.all(puts), Promise.all(gets)]);
    for (const s of seen) {
      expect(s.which).toBeGreaterThanOrEqual(0);
      expect(s.etag).toBe(md5s[s.which]);
    }
  });

  test('a start on the same data dir reuses the running stack without owning it', async () => {
    const shared = sharedStack();
    const again = await startLocalStack({ dataDir: shared.dataDir });
    expect(again.owned).toBe(false);
    expect(again.dynamoEndpoint).toBe(shared.dynamoEndpoint);
    expect(again.s3Endpoint).toBe(shared.s3Endpoint);
    await again.stop(); // a no-op for a non-owner
    const tables = await ddb.send(new ListTablesCommand({}));
    expect(tables.TableNames).toContain('jobs');
  });
});

describe('a stack of its own', () => {
  test('stop() leaves no live processes and the data survives a restart', async () => {
    const dataDir = tempDir();
    const first = await startLocalStack({ dataDir, tableName: 'persisted', bucketName: 'persisted-bucket' });
    expect(first.owned).toBe(true);
    const pids = Object.values(first.pids);
    expect(pids.every((pid) => !gone(pid))).toBe(true);
    expect(readState(dataDir)?.supervisorPid).toBe(first.pids.supervisor);

    const c1 = clientsFor(first);
    await c1.s3.send(new PutObjectCommand({ Bucket: 'persisted-bucket', Key: 'k', Body: 'kept' }));
    await c1.ddb.send(new PutCommand({ TableName: 'persisted', Item: { pk: 'SHOP#s', sk: 'JOB#j', n: 1 } }));
    c1.s3.destroy();
    c1.ddb.destroy();

    await first.stop();
    expect(pids.filter((pid) => !gone(pid))).toEqual([]);
    expect(existsSync(statePath(dataDir))).toBe(false);

    const second = await startLocalStack({ dataDir, tableName: 'persisted', bucketName: 'persisted-bucket' });
    const c2 = clientsFor(second);
    try {
      const obj = await c2.s3.send(new GetObjectCommand({ Bucket: 'persisted-bucket', Key: 'k' }));
      expect(await obj.Body?.transformToString()).toBe('kept');
      const item = await c2.ddb.send(
        new GetCommand({ TableName: 'persisted', Key: { pk: 'SHOP#s', sk: 'JOB#j' } }),
      );
      expect(item.Item).toEqual({ pk: 'SHOP#s', sk: 'JOB#j', n: 1 });
    } finally {
      c2.s3.destroy();
      c2.ddb.destroy();
      await second.stop();
    }

    // fresh: true starts over with empty emulators.
    const third = await startLocalStack({
      dataDir,
      tableName: 'persisted',
      bucketName: 'persisted-bucket',
      fresh: true,
    });
    const c3 = clientsFor(third);
    try {
      const item = await c3.ddb.send(
        new GetCommand({ TableName: 'persisted', Key: { pk: 'SHOP#s', sk: 'JOB#j' } }),
      );
      expect(item.Item).toBeUndefined();
      const listed = await c3.s3.send(new ListObjectsV2Command({ Bucket: 'persisted-bucket' }));
      expect(listed.KeyCount).toBe(0);
    } finally {
      c3.s3.destroy();
      c3.ddb.destroy();
      await third.stop();
    }
    expect(Object.values(third.pids).filter((pid) => !gone(pid))).toEqual([]);
  });

  test('concurrent starts on one data dir share one stack', async () => {
    const dataDir = tempDir();
    const stacks = await Promise.all([startLocalStack({ dataDir }), startLocalStack({ dataDir })]);
    try {
      expect(stacks.map((s) => s.owned).sort()).toEqual([false, true]);
      expect(stacks[0]?.pids).toEqual(stacks[1]?.pids);
    } finally {
      for (const s of stacks) await s.stop();
    }
    expect(Object.values(stacks[0]?.pids ?? {}).filter((pid) => !gone(pid))).toEqual([]);
  });

  test('a start cleans up after a stack whose state file names dead processes', async () => {
    const dataDir = tempDir();
    const stale = await startLocalStack({ dataDir });
    const staleState = readState(dataDir);
    await stale.stop();
    // Put the old record back, as if its owner had died without cleaning up.
    writeFileSync(statePath(dataDir), JSON.stringify(staleState));
    const next = await startLocalStack({ dataDir });
    try {
      expect(next.owned).toBe(true);
      expect(next.pids.supervisor).not.toBe(stale.pids.supervisor);
      expect(readState(dataDir)?.supervisorPid).toBe(next.pids.supervisor);
    } finally {
      await next.stop();
    }
  });

  test('SIGKILL of the supervisor alone still takes the emulators down', async () => {
    const dataDir = tempDir();
    const stack = await startLocalStack({ dataDir });
    process.kill(stack.pids.supervisor, 'SIGKILL');
    // The s3rver process notices its parent is gone and kills the group (DynamoDB Local included).
    // They are orphans now, reaped by whatever PID 1 is: isAlive treats a zombie as dead.
    const dead = await pollUntil(() => !isAlive(stack.pids.dynamodb) && !isAlive(stack.pids.s3rver), 15_000);
    expect(dead).toBe(true);
    await stack.stop();
    expect(existsSync(statePath(dataDir))).toBe(false);
  });

  test('without Java, the start fails with a LocalStackError naming Java 17+', async () => {
    const dataDir = tempDir();
    const start = startLocalStack({ dataDir, java: join(dataDir, 'no-such-java') });
    await expect(start).rejects.toThrow(LocalStackError);
    await expect(start).rejects.toThrow(/Java 17\+ is needed/);
    expect(existsSync(statePath(dataDir))).toBe(false);
  });

  test('the default data dir is the user’s: $XDG_DATA_HOME/jobarchive, else .jobarchive/ in the working directory', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/home/u/.local/share' }, '/work/app')).toBe(
      '/home/u/.local/share/jobarchive',
    );
    expect(defaultDataDir({}, '/work/app')).toBe('/work/app/.jobarchive');
    expect(defaultDataDir({ XDG_DATA_HOME: '' }, ROOT)).toBe(join(ROOT, '.jobarchive'));
  });

  test('bad names are rejected before anything starts', async () => {
    const dataDir = join(tempDir(), 'never-created');
    await expect(startLocalStack({ dataDir, bucketName: 'Not_A_Bucket' })).rejects.toThrow(InvalidInputError);
    await expect(startLocalStack({ dataDir, tableName: 'x' })).rejects.toThrow(InvalidInputError);
    expect(existsSync(dataDir)).toBe(false);
  });

  test('s3rver accepts credentials other than its built-in key', async () => {
    const stack = sharedStack();
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: stack.s3Endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKIAREALLOOKINGKEY01', secretAccessKey: 'not-the-s3rver-secret' },
    });
    try {
      const buckets = await s3.send(new ListBucketsCommand({}));
      expect(buckets.Buckets?.map((b) => b.Name)).toContain('job-details');
    } finally {
      s3.destroy();
    }
    expect(LOCAL_CREDENTIALS.accessKeyId).toBe('S3RVER');
  });
});

describe('no orphans when the owner process ends', () => {
  /**
   * An owner in a separate process: starts a stack on argv[3], prints its pids, then idles ('idle'),
   * idles with its own SIGINT handler ('graceful') or simply returns so the process ends ('return').
   */
  const ownerScript = (dir: string): string => {
    const file = join(dir, 'owner.ts');
    writeFileSync(
      file,
      [
        `import { startLocalStack } from ${JSON.stringify(STACK_MODULE)};`,
        'const [, , mode, dataDir] = process.argv;',
        'startLocalStack({ dataDir }).then((s) => {',
        "  process.stdout.write(JSON.stringify(s.pids) + '\\n');",
        "  if (mode === 'idle' || mode === 'graceful') setInterval(() => undefined, 60_000);",
        // Like a CLI: its own handler stops the stack and picks the exit code.
        "  if (mode === 'graceful') process.once('SIGINT', () => void s.stop().then(() => process.exit(130)));",
        '});',
      ].join('\n'),
    );
    return file;
  };

  type Pids = LocalStack['pids'];
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  /** Runs the owner script under tsx in one Node process (no wrapper process in between). */
  const startOwner = async (mode: 'idle' | 'graceful' | 'return') => {
    const dataDir = tempDir();
    const child = spawn(process.execPath, ['--import', 'tsx', ownerScript(dataDir), mode, dataDir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
      child.once('exit', (code, signal) => res({ code, signal })),
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const firstLine = await new Promise<string | undefined>((res) => {
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
      lines.once('line', res);
      lines.once('close', () => res(undefined));
    });
    if (!firstLine) throw new Error(`owner process printed no pids; stderr:\n${stderr}`);
    const pids = JSON.parse(firstLine) as Pids;
    // An owner in 'return' mode is already on its way out (its exit hook stops the stack): its pids
    // were alive when it printed them, but may not be by the time we read them.
    if (mode !== 'return') expect(Object.values(pids).every((pid) => !gone(pid))).toBe(true);
    return { child, pids, exited, dataDir };
  };

  const emulatorsGone = (pids: Pids) => pollUntil(() => gone(pids.dynamodb) && gone(pids.s3rver), 20_000);

  test('SIGKILL of the owner: the supervisor takes the emulators down', async () => {
    const { child, pids, exited, dataDir } = await startOwner('idle');
    child.kill('SIGKILL');
    expect((await exited).signal).toBe('SIGKILL');
    expect(await emulatorsGone(pids)).toBe(true);
    // The supervisor itself is gone too (maybe as a not-yet-reaped zombie of PID 1).
    expect(await pollUntil(() => !isAlive(pids.supervisor), 5_000)).toBe(true);
    expect(existsSync(statePath(dataDir))).toBe(false);
  });

  test('SIGINT (Ctrl-C) of the owner: it stops its stack and still dies of SIGINT', async () => {
    const { child, pids, exited } = await startOwner('idle');
    child.kill('SIGINT');
    expect(await exited).toEqual({ code: null, signal: 'SIGINT' });
    expect(await emulatorsGone(pids)).toBe(true);
  });

  test('SIGINT of an owner with its own handler: the handler decides the exit, the stack stops', async () => {
    const { child, pids, exited } = await startOwner('graceful');
    child.kill('SIGINT');
    expect(await exited).toEqual({ code: 130, signal: null });
    expect(await emulatorsGone(pids)).toBe(true);
  });

  test('an owner that ends without calling stop() leaves nothing running', async () => {
    const { pids, exited } = await startOwner('return');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(await emulatorsGone(pids)).toBe(true);
  });

  test('a process that reused the stack keeps it through its owner’s SIGKILL; its own stop() is the last and stops it', async () => {
    const { child, pids, exited, dataDir } = await startOwner('idle');
    const joined = await startLocalStack({ dataDir });
    expect(joined.owned).toBe(false);
    expect(joined.pids).toEqual(pids);
    child.kill('SIGKILL');
    expect((await exited).signal).toBe('SIGKILL');
    // The supervisor has seen the owner go (its holder set changed): it still serves the other holder.
    const log = () => readFileSync(join(dataDir, 'logs', 'supervisor.log'), 'utf8');
    expect(await pollUntil(() => log().includes(`held by: ${process.pid}\n`), 10_000)).toBe(true);
    const { s3, ddb } = clientsFor(joined);
    try {
      await s3.send(new PutObjectCommand({ Bucket: joined.bucketName, Key: 'still', Body: 'up' }));
      expect((await ddb.send(new ListTablesCommand({}))).TableNames).toContain(joined.tableName);
    } finally {
      s3.destroy();
      ddb.destroy();
    }
    expect([pids.dynamodb, pids.s3rver].filter((pid) => gone(pid))).toEqual([]);
    expect(log()).not.toMatch(/stopping/);
    await joined.stop();
    expect(await emulatorsGone(pids)).toBe(true);
    expect(existsSync(statePath(dataDir))).toBe(false);
  });

  test('stopLocalStack works from a process that does not own the stack', async () => {
    const { child, pids, exited, dataDir } = await startOwner('idle');
    expect(await stopLocalStack(dataDir)).toBe(true);
    expect([pids.dynamodb, pids.s3rver].filter((pid) => !gone(pid))).toEqual([]);
    expect(await stopLocalStack(dataDir)).toBe(false);
    child.kill('SIGTERM');
    await exited;
  });
});

describe('environment and handoff', () => {
  test('applyStackEnv points the SDK and config at a stack and keeps credentials already set', () => {
    const saved = { ...process.env };
    try {
      process.env.AWS_ACCESS_KEY_ID = 'mine';
      process.env.AWS_SECRET_ACCESS_KEY = 'secret';
      applyStackEnv({
        dynamoEndpoint: 'http://127.0.0.1:1',
        s3Endpoint: 'http://127.0.0.1:2',
        tableName: 't1',
        bucketName: 'b1',
      });
      expect(process.env).toMatchObject({
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
        AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:2',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'mine',
        AWS_SECRET_ACCESS_KEY: 'secret',
        ECOM_JOBS_TABLE: 't1',
        ECOM_JOB_DETAILS_BUCKET: 'b1',
      });
      // The cached config was dropped, so the new values are what config() returns.
      expect(config()).toMatchObject({
        s3Endpoint: 'http://127.0.0.1:2',
        jobsTable: 't1',
        detailsBucket: 'b1',
      });

      delete process.env.AWS_ACCESS_KEY_ID;
      applyStackEnv(sharedStack());
      expect(process.env.AWS_ACCESS_KEY_ID).toBe(LOCAL_CREDENTIALS.accessKeyId);
      expect(process.env.AWS_SECRET_ACCESS_KEY).toBe(LOCAL_CREDENTIALS.secretAccessKey);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
      resetConfig(); // the next config() parses the restored environment
    }
  });

  test('handoffs of dead jest runs are found, with their data dir only when it is one of ours', async () => {
    // A pid that surely belongs to no running process: one of a child that has exited.
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = await new Promise<number>((res) => child.once('exit', () => res(child.pid ?? 0)));
    const ours = mkdtempSync(JEST_DATA_DIR_PREFIX);
    tempDirs.push(ours);
    const info = {
      dynamoEndpoint: 'http://x',
      s3Endpoint: 'http://y',
      tableName: 't',
      bucketName: 'b',
      env: {},
    };
    try {
      writeHandoff(deadPid, { ...info, dataDir: ours });
      expect(staleHandoffs()).toContainEqual({ pid: deadPid, dataDir: ours });
      writeHandoff(deadPid, { ...info, dataDir: '/etc' });
      expect(staleHandoffs()).toContainEqual({ pid: deadPid, dataDir: undefined });
      // A live run's handoff is not stale (pid 1 stands in for a live jest main process; never our
      // own pid, whose handoff may be the real one of this run).
      writeHandoff(1, { ...info, dataDir: ours });
      expect(staleHandoffs().map((h) => h.pid)).not.toContain(1);
    } finally {
      removeHandoff(deadPid);
      removeHandoff(1);
    }
    expect(existsSync(handoffFile(deadPid))).toBe(false);
  });
});

describe('parseJavaMajor', () => {
  test.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_392"', 8],
    ['openjdk version "11.0.2" 2019-01-15', 11],
    ['no version here', undefined],
  ])('%s → %s', (out, major) => {
    expect(parseJavaMajor(out)).toBe(major);
  });
});
