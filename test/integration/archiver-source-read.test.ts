/**
 * A read of a hot object that S3 never answered — Node's "aborted" when a response is cut off
 * mid-body, which is what an overlapping run deleting the object under a streaming GET looks like.
 * The embedded S3 cannot cut a response off on demand, so a middleware on the client fails that one
 * GET with the error Node throws (`Error: aborted`) once; everything else — the objects, the HEAD
 * that decides — is the embedded S3's.
 */
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { readJobSources } from '../../shared/archive/steps/archive/job-sources';
import type { StepDeps } from '../../shared/archive/steps/context';
import { Semaphore } from '../../shared/concurrency';
import { SourceReadError } from '../../shared/errors';
import { type ArchiverEnv, archiverEnv, daysAgo, seedTerminalJob } from '../support/archiver-fixtures';
import { testS3 } from '../support/local';

let env: ArchiverEnv;
beforeAll(async () => {
  env = await archiverEnv();
});

/** Deps whose S3 client fails the first GET of `key` as a cut-off response does (no answer). */
const clients: ReturnType<typeof testS3>[] = [];
afterAll(() => {
  for (const c of clients) c.destroy();
});

const cutOff = (key: string): StepDeps => {
  const s3 = testS3();
  clients.push(s3);
  let armed = true;
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string };
      if (armed && context.commandName === 'GetObjectCommand' && input.Key === key) {
        armed = false;
        throw new Error('aborted');
      }
      return next(args);
    },
    { step: 'initialize', name: 'cutOffOnce' },
  );
  return env.withDeps({ s3 });
};

const listed = async (jobId: string) =>
  (await env.store.listJobObjects(jobId)).filter((o) => o.kind === 'flush');

it('an object deleted meanwhile reads as vanished (the group then skips the job if an overlapping run committed it, else quarantines it)', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-cut-1', completedAt: daysAgo(40) });
  const objects = await listed(job.jobId);
  const victim = objects[0]?.key as string;
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: victim }));
  const read = await readJobSources(cutOff(victim), objects, new Semaphore(2), job.shopId);
  expect(read).toEqual({
    kind: 'quarantine',
    reason: `object ${victim} vanished while being read`,
    vanished: true,
  });
});

it('an object still there fails its group with a SourceReadError naming it, not a bare "Error: aborted"', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-cut-2', completedAt: daysAgo(40) });
  const objects = await listed(job.jobId);
  const victim = objects[0]?.key as string;
  const failed = await readJobSources(cutOff(victim), objects, new Semaphore(2), job.shopId).catch(
    (err: unknown) => err,
  );
  expect(failed).toBeInstanceOf(SourceReadError);
  expect((failed as SourceReadError).name).toBe('SourceReadError');
  expect((failed as SourceReadError).message).toBe(
    `reading ${victim} failed without an answer from S3 (Error: aborted); the object is still there`,
  );
  // Read again (the next run), it is an ordinary read.
  const again = await readJobSources(env.withDeps({}), objects, new Semaphore(2), job.shopId);
  expect(again.kind).toBe('ok');
});
