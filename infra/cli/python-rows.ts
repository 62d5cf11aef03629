import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isNamedError } from '../../shared/errors';
import type { CliContext } from './context';
import type { PlannedJob } from './fleet';

/**
 * How `jobarchive seed` writes rows. `library` goes through this package's writer (createJob,
 * recordFlush, JobDetailsStore). The other two write the way the production indexer — a Python
 * service using boto3 — does, with plain DynamoDB and S3 calls and none of this package's code, so
 * the archiver and reader are tried on rows they did not write:
 *
 * - `python`: the design's post-migration indexer. Timestamps from `datetime.isoformat()` of an aware
 *   UTC datetime (`2026-08-03T10:15:30.123456+00:00`); a separate IN_PROGRESS write that sets
 *   `status_created_at` (the terminal write does not touch it); attributes this package never writes
 *   (`indexer_version`, `sync_settings` map, `tags` string set, `retry_attribution` on retried jobs);
 *   flush objects gzipped from `json.dumps` (spaces after separators), `flush_id` from
 *   `sha256(json.dumps(sorted(chunk_ids)))[:16]`, no user metadata.
 * - `pre-migration`: a row from before the S3 offload. UUID job ids, `{s3_key}#part#{idx}` chunk ids,
 *   details inline on the row (`failed_items_details` as reason → list, `skipped_items_details` as a
 *   list of `{reason, doc_id}`, `conflict_details` as reason → items, `platform_data` as a map), and
 *   nothing in S3.
 */
export const ROW_STYLES = ['library', 'python', 'pre-migration'] as const;
export type RowStyle = (typeof ROW_STYLES)[number];
export type IndexerRowStyle = Exclude<RowStyle, 'library'>;

/** Python `datetime.isoformat()` of an aware UTC datetime (microseconds, `+00:00`). */
export const pythonIsoformat = (d: Date, micros = 0): string => {
  const iso = d.toISOString(); // 2026-08-03T10:15:30.123Z
  const us = String(micros % 1000).padStart(3, '0');
  return `${iso.slice(0, 23)}${us}+00:00`;
};

/** Python's default `json.dumps`: `", "` and `": "` separators, non-ASCII escaped. */
export const pythonJsonDumps = (v: unknown): string =>
  JSON.stringify(v, null, 1)
    .replace(/\n\s*/g, ' ')
    .replace(/\[ /g, '[')
    .replace(/ \]/g, ']')
    .replace(/\{ /g, '{')
    .replace(/ \}/g, '}')
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** `sha256(json.dumps(sorted(chunk_ids)))[:16]` as a Python indexer computes it. */
export const pythonFlushId = (chunkIds: readonly string[]): string =>
  createHash('sha256')
    .update(pythonJsonDumps([...chunkIds].sort()), 'utf8')
    .digest('hex')
    .slice(0, 16);

