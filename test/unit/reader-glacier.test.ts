import {
  GetObjectCommand,
  InvalidObjectState,
  ListObjectsV2Command,
  RestoreObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import {
  commitPart,
  emptyMonthIndex,
  type MonthIndex,
  monthIndexKey,
  serializeMonthIndex,
  settledCandidates,
  settlePart,
} from '../../shared/archive/format';
import { ArchiveNotRestoredError } from '../../shared/errors';
import { JobDetailsReader } from '../../shared/reader';
import { type BuiltPart, buildPart, details, indexEntries } from '../support/archive-fixture';

/**
 * Glacier behaviour with aws-sdk-client-mock: s3rver has no storage classes, so it can neither
 * answer a GET with InvalidObjectState nor run RestoreObject. Indexes and hot objects are served
 * from memory; every part GET fails as it does for an object in Glacier Flexible Retrieval.
 */
const SHOP = 'acme-store.myshopify.com';
const MONTH = '2026-01';
const COMPLETED = '2026-01-10T09:30:00.000Z';
const BUCKET = 'bucket';

const body = (bytes: Uint8Array) => ({ transformToByteArray: async () => bytes }) as never;

const glacierError = () =>
  new InvalidObjectState({
    message: "The operation is not valid for the object's storage class",
    $metadata: { httpStatusCode: 403 },
    StorageClass: 'GLACIER',
  });

const s3Error = (name: string, status: number) =>
  new S3ServiceException({ name, $fault: 'client', message: name, $metadata: { httpStatusCode: status } });

const committed = (parts: BuiltPart[]): MonthIndex =>
  parts.reduce(
    (index, p, i) => {
      const at = `2026-02-1${i}T03:00:00.000Z`;
      const e = indexEntries(p, at);
      // Mark them deleted: the reader then reads the archive only.
      const jobs = Object.fromEntries(
        Object.entries(e.jobs).map(([id, j]) => [id, { ...j, deleted_at: at }]),
      );
      return commitPart(index, e.part, jobs, at);
    },
    emptyMonthIndex(SHOP, MONTH, '2026-02-01T00:00:00.000Z'),
  );

const setup = (index: MonthIndex) => {
  const s3 = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
  const mock = mockClient(s3);
  mock.on(GetObjectCommand).rejects(glacierError()); // every part
  mock
    .on(GetObjectCommand, { Key: monthIndexKey(SHOP, MONTH) })
    .resolves({ Body: body(serializeMonthIndex(index)), ETag: '"i1"' });
  mock
    .on(GetObjectCommand, { Key: `job-details/job-a/platform-data.json` })
    .rejects(s3Error('NoSuchKey', 404));
  mock
    .on(GetObjectCommand, { Key: `job-details/job-b/platform-data.json` })
    .rejects(s3Error('NoSuchKey', 404));
  mock.on(ListObjectsV2Command).resolves({ Contents: [], IsTruncated: false });
  return { s3, mock };
};

const restoreInputs = (mock: ReturnType<typeof mockClient>) =>
  mock.commandCalls(RestoreObjectCommand).map((c) => c.args[0].input);

describe('JobDetailsReader and parts in Glacier (mocked S3)', () => {
  it('search: a part in Flexible Retrieval / Deep Archive is named as not searched, never restored', async () => {
    // Its filters are its last member, in its class: without a restore they cannot be read.
    const part = await buildPart({
      shopId: SHOP,
      month: MONTH,
      jobs: [
        {
          jobId: 'job-a',
          details: details({ chunk_ids: ['p0'], failed: { r: ['doc-1'] } }),
          meta: { completed_at: COMPLETED },
        },
      ],
    });
    expect(part.pending.filters).toBeDefined();
    const { s3, mock } = setup(committed([part]));
    mock
      .on(ListObjectsV2Command, { Prefix: `job-details-index/${SHOP}/` })
      .resolves({ Contents: [{ Key: monthIndexKey(SHOP, MONTH), Size: 1 }], IsTruncated: false });
    const r = await new JobDetailsReader(s3, BUCKET).findDocument({ shopId: SHOP, docId: 'doc-1' });
    expect(r.jobs).toEqual([]);
    expect(r.provenance.partsNotSearched).toEqual([part.partKey]);
    expect(r.provenance).toMatchObject({ monthsSearched: 1, partsFiltered: 0, blocksRead: 0 });
    expect(restoreInputs(mock)).toEqual([]);
  });

  it('InvalidObjectState → RestoreObject with the configured tier and days → ArchiveNotRestoredError', async () => {
    const part = await buildPart({
      shopId: SHOP,
      month: MONTH,
      jobs: [{ jobId: 'job-a', details: details({ chunk_ids: ['p0'] }), meta: { completed_at: COMPLETED } }],
    });
    const { s3, mock } = setup(committed([part]));
    mock.on(RestoreObjectCommand).resolves({ $metadata: { httpStatusCode: 202 } });
    const reader = new JobDetailsReader(s3, BUCKET, { restoreTier: 'Bulk', restoreDays: 3 });

    const err = await reader
      .readAllDetails({ shopId: SHOP, jobId: 'job-a', completedAt: COMPLETED })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ArchiveNotRestoredError);
    expect(err).toMatchObject({ key: part.partKey, restoreTier: 'Bulk', restoreRequested: true });
    expect(restoreInputs(mock)).toEqual([
      {
        Bucket: BUCKET,
        Key: part.partKey,
        RestoreRequest: { Days: 3, GlacierJobParameters: { Tier: 'Bulk' } },
      },
    ]);
    // The ranged GET asked for exactly the member (explicit range, never a suffix range).
    const partGets = mock.commandCalls(GetObjectCommand).filter((c) => c.args[0].input.Key === part.partKey);
    const entry = part.pending.jobs['job-a'];
    expect(partGets.map((c) => c.args[0].input.Range)).toEqual([
      `bytes=${entry?.offset}-${(entry?.offset ?? 0) + (entry?.length ?? 0) - 1}`,
    ]);
  });

  it('defaults to the Standard tier for 7 days', async () => {
    const part = await buildPart({
      shopId: SHOP,
      month: MONTH,
      jobs: [{ jobId: 'job-a', details: details({ chunk_ids: ['p0'] }), meta: { completed_at: COMPLETED } }],
    });
    const { s3, mock } = setup(committed([part]));
    mock.on(RestoreObjectCommand).resolves({});
    await expect(
      new JobDetailsReader(s3, BUCKET).readAllDetails({ shopId: SHOP, jobId: 'job-a', months: [MONTH] }),
    ).rejects.toMatchObject({
      name: 'ArchiveNotRestoredError',
      restoreTier: 'Standard',
    });
    expect(restoreInputs(mock)[0]?.RestoreRequest).toEqual({
      Days: 7,
      GlacierJobParameters: { Tier: 'Standard' },
    });
  });

  it('RestoreAlreadyInProgress (409) → ArchiveNotRestoredError with restoreRequested false', async () => {
    const part = await buildPart({
      shopId: SHOP,
      month: MONTH,
      jobs: [{ jobId: 'job-a', details: details({ chunk_ids: ['p0'] }), platformData: { a: 1 } }],
    });
    const { s3, mock } = setup(committed([part]));
    mock.on(RestoreObjectCommand).rejects(s3Error('RestoreAlreadyInProgress', 409));
    await expect(
      new JobDetailsReader(s3, BUCKET).readPlatformData({ shopId: SHOP, jobId: 'job-a', months: [MONTH] }),
    ).rejects.toMatchObject({
      name: 'ArchiveNotRestoredError',
      key: part.partKey,
      restoreRequested: false,
    });
  });

  it('every cold part of the job gets its restore in one call; each part only once', async () => {
    // job-b's platform data equals job-a's, so it is not re-emitted: lookup(job-b) needs two records
    // of part 1, which share its one block (one GET, one restore), and one record of part 2.
    const part1 = await buildPart({
      shopId: SHOP,
      month: MONTH,
      at: new Date('2026-02-10T03:00:00Z'),
      jobs: [
        { jobId: 'job-a', details: details({ chunk_ids: ['p0'] }), platformData: { same: true } },
        { jobId: 'job-b', details: details({ chunk_ids: ['p1'] }), platformData: { same: true } },
      ],
    });
    const part2 = await buildPart({
      shopId: SHOP,
      month: MONTH,
      at: new Date('2026-02-11T03:00:00Z'),
      jobs: [{ jobId: 'job-b', details: details({ chunk_ids: ['p2'] }) }],
    });
    const { s3, mock } = setup(committed([part1, part2]));
    mock.on(RestoreObjectCommand).resolves({});

    await expect(
      new JobDetailsReader(s3, BUCKET).lookup({ shopId: SHOP, jobId: 'job-b', months: [MONTH] }),
    ).rejects.toBeInstanceOf(ArchiveNotRestoredError);
    const partGets = mock
      .commandCalls(GetObjectCommand)
      .filter((c) => c.args[0].input.Key?.startsWith('job-details-cold/'));
    expect(partGets).toHaveLength(2);
    expect(
      restoreInputs(mock)
        .map((i) => i.Key)
        .sort(),
    ).toEqual([part1.partKey, part2.partKey].sort());
  });

  it('a settled month (no entries): every part whose directory and job filter may hold the job is named and restored, present or absent; any other id is answered by the index', async () => {
    const jobsOf = (ids: string[]) =>
      ids.map((jobId) => ({
        jobId,
        details: details({ chunk_ids: ['p0'] }),
        meta: { completed_at: COMPLETED },
      }));
    const part1 = await buildPart({
      shopId: SHOP,
      month: MONTH,
      at: new Date('2026-02-10T03:00:00Z'),
      jobs: jobsOf(['job-a', 'job-c']),
    });
    const part2 = await buildPart({
      shopId: SHOP,
      month: MONTH,
      at: new Date('2026-02-11T03:00:00Z'),
      jobs: jobsOf(['job-b', 'job-d']),
    });
    const index = [part1, part2].reduce((i, p) => settlePart(i, p.partName), committed([part1, part2]));
    expect(index.jobs).toEqual({});
    expect(index.parts.every((p) => p.settled?.job_filter !== undefined)).toBe(true);
    const keysOf = (jobId: string) => settledCandidates(index, jobId).map((c) => c.part.key);
    // Ids inside both parts' ranges (job-b…job-c) that no part holds: one matched by a filter, one not.
    const ids = Array.from({ length: 5000 }, (_, i) => `job-b-${i}`);
    const falseMatch = ids.find((id) => keysOf(id).length > 0) as string;
    const rejected = ids.find((id) => keysOf(id).length === 0) as string;
    expect(keysOf('job-b')).toContain(part2.partKey);
    for (const jobId of ['job-b', falseMatch]) {
      const { s3, mock } = setup(index);
      mock.on(RestoreObjectCommand).resolves({});
      const err = await new JobDetailsReader(s3, BUCKET)
        .lookup({ shopId: SHOP, jobId, months: [MONTH] })
        .catch((e) => e);
      // Whether a candidate part holds it takes a restore: named, never "not archived".
      expect(err).toBeInstanceOf(ArchiveNotRestoredError);
      expect(err).toMatchObject({ key: keysOf(jobId)[0], restoreRequested: true });
      expect(
        restoreInputs(mock)
          .map((i) => i.Key)
          .sort(),
      ).toEqual(keysOf(jobId).sort());
    }
    // Matched by no filter, or outside both ranges: not archived in that month, nothing read or restored.
    for (const jobId of [rejected, 'job-z']) {
      const { s3, mock } = setup(index);
      const none = await new JobDetailsReader(s3, BUCKET).lookup({ shopId: SHOP, jobId, months: [MONTH] });
      expect(none.archivals).toEqual([]);
      expect(restoreInputs(mock)).toEqual([]);
      expect(
        mock
          .commandCalls(GetObjectCommand)
          .filter((c) => c.args[0].input.Key?.startsWith('job-details-cold/')),
      ).toHaveLength(0);
    }
  });

  it('other RestoreObject failures propagate as they are; indexes are never restored', async () => {
    const part = await buildPart({
      shopId: SHOP,
      month: MONTH,
      jobs: [{ jobId: 'job-a', details: details({ chunk_ids: ['p0'] }) }],
    });
    const { s3, mock } = setup(committed([part]));
    mock.on(RestoreObjectCommand).rejects(s3Error('AccessDenied', 403));
    await expect(
      new JobDetailsReader(s3, BUCKET).readAllDetails({ shopId: SHOP, jobId: 'job-a', months: [MONTH] }),
    ).rejects.toMatchObject({
      name: 'AccessDenied',
    });

    // An index answering InvalidObjectState is a misconfigured lifecycle rule, not something to restore.
    mock.reset();
    mock.on(ListObjectsV2Command).resolves({ Contents: [] });
    mock.on(GetObjectCommand).rejects(glacierError());
    await expect(
      new JobDetailsReader(s3, BUCKET).readAllDetails({ shopId: SHOP, jobId: 'job-a', months: [MONTH] }),
    ).rejects.toBeInstanceOf(InvalidObjectState);
    expect(mock.commandCalls(RestoreObjectCommand)).toHaveLength(0);
  });
});
