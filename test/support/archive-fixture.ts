import { createHash } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  type ArchivedJobMeta,
  commitPart,
  emptyMonthIndex,
  type IndexedJob,
  type IndexedPart,
  MONTH_INDEX_HEADERS,
  type MonthIndex,
  markDeleted,
  monthIndexKey,
  newPartName,
  PartBuilder,
  type PartDocFilters,
  type PendingPart,
  parseMonthIndex,
  partKey,
  type SourceObject,
  serializeMonthIndex,
  settlePart,
} from '../../shared/archive/format';
import type { JobDetails, JobDetailsPayload } from '../../shared/details';
import { getObjectBytes } from '../../shared/s3/objects';

/**
 * Builds archives the way the archiver lays them out — PartBuilder for the part, commitPart for the
 * month index — without running the archiver, so reader tests control exactly what is committed.
 */

export interface FixtureJob {
  readonly jobId: string;
  readonly details: JobDetails;
  readonly platformData?: unknown | null;
  /** Overrides of the archived row (status, completed_at …). */
  readonly meta?: Partial<ArchivedJobMeta>;
  readonly sources?: readonly SourceObject[];
}

export interface BuiltPart {
  readonly shopId: string;
  readonly month: string;
  readonly partName: string;
  readonly partKey: string;
  readonly bytes: Buffer;
  readonly pending: PendingPart;
  /** The part's document filters (what commit keeps in the month index). */
  readonly docFilters: PartDocFilters;
}

export const details = (
  p: Partial<JobDetailsPayload> & Pick<JobDetailsPayload, 'chunk_ids'>,
): JobDetails => ({
  failed: {},
  skipped: {},
  conflict: {},
  ...p,
});

export const jobMeta = (over: Partial<ArchivedJobMeta> = {}): ArchivedJobMeta => ({
  status: 'FAILED',
  created_at: '2026-01-10T09:00:00.000Z',
  started_at: '2026-01-10T09:00:01.000Z',
  completed_at: '2026-01-10T09:30:00.000Z',
  job_type: 'full_sync',
  platform: 'shopify',
  total_items: 10,
  processed_items: 7,
  failed_items: 3,
  skipped_items: 0,
  conflict_items: 0,
  retry_count: 0,
  error_message: null,
  ...over,
});

/** A part in memory: header, then each job (its platform data first, once per distinct payload). */
export const buildPart = async (opts: {
  shopId: string;
  month: string;
  jobs: readonly FixtureJob[];
  at?: Date;
  runId?: string;
  /** Job lines carry shop_id, as a shared part's segment's do. */
  shopOnLines?: boolean;
  /** `false`: no document filters, as a packed segment is built (PartBuilder `filters`). */
  filters?: false;
}): Promise<BuiltPart> => {
  const at = opts.at ?? new Date('2026-02-15T03:00:00Z');
  const partName = newPartName(at);
  const key = partKey(opts.shopId, opts.month, partName);
  const members: Buffer[] = [];
  const builder = new PartBuilder(
    {
      shopId: opts.shopId,
      month: opts.month,
      partName,
      partKey: key,
      runId: opts.runId ?? 'fixture-run',
      createdAt: at.toISOString(),
      ...(opts.shopOnLines ? { shopOnLines: true } : {}),
      ...(opts.filters === false ? { filters: false } : {}),
    },
    async (m) => {
      members.push(m);
    },
  );
  await builder.writeHeader();
  for (const j of opts.jobs) {
    await builder.addJob({
      jobId: j.jobId,
      meta: jobMeta(j.meta),
      details: j.details,
      platformData: j.platformData ?? null,
      sources: j.sources ?? [],
    });
  }
  const pending = await builder.finish(); // closes the last block
  return {
    shopId: opts.shopId,
    month: opts.month,
    partName,
    partKey: key,
    bytes: Buffer.concat(members),
    pending,
    docFilters: builder.docFilters(),
  };
};

const md5 = (b: Uint8Array): string => createHash('md5').update(b).digest('hex');

