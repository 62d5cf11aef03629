import { randomBytes } from 'node:crypto';
import type { JobRecord } from '../../shared/archive/format';
import { jobPrefix } from '../../shared/details';
import {
  archiverEnv,
  getBytes,
  inMonth,
  listKeys,
  memberAt,
  readIndex,
  runMachine,
  seedBigJob,
} from '../support/archiver-fixtures';

/**
 * A part bigger than one multipart chunk (8 MiB): it is streamed into a multipart upload as it is
 * built and verified by streaming it back, member by member.
 */
jest.setTimeout(180_000);

test('a multi-megabyte month goes through a multipart upload and verifies member by member', async () => {
  const env = await archiverEnv({ readConcurrency: 3 });
  const shopId = 'shop-big';
  const jobs: Array<{ jobId: string; docs: string[] }> = [];
  for (let i = 0; i < 9; i++) {
    // Random ids barely compress: ~1 MB of gzip per job.
    const docs = Array.from({ length: 60_000 }, () => randomBytes(16).toString('base64url'));
    const completedAt = inMonth(2, 1 + i);
    const { jobId } = await seedBigJob(env, shopId, completedAt, docs);
    jobs.push({ jobId, docs });
  }

  // Watch which commands the archive step sends (s3rver gives multipart objects a plain MD5 ETag,
  // so the upload's shape is observed at the client instead).
  const sent: string[] = [];
  const watched = new Proxy(env.s3, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return (command: { constructor: { name: string } }, ...rest: unknown[]) => {
        sent.push(command.constructor.name);
        return (target.send as (...a: unknown[]) => unknown)(command, ...rest);
      };
    },
  });
  const { report } = await runMachine(env, { stageDeps: { archive: env.withDeps({ s3: watched }) } });
  expect(sent).toContain('CreateMultipartUploadCommand');
  expect(sent.filter((c) => c === 'UploadPartCommand').length).toBeGreaterThanOrEqual(2);
  expect(sent).toContain('CompleteMultipartUploadCommand');
  expect(sent).not.toContain('AbortMultipartUploadCommand');
  expect(report).toMatchObject({ jobsArchived: 9, partsWritten: 1, groupsFailedCount: 0, objectsDeleted: 9 });
  expect(report?.bytesOut).toBeGreaterThan(8 * 1024 * 1024);

  const index = await readIndex(env, shopId, inMonth(2, 1).toISOString().slice(0, 7));
  const part = index?.parts[0];
  if (!index || !part) throw new Error('no part');
  expect((await getBytes(env.s3, env.bucket, part.key)).length).toBe(part.size); // index@3: name + size name a part
  for (const j of jobs) {
    const e = index.jobs[j.jobId]?.[0];
    if (!e) throw new Error('missing entry');
    const rec = (await memberAt(env, part.key, e, { type: 'job', jobId: j.jobId })).record as JobRecord;
    expect(rec.details.failed.big).toEqual(j.docs);
    expect(await listKeys(env.s3, env.bucket, jobPrefix(j.jobId))).toEqual([]);
  }
});
