import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { validateJobId, validateShopId } from '../ids';
import { checkSetting, SETTINGS } from '../settings';
import { formatTimestamp, validDate } from '../time';
import { isConditionalCheckFailed, keyOf, oldItemOf } from './job-repo';
import type { TerminalStatus } from './schema';
import { type DdbSender, type JobCounters, terminalStatusFor } from './types';

/** shared/settings.ts jobTtlDays; entry points pass config().jobTtlDays. */
export const DEFAULT_JOB_TTL_DAYS = SETTINGS.jobTtlDays.default;

export interface TerminalOptions {
  now?: Date;
  /** Days the terminal row lives before TTL removes it (default 90). */
  ttlDays?: number;
  returnConsumedCapacity?: boolean;
}

export interface TerminalResult {
  status: TerminalStatus;
  completedAt: string;
  /** False when the row was no longer IN_PROGRESS: someone else completed it first (not an error). */
  written: boolean;
  /** The status found when the write lost (absent when written, or when the row is gone). */
  currentStatus?: string;
  consumedCapacity?: ConsumedCapacity;
}

export const validTtlDays = (v: unknown): number => checkSetting('jobTtlDays', v, 'ttlDays');

/** Epoch seconds at which a job completed at `now` expires. */
export const ttlFor = (now: Date, ttlDays: number): number =>
  Math.floor(now.getTime() / 1000 + ttlDays * 86400);

/**
 * The terminal UpdateItem (pure). `status_created_at = completed_at` is what makes "terminal jobs
 * completed before T" one GSI_JobsByStatus_v2 Query per status. Conditional on IN_PROGRESS so two
 * racing completers write once; `ttl` is a reserved word, hence `#ttl`.
 */
export const buildTerminalUpdate = (p: {
  table: string;
  shopId: string;
  jobId: string;
  status: TerminalStatus;
  now: Date;
  ttlDays: number;
  returnConsumedCapacity?: boolean;
}): UpdateCommandInput => ({
  TableName: p.table,
  Key: keyOf(p.shopId, p.jobId),
  UpdateExpression:
    'SET job_status = :terminal, completed_at = :ts, status_created_at = :ts, last_updated = :ts, #ttl = :ttl',
  ConditionExpression: 'job_status = :inprog',
  ExpressionAttributeNames: { '#ttl': 'ttl' },
  ExpressionAttributeValues: {
    ':terminal': p.status,
    ':ts': formatTimestamp(p.now),
    ':ttl': ttlFor(p.now, p.ttlDays),
    ':inprog': 'IN_PROGRESS',
  },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  ...(p.returnConsumedCapacity ? { ReturnConsumedCapacity: 'INDEXES' as const } : {}),
});

/**
 * Moves an IN_PROGRESS job to its terminal status (terminalStatusFor(counters)) without re-reading
 * it: callers pass the counters the last flush returned. Losing the race is reported, not thrown.
 */
export const writeTerminal = async (
  ddb: DdbSender,
  table: string,
  job: { shopId: string; jobId: string; counters: JobCounters },
  opts: TerminalOptions = {},
): Promise<TerminalResult> => {
  validateShopId(job.shopId);
  validateJobId(job.jobId);
  const now = validDate('now', opts.now ?? new Date());
  const ttlDays = validTtlDays(opts.ttlDays ?? DEFAULT_JOB_TTL_DAYS);
  const status = terminalStatusFor(job.counters);
  const completedAt = formatTimestamp(now);
  const input = buildTerminalUpdate({
    table,
    shopId: job.shopId,
    jobId: job.jobId,
    status,
    now,
    ttlDays,
    returnConsumedCapacity: opts.returnConsumedCapacity === true,
  });
  try {
    const out = await ddb.send(new UpdateCommand(input));
    return {
      status,
      completedAt,
      written: true,
      ...(out.ConsumedCapacity ? { consumedCapacity: out.ConsumedCapacity } : {}),
    };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const current = oldItemOf(err)?.status;
    return {
      status,
      completedAt,
      written: false,
      ...(current !== undefined ? { currentStatus: current } : {}),
    };
  }
};
