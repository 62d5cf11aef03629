import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConcurrentModificationError, InvalidInputError, JobNotFoundError } from '../errors';
import { validateChunkId, validateJobId, validateShopId } from '../ids';
import { flushIdForChunks, sortedUniqueIds } from '../details/helpers';
import { detailsKey as detailsKeyFor } from '../details/keys';
import { type ConflictItem, type JobDetailsPayload, validateJobDetailsPayload } from '../details/payload';
import { isConditionalCheckFailed, keyOf, type OldItem, oldItemOf, validDate, wholeNumber } from './job-repo';
import { IN_PROGRESS_ELIGIBLE, JOB_STATUSES, type JobStatus, TERMINAL_STATUSES } from './schema';
import { DEFAULT_JOB_TTL_DAYS, type TerminalResult, validTtlDays, writeTerminal } from './terminal';
import {
  COUNTER_ATTRIBUTES,
  type DdbSender,
  type FlushDetailsWriter,
  isDone,
  type JobCounters,
} from './types';

/**
 * The hot-path flush (seed Phase 1 + 2): details to S3 first, then ONE UpdateItem that adds the
 * counters and chunk ids, folds the IN_PROGRESS transition into the job's first flush, and returns the
 * new counters so the terminal write needs no re-read.
 *
 * Failure modes (seed table):
 * | S3 PUT | DDB update | result |
 * |---|---|---|
 * | ok / skipped | ok | `applied: true` |
 * | ok / skipped | chunk collision | `applied: false, reason: 'already-applied'`; the S3 object is a harmless re-PUT |
 * | ok / skipped | transient | throws; the SQS retry re-PUTs the same key and retries the update |
 * | fails | not attempted | throws; clean retry on the next delivery |
 */

/**
 * Each chunk id costs `AND NOT contains(#cc, :cN)` — three operators — in the condition, and DynamoDB
 * allows 300 operators per expression (3n + 5 with the status fold). 95 leaves headroom; the seed's
 * batcher flushes 50.
 */
export const MAX_CHUNKS_PER_FLUSH = 95;

export interface FlushDetails {
  failed?: Record<string, string[]>;
  skipped?: Record<string, string[]>;
  conflict?: Record<string, ConflictItem[]>;
}

export interface FlushInput {
  chunkIds: string[];
  counts: JobCounters;
  details?: FlushDetails;
}

export interface FlushJob {
  shopId: string;
  jobId: string;
  totalItems: number;
  /**
   * The status the caller believes the row has. Undefined or PENDING/FAILED/CONFLICT → this flush
   * tries to move the job to IN_PROGRESS. Pass `result.jobStatus` on to the next flush: a stale
   * "eligible" costs a rejected write and a retry.
   */
  knownStatus?: JobStatus;
}

export interface RecordFlushDeps {
  ddb: DdbSender;
  table: string;
  /** null = details bucket not configured: the S3 leg is skipped. */
  detailsWriter: FlushDetailsWriter | null;
}

export interface RecordFlushOptions {
  now?: Date;
  ttlDays?: number;
  /** Ask DynamoDB for ConsumedCapacity (INDEXES) on every write (the benchmark uses it). */
  returnConsumedCapacity?: boolean;
}

export interface WriteCapacity {
  write: 'flush' | 'terminal';
  capacity: ConsumedCapacity;
}

export interface FlushResult {
  /** False when a chunk of this flush was already recorded: nothing was added (not an error). */
  applied: boolean;
  reason?: 'already-applied';
  /** The chunk ids of this flush already present on the row (when not applied). */
  collidingChunkIds?: string[];
  flushId: string;
  /** The S3 object written, when the flush had details and a writer. */
  detailsKey?: string;
  /** Running totals after this flush; when not applied, the totals found on the row. */
  counters: JobCounters;
  /** True when this flush moved the job to IN_PROGRESS. */
  statusFolded: boolean;
  /** The row's status after this call, when known; feed it back as `knownStatus`. */
  jobStatus?: JobStatus;
  terminal?: Omit<TerminalResult, 'consumedCapacity'>;
  consumedCapacity?: WriteCapacity[];
}

const validCounts = (c: unknown): JobCounters => {
  if (typeof c !== 'object' || c === null) throw new InvalidInputError('counts', 'expected an object');
  const o = c as Record<string, unknown>;
  return {
    processed: wholeNumber('counts.processed', o.processed),
    failed: wholeNumber('counts.failed', o.failed),
    skipped: wholeNumber('counts.skipped', o.skipped),
    conflict: wholeNumber('counts.conflict', o.conflict),
  };
};

