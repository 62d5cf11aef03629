import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { flushIdForChunks, sortedUniqueIds } from '../details/helpers';
import { findJsonProblem, isPlainObject, type JsonValue } from '../details/json';
import { detailsKey as detailsKeyFor } from '../details/keys';
import { type ConflictItem, type JobDetailsPayload, validateJobDetailsPayload } from '../details/payload';
import { ConcurrentModificationError, InvalidInputError, JobNotFoundError } from '../errors';
import { validateChunkId, validateJobId, validateShopId } from '../ids';
import { formatTimestamp, validDate } from '../time';
import { isConditionalCheckFailed, keyOf, type OldItem, oldItemOf, wholeNumber } from './job-repo';
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
 *
 * Redrive protocol (a FAILED or CONFLICT job whose failed / conflict items are processed again):
 * - Every flush of redrive attempt n (n ≥ 1) passes `job.redrive = {attempt: n, failed, conflict}` —
 *   the failed and conflict counts the row had when the redrive started, i.e. the items being retried
 *   — and chunk ids `r{n}-{chunk}` (`chunkIds.redrive(n, 'p0')`), which never collide with the first
 *   run's nor another attempt's; a redelivery collides with itself and is deduplicated as ever.
 * - The flush that moves the job back to IN_PROGRESS (exactly one per attempt: its condition is
 *   `job_status IN (FAILED, CONFLICT)`) also takes the retried items out of the counters — it ADDs
 *   `failed − redrive.failed` and `conflict − redrive.conflict` — adds 1 to `retry_count`, and sets
 *   `retry_attribution = if_not_exists(retry_attribution, {first_retry_at, …redrive.attribution})`, all
 *   in the same UpdateItem. Every other flush of the attempt adds its outcomes as usual.
 * - The job is terminal again when the counters sum to `total_items` (every retried item re-reported):
 *   the usual conditional terminal write, with a new `completed_at` (= `status_created_at`) and `ttl`;
 *   the archiver then archives it as a retried job (a new index entry).
 * Without `redrive`, a FAILED/CONFLICT job that ended early (an error path, counters short of
 * `total_items`) simply resumes: its next flush refolds IN_PROGRESS and counting goes on.
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

/** This flush belongs to a redrive of a finished FAILED/CONFLICT job (protocol at the top). */
export interface FlushRedrive {
  /** 1 for the first redrive; chunk ids of this flush must start with `r{attempt}-`. */
  attempt: number;
  /** The row's `failed_items` when the redrive started: the failed items being retried. */
  failed: number;
  /** The row's `conflict_items` when the redrive started: the conflict items being retried. */
  conflict: number;
  /** Merged into `retry_attribution` with `first_retry_at` when the job has none yet. */
  attribution?: Record<string, JsonValue>;
}

export interface FlushJob {
  shopId: string;
  jobId: string;
  totalItems: number;
  redrive?: FlushRedrive;
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

const validRedrive = (r: unknown, chunkIds: readonly string[]): FlushRedrive => {
  if (typeof r !== 'object' || r === null) throw new InvalidInputError('redrive', 'expected an object');
  const o = r as Record<string, unknown>;
  const attempt = wholeNumber('redrive.attempt', o.attempt);
  if (attempt < 1) throw new InvalidInputError('redrive.attempt', `expected ≥ 1, got ${attempt}`);
  const prefix = `r${attempt}-`;
  const stray = chunkIds.find((id) => !id.startsWith(prefix) || id.length === prefix.length);
  if (stray !== undefined) {
    throw new InvalidInputError(
      'chunkIds',
      `a redrive (attempt ${attempt}) uses ${prefix}{chunk} ids, got ${JSON.stringify(stray)}`,
    );
  }
  let attribution: Record<string, JsonValue> | undefined;
  if (o.attribution !== undefined) {
    const problem = isPlainObject(o.attribution)
      ? findJsonProblem(o.attribution, 'redrive.attribution')
      : { path: 'redrive.attribution', reason: 'expected an object' };
    if (problem) throw new InvalidInputError(problem.path, problem.reason);
    attribution = o.attribution as Record<string, JsonValue>;
  }
  return {
    attempt,
    failed: wholeNumber('redrive.failed', o.failed),
    conflict: wholeNumber('redrive.conflict', o.conflict),
    ...(attribution ? { attribution } : {}),
  };
};

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
  redrive?: FlushRedrive;
  returnConsumedCapacity?: boolean;
}): UpdateCommandInput => {
  // The redrive's fold takes the retried items out of the counters (protocol at the top).
  const uncount = p.fold && p.redrive ? p.redrive : { failed: 0, conflict: 0 };
  const values: Record<string, unknown> = {
    ':processed': p.counts.processed,
    ':failed': p.counts.failed - uncount.failed,
    ':skipped': p.counts.skipped,
    ':conflict': p.counts.conflict - uncount.conflict,
    ':chunks': new Set(p.chunkIds),
    ':ts': formatTimestamp(p.now),
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
  let update = `ADD ${add}${p.fold && p.redrive ? ', retry_count :one' : ''} SET last_updated = :ts`;
  const condition = ['attribute_exists(pk)', ...noCollision];
  if (p.fold && p.redrive) {
    update += ', job_status = :inprog, started_at = if_not_exists(started_at, :ts), status_created_at = :ts';
    // Set once, by the first redrive ever: a later attempt finds the attribute and leaves it.
    update += ', retry_attribution = if_not_exists(retry_attribution, :ra) REMOVE completed_at, #ttl';
    values[':ra'] = {
      ...p.redrive.attribution,
      first_retry_at: formatTimestamp(p.now),
      first_retry_attempt: p.redrive.attempt,
    };
    names['#ttl'] = 'ttl';
    values[':inprog'] = 'IN_PROGRESS';
    values[':one'] = 1;
    values[':failedStatus'] = 'FAILED';
    values[':conflictStatus'] = 'CONFLICT';
    values[':rf'] = p.redrive.failed;
    values[':rc'] = p.redrive.conflict;
    // Only a finished FAILED/CONFLICT job is redriven, and never below zero.
    condition.push(
      'job_status IN (:failedStatus, :conflictStatus)',
      'failed_items >= :rf',
      'conflict_items >= :rc',
    );
  } else if (p.fold) {
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
  const redrive = job.redrive === undefined ? undefined : validRedrive(job.redrive, chunkIds);
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
      ...(redrive ? { redrive } : {}),
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
      observed = asJobStatus(why.old.status);
      // A redrive counts on only once its attempt's fold has landed (the row is IN_PROGRESS): anything
      // else would add outcomes for items still counted as failed.
      if (redrive && observed !== 'IN_PROGRESS') throw redriveRefused(redrive, why.old);
      fold = false;
    }
  }
};

const redriveRefused = (r: FlushRedrive, old: OldItem): InvalidInputError => {
  const status = old.status ?? 'absent';
  if (status === 'FAILED' || status === 'CONFLICT') {
    return new InvalidInputError(
      'redrive',
      `retries ${r.failed} failed and ${r.conflict} conflict items, but the row counts ${old.counters.failed} and ${old.counters.conflict}`,
    );
  }
  return new InvalidInputError('redrive', `only a FAILED or CONFLICT job is redriven; the job is ${status}`);
};
