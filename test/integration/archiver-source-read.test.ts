/**
 * A read of a hot object that S3 never answered — Node's "aborted" when a response is cut off
 * mid-body, which is what an overlapping run deleting the object under a streaming GET looks like.
 * The embedded S3 cannot cut a response off on demand, so the store's read throws the error Node
 * throws (`Error: aborted`) once; everything else — the objects, the HEAD that decides — is real.
 */
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { readJobSources } from '../../shared/archive/steps/archive/job-sources';
import type { StepDeps } from '../../shared/archive/steps/context';
import { Semaphore } from '../../shared/concurrency';
import { SourceReadError } from '../../shared/errors';
import { type ArchiverEnv, archiverEnv, daysAgo, seedTerminalJob } from '../support/archiver-fixtures';

let env: ArchiverEnv;
beforeAll(async () => {
  env = await archiverEnv();
});

/** The deps with a store whose reads of `key` fail once as a cut-off response does. */
const cutOff = (deps: StepDeps, key: string): StepDeps => {
  const store = deps.store;
  const real = store.readFlushObject.bind(store);
  let armed = true;
  store.readFlushObject = async (k: string) => {
    if (k === key && armed) {
      armed = false;
      throw new Error('aborted');
    }
    return real(k);
  };
  return deps;
};

const listed = async (jobId: string) =>
  (await env.store.listJobObjects(jobId)).filter((o) => o.kind === 'flush');

it('an object deleted meanwhile (an overlapping run archived it) quarantines the job as vanished', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-cut-1', completedAt: daysAgo(40) });
  const objects = await listed(job.jobId);
  const victim = objects[0]?.key as string;
  await env.s3.send(new DeleteObjectCommand({ Bucket: env.bucket, Key: victim }));
  const read = await readJobSources(cutOff(env.withDeps({}), victim), objects, new Semaphore(2));
  expect(read).toEqual({ kind: 'quarantine', reason: `object ${victim} vanished while being read` });
});

it('an object still there fails its group with a SourceReadError naming it, not a bare "Error: aborted"', async () => {
  const job = await seedTerminalJob(env, { shopId: 'shop-cut-2', completedAt: daysAgo(40) });
  const objects = await listed(job.jobId);
  const victim = objects[0]?.key as string;
  const failed = await readJobSources(cutOff(env.withDeps({}), victim), objects, new Semaphore(2)).catch(
    (err: unknown) => err,
  );
  expect(failed).toBeInstanceOf(SourceReadError);
  expect((failed as SourceReadError).name).toBe('SourceReadError');
  expect((failed as SourceReadError).message).toBe(
    `reading ${victim} failed without an answer from S3 (Error: aborted); the object is still there`,
  );
  // Read again (the next run), it is an ordinary read.
  const again = await readJobSources(env.withDeps({}), objects, new Semaphore(2));
  expect(again.kind).toBe('ok');
});
