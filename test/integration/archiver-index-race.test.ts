import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type PutObjectCommandInput,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import {
  commitPart,
  emptyMonthIndex,
  monthIndexKey,
  parseMonthIndex,
  serializeMonthIndex,
} from '../../shared/archive/format';
import { INDEX_WRITE_ATTEMPTS } from '../../shared/archive/steps/commit/index-store';
import type { GroupDone, GroupFailed } from '../../shared/archive/steps/types';
import { jobPrefix } from '../../shared/details';
import {
  type ArchiverEnv,
  archiverEnv,
  getBytes,
  inMonth,
  listKeys,
  readIndex,
  runMachine,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import { testS3 } from '../support/local';

/**
 * Two runs committing to the same month index at once: the loser of the conditional write gets S3's
 * 412 and must re-read, re-apply and retry, losing nobody's entries.
 *
 * aws-sdk-client-mock is used ONLY to produce that 412: s3rver ignores If-Match / If-None-Match, so
 * it never answers 412. Every other command of the commit step passes through to s3rver unchanged.
 */
jest.setTimeout(120_000);

const preconditionFailed = () =>
  Object.assign(new Error('At least one of the pre-conditions you specified did not hold'), {
    name: 'PreconditionFailed',
    $metadata: { httpStatusCode: 412 },
  });

const FOREIGN_PART = 'part-20200101T000000Z-aaaaaaaa.jsonl.gz';

/** A commit client whose index PUTs go through `onIndexPut`; everything else to s3rver. */
const commitClient = (
  env: ArchiverEnv,
  indexKey: string,
  onIndexPut: (input: PutObjectCommandInput) => Promise<unknown>,
) => {
  const real = testS3();
  const client = testS3();
  const mock = mockClient(client);
  mock.on(GetObjectCommand).callsFake((input) => real.send(new GetObjectCommand(input)));
  mock.on(HeadObjectCommand).callsFake((input) => real.send(new HeadObjectCommand(input)));
  mock.on(ListObjectsV2Command).callsFake((input) => real.send(new ListObjectsV2Command(input)));
  mock.on(DeleteObjectsCommand).callsFake((input) => real.send(new DeleteObjectsCommand(input)));
  mock.on(DeleteObjectCommand).callsFake((input) => real.send(new DeleteObjectCommand(input)));
  mock
    .on(PutObjectCommand)
    .callsFake((input: PutObjectCommandInput) =>
      input.Key === indexKey ? onIndexPut(input) : real.send(new PutObjectCommand(input)),
    );
  return { deps: env.withDeps({ s3: client }), mock, real };
};

test('a 412 on the index write: re-read, re-apply, retry — both writers’ parts survive', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'shop-x', completedAt: inMonth(2, 6) });
  const month = job.completedAt.slice(0, 7);
  const indexKey = monthIndexKey('shop-x', month);
  const puts: Array<{ ifMatch?: string; ifNoneMatch?: string }> = [];
  const { deps, real } = commitClient(env, indexKey, async (input) => {
    puts.push({ ifMatch: input.IfMatch, ifNoneMatch: input.IfNoneMatch });
    if (puts.length === 1) {
      // Another run's commit lands between our read and our write.
      const theirs = commitPart(
        emptyMonthIndex('shop-x', month, new Date().toISOString()),
        {
          name: FOREIGN_PART,
          key: `job-details-cold/shop-x/${month}/${FOREIGN_PART}`,
          size: 1,
          etag: 'e',
          sha256: 's',
          run_id: 'other-run',
          committed_at: new Date().toISOString(),
          job_count: 0,
          bytes_in: 0,
        },
        {},
        new Date().toISOString(),
      );
      await real.send(
        new PutObjectCommand({ Bucket: env.bucket, Key: indexKey, Body: serializeMonthIndex(theirs) }),
      );
      throw preconditionFailed();
    }
    return real.send(new PutObjectCommand(input));
  });

  const { report, results } = await runMachine(env, { stageDeps: { commit: deps } });
  expect((results[0] as GroupDone).delete.jobsCompleted).toBe(1);
  expect(report).toMatchObject({ jobsArchived: 1, partsWritten: 1, groupsFailedCount: 0 });
  // First attempt: "create" (If-None-Match); the retry: "replace what I just read" (If-Match).
  expect(puts).toEqual([
    { ifNoneMatch: '*', ifMatch: undefined },
    { ifNoneMatch: undefined, ifMatch: expect.stringMatching(/^".+"$/) },
  ]);
  const index = parseMonthIndex(await getBytes(env.s3, env.bucket, indexKey), indexKey);
  expect(index.parts.map((p) => p.name)).toEqual([FOREIGN_PART, expect.stringMatching(/^part-/)]);
  // Our part settled at its delete (its entry left the index); its record holds the job, once.
  expect(index.parts[1]?.settled?.deleted_at).toEqual(expect.any(String));
  const jobs = (await readIndex(env, 'shop-x', month))?.jobs;
  expect(jobs?.[job.jobId]).toHaveLength(1);
  expect(jobs?.[job.jobId]?.[0]?.deleted_at).not.toBeNull();
});

test('412 on every attempt: ConcurrentModificationError after a bounded number of tries, nothing committed or deleted', async () => {
  const env = await archiverEnv();
  const job = await seedTerminalJob(env, { shopId: 'shop-y', completedAt: inMonth(2, 7) });
  const indexKey = monthIndexKey('shop-y', job.completedAt.slice(0, 7));
  let attempts = 0;
  const { deps } = commitClient(env, indexKey, async () => {
    attempts++;
    throw preconditionFailed();
  });

  const { results } = await runMachine(env, { stageDeps: { commit: deps } });
  expect(results[0]).toMatchObject({
    failed: true,
    error: 'ConcurrentModificationError',
  } satisfies Partial<GroupFailed>);
  expect(attempts).toBe(INDEX_WRITE_ATTEMPTS);
  expect(await readIndex(env, 'shop-y', job.completedAt.slice(0, 7))).toBeNull();
  expect(await listKeys(env.s3, env.bucket, jobPrefix(job.jobId))).toEqual(job.keys);
});
