import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { InvalidInputError, JobArchiveError } from '../errors';
import { generateJobId, validateJobId, validateShopId } from '../ids';
import { formatTimestamp, validDate } from '../time';
import { isConditionalCheckFailed, keyOf, wholeNumber } from './job-repo';
import type { DdbSender, JobRow } from './types';

export interface CreateJobInput {
  shopId: string;
  jobType: string;
  platform: string;
  totalItems: number;
  isInternal?: boolean;
  retryCount?: number;
  errorMessage?: string;
  initiatorUserId?: string;
  estimatedTimeMinutes?: number;
}

export interface CreateJobOptions {
  now?: Date;
  /** Source of new job ids (default generateJobId); tests use it to force a collision. */
  idGenerator?: () => string;
  /** Puts tried before giving up on id collisions (default 3). */
  maxAttempts?: number;
}

export interface CreateJobResult {
  jobId: string;
  row: JobRow;
  /** Puts it took (> 1 only after an id collision). */
  attempts: number;
}

const MAX_TEXT = 1024;

const text = (field: string, v: unknown, required: boolean): string | undefined => {
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v.length === 0)
    throw new InvalidInputError(field, 'expected a non-empty string');
  if (v.length > MAX_TEXT) throw new InvalidInputError(field, `longer than ${MAX_TEXT} characters`);
  return v;
};

/**
 * The PENDING row of a new job (pure). Optional attributes are written only when given, to keep
 * the row — and the GSI_JobsByStatus_v2 entry that projects several of them — small.
 */
export const newJobRow = (input: CreateJobInput, jobId: string, now: Date): JobRow => {
  const ts = formatTimestamp(now);
  const row: JobRow = {
    ...keyOf(input.shopId, jobId),
    job_id: jobId,
    job_status: 'PENDING',
    status_created_at: ts,
    created_at: ts,
    last_updated: ts,
    total_items: input.totalItems,
    processed_items: 0,
    failed_items: 0,
    skipped_items: 0,
    conflict_items: 0,
    job_type: input.jobType,
    platform: input.platform,
  };
  if (input.isInternal !== undefined) row.is_internal = input.isInternal;
  if (input.retryCount !== undefined) row.retry_count = input.retryCount;
  if (input.errorMessage !== undefined) row.error_message = input.errorMessage;
  if (input.initiatorUserId !== undefined) row.initiator_user_id = input.initiatorUserId;
  if (input.estimatedTimeMinutes !== undefined) row.estimated_time_minutes = input.estimatedTimeMinutes;
  return row;
};

/** Checks every field of a create request; throws InvalidIdError / InvalidInputError. */
export const validateCreateJobInput = (input: CreateJobInput): void => {
  if (typeof input !== 'object' || input === null) throw new InvalidInputError('input', 'expected an object');
  validateShopId(input.shopId);
  text('jobType', input.jobType, true);
  text('platform', input.platform, true);
  wholeNumber('totalItems', input.totalItems);
  if (input.isInternal !== undefined && typeof input.isInternal !== 'boolean') {
    throw new InvalidInputError('isInternal', 'expected a boolean');
  }
  if (input.retryCount !== undefined) wholeNumber('retryCount', input.retryCount);
  text('errorMessage', input.errorMessage, false);
  text('initiatorUserId', input.initiatorUserId, false);
  if (input.estimatedTimeMinutes !== undefined) {
    const m = input.estimatedTimeMinutes;
    if (typeof m !== 'number' || !Number.isFinite(m) || m < 0) {
      throw new InvalidInputError('estimatedTimeMinutes', `expected a number ≥ 0, got ${JSON.stringify(m)}`);
    }
  }
};

/**
 * Creates a PENDING job under a fresh id. The put is conditional on `attribute_not_exists(pk)`, so an
 * id collision (≈10⁻⁶ over a million 64-bit ids, seed Phase 3) never overwrites a job: it is retried
 * with a new id.
 */
export const createJob = async (
  ddb: DdbSender,
  table: string,
  input: CreateJobInput,
  opts: CreateJobOptions = {},
): Promise<CreateJobResult> => {
  validateCreateJobInput(input);
  const now = validDate('now', opts.now ?? new Date());
  const nextId = opts.idGenerator ?? generateJobId;
  const maxAttempts = opts.maxAttempts ?? 3;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
    throw new InvalidInputError('maxAttempts', `expected a whole number ≥ 1, got ${maxAttempts}`);
  }
  let lastErr: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const jobId = validateJobId(nextId());
    const row = newJobRow(input, jobId, now);
    try {
      await ddb.send(
        new PutCommand({ TableName: table, Item: row, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
      return { jobId, row, attempts: attempt };
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      lastErr = err;
    }
  }
  throw new JobArchiveError(`createJob: ${maxAttempts} generated job ids all collided with existing jobs`, {
    cause: lastErr,
  });
};