/** Validated chunk ids in code-point order; repeats are rejected (their counts would be added twice). */
export const validChunkIds = (ids: unknown): string[] => {
  if (!Array.isArray(ids) || ids.length === 0)
    throw new InvalidInputError('chunkIds', 'expected a non-empty array');
  if (ids.length > MAX_CHUNKS_PER_FLUSH) {
    throw new InvalidInputError('chunkIds', `at most ${MAX_CHUNKS_PER_FLUSH} per flush, got ${ids.length}`);
  }
  const sorted = sortedUniqueIds(ids.map(validateChunkId));
  if (sorted.length !== ids.length) throw new InvalidInputError('chunkIds', 'contains a repeated chunk id');
  return sorted;
};

/** True when any reason of any map lists at least one item. */
export const hasDetails = (d: FlushDetails | undefined): boolean =>
  d !== undefined &&
  [d.failed, d.skipped, d.conflict].some(
    (m) => m !== undefined && Object.values(m).some((l) => l.length > 0),
  );

/** The S3 payload of a flush (validated); chunk_ids are the sorted ids the flush id is hashed from. */
export const flushPayload = (chunkIds: string[], d: FlushDetails | undefined): JobDetailsPayload =>
  validateJobDetailsPayload({
    chunk_ids: chunkIds,
    failed: d?.failed ?? {},
    skipped: d?.skipped ?? {},
    conflict: d?.conflict ?? {},
  });

export const foldsInProgress = (knownStatus: JobStatus | undefined): boolean =>
  knownStatus === undefined || (IN_PROGRESS_ELIGIBLE as readonly JobStatus[]).includes(knownStatus);

/**
 * The flush UpdateItem (pure). Only unprojected attributes change unless the status folds, so a
 * non-folding flush writes neither GSI. The fold also drops `completed_at` / `ttl` left by an
 * earlier FAILED/CONFLICT run, so a running row is never TTL-expired nor listed with a stale
 * completion time.
 */
export const buildFlushUpdate = (p: {
  table: string;
  shopId: string;
  jobId: string;
  chunkIds: string[];
  counts: JobCounters;
  now: Date;
  fold: boolean;
  returnConsumedCapacity?: boolean;
}): UpdateCommandInput => {
  const values: Record<string, unknown> = {
    ':processed': p.counts.processed,
    ':failed': p.counts.failed,
    ':skipped': p.counts.skipped,
    ':conflict': p.counts.conflict,
    ':chunks': new Set(p.chunkIds),
    ':ts': p.now.toISOString(),
  };
  const names: Record<string, string> = { '#cc': 'completed_chunks' };
  const noCollision = p.chunkIds.map((id, i) => {
    values[`:c${i}`] = id;
    return `NOT contains(#cc, :c${i})`;
  });
  const add = (Object.keys(COUNTER_ATTRIBUTES) as (keyof JobCounters)[])
    .map((k) => `${COUNTER_ATTRIBUTES[k]} :${k}`)
    .concat('#cc :chunks')
    .join(', ');
  let update = `ADD ${add} SET last_updated = :ts`;
  const condition = ['attribute_exists(pk)', ...noCollision];
  if (p.fold) {
    update +=
      ', job_status = :inprog, started_at = if_not_exists(started_at, :ts), status_created_at = :ts' +
      ' REMOVE completed_at, #ttl';
    names['#ttl'] = 'ttl';
    values[':inprog'] = 'IN_PROGRESS';
    values[':pending'] = 'PENDING';
    values[':failedStatus'] = 'FAILED';
    values[':conflictStatus'] = 'CONFLICT';
    condition.push(
      '(attribute_not_exists(job_status) OR job_status IN (:pending, :failedStatus, :conflictStatus))',
    );
  }
  return {
    TableName: p.table,
    Key: keyOf(p.shopId, p.jobId),
    UpdateExpression: update,
    ConditionExpression: condition.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'UPDATED_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    ...(p.returnConsumedCapacity ? { ReturnConsumedCapacity: 'INDEXES' as const } : {}),
  };
};

export type Rejection =
  | { kind: 'missing' }
  | { kind: 'collision'; colliding: string[]; old: OldItem }
  | { kind: 'status'; old: OldItem };

/** Why a flush update was rejected, from the ALL_OLD item (pure). A missing row wins, then a collision. */
export const classifyRejection = (old: OldItem | undefined, chunkIds: string[]): Rejection => {
  if (old === undefined) return { kind: 'missing' };
  const colliding = chunkIds.filter((id) => old.completedChunks.has(id));
  if (colliding.length > 0) return { kind: 'collision', colliding, old };
  return { kind: 'status', old };
};

/** Counters from an UPDATED_NEW result (all four are ADDed, so all four come back). */
export const countersFrom = (attrs: Record<string, unknown> | undefined): JobCounters => {
  const n = (k: keyof JobCounters): number => {
    const v = attrs?.[COUNTER_ATTRIBUTES[k]];
    return typeof v === 'number' ? v : 0;
  };
  return { processed: n('processed'), failed: n('failed'), skipped: n('skipped'), conflict: n('conflict') };
};

const isTerminal = (s: JobStatus | undefined): boolean =>
  s !== undefined && (TERMINAL_STATUSES as readonly JobStatus[]).includes(s);