/** What commit adds to the month index for `part` (as the commit step derives it from the manifest). */
export const indexEntries = (
  part: BuiltPart,
  committedAt: string,
  etag: string = md5(part.bytes),
): { part: IndexedPart; jobs: Record<string, IndexedJob> } => {
  const p = part.pending;
  const jobs: Record<string, IndexedJob> = {};
  for (const [jobId, j] of Object.entries(p.jobs)) {
    const pd = j.platform_data_ref === null ? undefined : p.platform_data[j.platform_data_ref];
    jobs[jobId] = {
      part: part.partName,
      offset: j.offset,
      length: j.length,
      ...(j.line ? { line: j.line } : {}),
      sha256: j.sha256,
      completed_at: j.completed_at,
      committed_at: committedAt,
      platform_data:
        j.platform_data_ref !== null && pd
          ? {
              ref: j.platform_data_ref,
              offset: pd.offset,
              length: pd.length,
              ...(pd.line ? { line: pd.line } : {}),
            }
          : null,
      sources: j.sources.map((s) => ({ key: s.key, size: s.size, etag: s.etag })),
      deleted_at: null,
    };
  }
  return {
    part: {
      name: part.partName,
      key: part.partKey,
      size: p.size,
      etag,
      sha256: p.sha256,
      run_id: p.run_id,
      committed_at: committedAt,
      job_count: Object.keys(p.jobs).length,
      bytes_in: p.bytes_in,
      ...(p.filters ? { filters: p.filters } : {}),
    },
    jobs,
  };
};

/** PUTs the part's bytes (not committed: readers must not see it yet). */
export const putPart = async (s3: S3Client, bucket: string, part: BuiltPart): Promise<string> => {
  const out = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: part.partKey, Body: part.bytes }));
  return (out.ETag ?? '').replace(/"/g, '');
};

export const readIndex = async (
  s3: S3Client,
  bucket: string,
  shopId: string,
  month: string,
): Promise<MonthIndex> => {
  const key = monthIndexKey(shopId, month);
  const got = await getObjectBytes(s3, bucket, key);
  return got ? parseMonthIndex(got.bytes, key) : emptyMonthIndex(shopId, month, new Date(0).toISOString());
};

export const putIndex = async (s3: S3Client, bucket: string, index: MonthIndex): Promise<void> => {
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: monthIndexKey(index.shop_id, index.month),
      Body: serializeMonthIndex(index),
      ...MONTH_INDEX_HEADERS,
    }),
  );
};

/** Adds the part to its month index (read, commitPart, write). */
export const commitToIndex = async (
  s3: S3Client,
  bucket: string,
  part: BuiltPart,
  /** `settle`: once deleted, the part is settled (its entries leave the index for its summary). */
  opts: { committedAt: string; etag?: string; deletedAt?: string; settle?: boolean },
): Promise<MonthIndex> => {
  const e = indexEntries(part, opts.committedAt, opts.etag);
  let index = commitPart(
    await readIndex(s3, bucket, part.shopId, part.month),
    e.part,
    e.jobs,
    opts.committedAt,
  );
  if (opts.deletedAt) {
    index = markDeleted(
      index,
      Object.keys(e.jobs).map((jobId) => ({ jobId, part: part.partName })),
      opts.deletedAt,
    );
    if (opts.settle) index = settlePart(index, part.partName);
  }
  await putIndex(s3, bucket, index);
  return index;
};

/** Builds, uploads and commits one part. */
export const archiveJobs = async (
  s3: S3Client,
  bucket: string,
  opts: {
    shopId: string;
    month: string;
    jobs: readonly FixtureJob[];
    at?: Date;
    committedAt?: string;
    deletedAt?: string;
    settle?: boolean;
  },
): Promise<{ part: BuiltPart; index: MonthIndex }> => {
  const part = await buildPart(opts);
  const etag = await putPart(s3, bucket, part);
  const committedAt = opts.committedAt ?? (opts.at ?? new Date('2026-02-15T03:00:00Z')).toISOString();
  const index = await commitToIndex(s3, bucket, part, {
    committedAt,
    etag,
    ...(opts.deletedAt ? { deletedAt: opts.deletedAt } : {}),
    ...(opts.settle ? { settle: true } : {}),
  });
  return { part, index };
};