/** A stable v4-shaped UUID for a planned job (pre-migration ids were `uuid4()`). */
export const uuidFor = (seed: string): string => {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

const microsOf = (job: PlannedJob, n: number): number =>
  Number.parseInt(createHash('sha256').update(`${job.jobId}:${n}`).digest('hex').slice(0, 6), 16) % 1000;

export interface IndexerWrittenJob {
  readonly jobId: string;
  /** `completed_at` as written (Python isoformat). */
  readonly completedAt: string;
}

/**
 * Writes one planned job as the Python indexer would (see above). Returns null when the row already
 * exists (a rerun of the same seed). The flushes' counts and details are the plan's; only the
 * writing differs.
 */
export const writeIndexerJob = async (
  ctx: CliContext,
  job: PlannedJob,
  style: IndexerRowStyle,
): Promise<IndexerWrittenJob | null> => {
  const legacy = style === 'pre-migration';
  const jobId = legacy ? uuidFor(`${job.shopId}/${job.jobId}`) : job.jobId;
  const key = { pk: `SHOP#${job.shopId}`, sk: `JOB#${jobId}` };
  const iso = (d: Date, n: number) => pythonIsoformat(d, microsOf(job, n));
  const created = iso(job.createdAt, 0);
  const extra: Record<string, unknown> = {
    indexer_version: legacy ? '3.9.2' : '4.2.0',
    sync_settings: { currency: 'USD', include_drafts: false, batch_size: 50 },
    tags: new Set(['catalog', job.input.jobType]),
    ...(job.input.initiatorUserId ? { initiator_user_id: job.input.initiatorUserId } : {}),
    ...(job.input.retryCount
      ? {
          retry_count: job.input.retryCount,
          retry_attribution: {
            first_retry_at: created,
            reason: 'upstream_5xx',
            attempts: job.input.retryCount,
          },
        }
      : {}),
  };
  try {
    await ctx.ddb.send(
      new PutCommand({
        TableName: ctx.table,
        Item: {
          ...key,
          job_id: jobId,
          job_status: 'PENDING',
          status_created_at: created,
          created_at: created,
          last_updated: created,
          total_items: job.input.totalItems,
          processed_items: 0,
          failed_items: 0,
          skipped_items: 0,
          conflict_items: 0,
          job_type: job.input.jobType,
          platform: job.input.platform,
          estimated_time_minutes: job.input.estimatedTimeMinutes,
          ...extra,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (err) {
    if (isNamedError(err, 'ConditionalCheckFailedException')) return null;
    throw err;
  }

  // update_job_status(IN_PROGRESS): its own write, and the GSI sort key moves here, not at completion.
  const started = iso(new Date(job.createdAt.getTime() + 1000), 1);
  await ctx.ddb.send(
    new UpdateCommand({
      TableName: ctx.table,
      Key: key,
      UpdateExpression: 'SET job_status = :s, status_created_at = :t, started_at = :t, last_updated = :t',
      ExpressionAttributeValues: { ':s': 'IN_PROGRESS', ':t': started },
    }),
  );

  const s3Key = `imports/${job.shopId}/${jobId}.jsonl`;
  const inline = {
    failed: {} as Record<string, string[]>,
    skipped: [] as unknown[],
    conflict: {} as Record<string, unknown[]>,
  };
  if (!legacy && job.platformData) {
    await ctx.s3.send(
      new PutObjectCommand({
        Bucket: ctx.bucket,
        Key: `job-details/${jobId}/platform-data.json`,
        Body: pythonJsonDumps(job.platformData),
        ContentType: 'application/json',
      }),
    );
  }
  for (const [n, f] of job.flushes.entries()) {
    const chunkIds = legacy
      ? f.chunkIds.map((c) => (c.startsWith('p') ? `${s3Key}#part#${c.slice(1)}` : `${s3Key}#${c}`))
      : f.chunkIds;
    const d = f.details;
    if (d && !legacy) {
      const payload = {
        chunk_ids: [...chunkIds].sort(),
        failed: d.failed ?? {},
        skipped: d.skipped ?? {},
        conflict: d.conflict ?? {},
      };
      await ctx.s3.send(
        new PutObjectCommand({
          Bucket: ctx.bucket,
          Key: `job-details/${jobId}/${pythonFlushId(chunkIds)}.json.gz`,
          Body: gzipSync(Buffer.from(pythonJsonDumps(payload), 'utf8')),
          ContentType: 'application/json',
          ContentEncoding: 'gzip',
        }),
      );
    }
    if (d && legacy) {
      for (const [r, ids] of Object.entries(d.failed ?? {}))
        inline.failed[r] = [...(inline.failed[r] ?? []), ...ids];
      for (const [r, ids] of Object.entries(d.skipped ?? {}))
        for (const id of ids) inline.skipped.push({ reason: r, doc_id: id });
      for (const [r, items] of Object.entries(d.conflict ?? {}))
        inline.conflict[r] = [...(inline.conflict[r] ?? []), ...items];
    }
    const at = iso(f.at, 2 + n);
    await ctx.ddb.send(
      new UpdateCommand({
        TableName: ctx.table,
        Key: key,
        UpdateExpression:
          'ADD processed_items :p, failed_items :f, skipped_items :k, conflict_items :c, completed_chunks :cs SET last_updated = :t',
        ExpressionAttributeValues: {
          ':p': f.counts.processed,
          ':f': f.counts.failed,
          ':k': f.counts.skipped,
          ':c': f.counts.conflict,
          ':cs': new Set(chunkIds),
          ':t': at,
        },
      }),
    );
  }

  // check_and_complete_job: the terminal write leaves status_created_at at the IN_PROGRESS time.
  const completedAt = iso(job.completedAt, 999);
  const ttl = Math.floor(job.completedAt.getTime() / 1000 + ctx.cfg.jobTtlDays * 86400);
  const legacyDetails = legacy
    ? {
        ...(Object.keys(inline.failed).length > 0 ? { failed_items_details: inline.failed } : {}),
        ...(inline.skipped.length > 0 ? { skipped_items_details: inline.skipped } : {}),
        ...(Object.keys(inline.conflict).length > 0 ? { conflict_details: inline.conflict } : {}),
        ...(job.platformData ? { platform_data: job.platformData } : {}),
      }
    : {};
  const names = Object.keys(legacyDetails);
  await ctx.ddb.send(
    new UpdateCommand({
      TableName: ctx.table,
      Key: key,
      UpdateExpression: `SET job_status = :s, completed_at = :t, last_updated = :t, #ttl = :ttl${names.map((_n, i) => `, #d${i} = :d${i}`).join('')}`,
      ExpressionAttributeNames: { '#ttl': 'ttl', ...Object.fromEntries(names.map((n, i) => [`#d${i}`, n])) },
      ExpressionAttributeValues: {
        ':s': job.status,
        ':t': completedAt,
        ':ttl': ttl,
        ...Object.fromEntries(
          names.map((n, i) => [`:d${i}`, legacyDetails[n as keyof typeof legacyDetails]]),
        ),
      },
    }),
  );
  return { jobId, completedAt };
};