const asJobStatus = (s: string | undefined): JobStatus | undefined =>
  (JOB_STATUSES as readonly string[]).includes(s ?? '') ? (s as JobStatus) : undefined;

/** Records one flush of a job; see the table at the top of this file. */
export const recordFlush = async (
  deps: RecordFlushDeps,
  job: FlushJob,
  flush: FlushInput,
  opts: RecordFlushOptions = {},
): Promise<FlushResult> => {
  // Everything is checked before the first byte goes anywhere.
  const shopId = validateShopId(job.shopId);
  const jobId = validateJobId(job.jobId);
  const totalItems = wholeNumber('totalItems', job.totalItems);
  if (job.knownStatus !== undefined && asJobStatus(job.knownStatus) === undefined) {
    throw new InvalidInputError('knownStatus', `expected one of ${JOB_STATUSES.join(', ')}`);
  }
  const chunkIds = validChunkIds(flush.chunkIds);
  const counts = validCounts(flush.counts);
  const payload = flushPayload(chunkIds, flush.details);
  const now = validDate('now', opts.now ?? new Date());
  const ttlDays = validTtlDays(opts.ttlDays ?? DEFAULT_JOB_TTL_DAYS);
  const withCapacity = opts.returnConsumedCapacity === true;
  const flushId = flushIdForChunks(chunkIds);

  // S3 first: if it fails nothing was counted, and a retry re-PUTs the same key.
  let detailsKey: string | undefined;
  if (deps.detailsWriter !== null && hasDetails(flush.details)) {
    await deps.detailsWriter.writeFlush(shopId, jobId, flushId, payload);
    detailsKey = detailsKeyFor(jobId, flushId);
  }

  const capacity: WriteCapacity[] = [];
  const base = { ...(detailsKey !== undefined ? { detailsKey } : {}), flushId };
  const finish = async (
    r: Omit<FlushResult, 'flushId' | 'detailsKey' | 'consumedCapacity' | 'terminal'>,
    mayComplete: boolean,
  ): Promise<FlushResult> => {
    let result: FlushResult = { ...base, ...r };
    // No re-read: the counters we hold decide; the write's IN_PROGRESS condition settles races.
    if (mayComplete && isDone(r.counters, totalItems)) {
      const t = await writeTerminal(
        deps.ddb,
        deps.table,
        { shopId, jobId, counters: r.counters },
        { now, ttlDays, returnConsumedCapacity: withCapacity },
      );
      const { consumedCapacity, ...terminal } = t;
      if (consumedCapacity) capacity.push({ write: 'terminal', capacity: consumedCapacity });
      const jobStatus = t.written ? t.status : asJobStatus(t.currentStatus);
      result = { ...result, terminal, ...(jobStatus !== undefined ? { jobStatus } : {}) };
    }
    return withCapacity ? { ...result, consumedCapacity: capacity } : result;
  };

  let fold = foldsInProgress(job.knownStatus);
  /** The status a rejected fold found on the row (ALL_OLD), when it came to that. */
  let observed: JobStatus | undefined;
  for (;;) {
    const input = buildFlushUpdate({
      table: deps.table,
      shopId,
      jobId,
      chunkIds,
      counts,
      now,
      fold,
      returnConsumedCapacity: withCapacity,
    });
    try {
      const out = await deps.ddb.send(new UpdateCommand(input));
      if (out.ConsumedCapacity) capacity.push({ write: 'flush', capacity: out.ConsumedCapacity });
      const believed = observed ?? job.knownStatus;
      const known = fold || believed === 'IN_PROGRESS' ? 'IN_PROGRESS' : observed;
      return await finish(
        {
          applied: true,
          counters: countersFrom(out.Attributes),
          statusFolded: fold,
          ...(known !== undefined ? { jobStatus: known } : {}),
        },
        known === 'IN_PROGRESS' || !isTerminal(believed),
      );
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err; // transient: the SQS retry redoes S3 + DDB
      const why = classifyRejection(oldItemOf(err), chunkIds);
      if (why.kind === 'missing') throw new JobNotFoundError(shopId, jobId);
      if (why.kind === 'collision') {
        // Already counted by an earlier delivery. If that delivery died before its terminal write,
        // the stored counters finish the job now.
        const status = asJobStatus(why.old.status);
        return await finish(
          {
            applied: false,
            reason: 'already-applied',
            collidingChunkIds: why.colliding,
            counters: why.old.counters,
            statusFolded: false,
            ...(status !== undefined ? { jobStatus: status } : {}),
          },
          status === 'IN_PROGRESS',
        );
      }
      // Status race: the row left PENDING/FAILED/CONFLICT (another flush folded first). Count anyway.
      if (!fold)
        throw new ConcurrentModificationError(`${deps.table}/${keyOf(shopId, jobId).sk}`, { cause: err });
      fold = false;
      observed = asJobStatus(why.old.status);
    }
  }
};
