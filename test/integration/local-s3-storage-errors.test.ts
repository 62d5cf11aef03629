import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListBucketsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { localClients } from '../../infra/local/aws';
import { s3rverEntry } from '../../infra/local/emulators';
import { freePort } from '../../infra/local/ports';

/**
 * Issue 25, point 10: a local S3 whose disk refuses a write answered a bare "InternalError", and a run
 * failed without saying why. Here a private s3rver (the project's patched entry) runs under a file
 * size limit (`ulimit -f`, SIGXFSZ ignored: writes past it fail with EFBIG, as they fail with ENOSPC on
 * a full disk); its answer must name the cause and the data directory.
 */
jest.setTimeout(60_000);

let child: ChildProcess | undefined;
let dir: string;
let clients: ReturnType<typeof localClients>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jda-s3-full-'));
  const port = await freePort();
  // 64 KiB of file size: the bucket's metadata fits, a 1 MiB object does not.
  child = spawn(
    'bash',
    [
      '-c',
      `trap '' XFSZ; ulimit -f 64; exec "$0" --openssl-legacy-provider "$1" "$2" "$3"`,
      process.execPath,
      s3rverEntry(),
      String(port),
      dir,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child?.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) resolve();
    });
    child?.on('exit', (code) => reject(new Error(`s3rver exited ${code}`)));
  });
  clients = localClients({ dynamo: 'http://127.0.0.1:1', s3: `http://127.0.0.1:${port}` });
  await clients.s3.send(new ListBucketsCommand({}));
});

afterAll(async () => {
  clients?.destroy();
  if (child && child.exitCode === null) {
    const gone = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  rmSync(dir, { recursive: true, force: true });
});

test('a write the disk refuses is answered as an InternalError that names the cause and the directory', async () => {
  await clients.s3.send(new CreateBucketCommand({ Bucket: 'full' }));
  const put = clients.s3.send(
    new PutObjectCommand({ Bucket: 'full', Key: 'big.bin', Body: Buffer.alloc(1024 * 1024, 7) }),
  );
  await expect(put).rejects.toMatchObject({
    name: 'InternalError',
    message: expect.stringMatching(new RegExp(`could not write to its data directory ${dir}: EFBIG`)),
  });
  // Small writes still work: the server is up and says what it could not do, nothing more.
  await clients.s3.send(new PutObjectCommand({ Bucket: 'full', Key: 'small.txt', Body: 'ok' }));
});
