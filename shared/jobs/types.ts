import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobDetailsPayload } from '../details/payload';
import type { JobStatus, TerminalStatus } from './schema';

/**
 * One jobs-table row (keys per schema.ts). Kept small and constant-size for the job's whole life:
 * details and platform data live in S3 (docs/archive-format.md), never on the row.
 *
 * | attribute | type | written by | notes |
 * |---|---|---|---|
 * | pk / sk | S | createJob | `SHOP#{shop_id}` / `JOB#{job_id}`; no `shop_id` attribute — derive it from pk |
 * | job_id | S | createJob | GSI_JobLookup_v2 partition key |
 * | job_status | S | create / first flush / terminal | GSI_JobsByStatus_v2 partition key |
 * | status_created_at | S (ISO) | same writes as job_status | GSI sort key: when the row entered its status; = completed_at once terminal |
 * | created_at | S (ISO) | createJob | |
 * | started_at | S (ISO) | first flush | `if_not_exists`: a retry keeps the first start |
 * | completed_at | S (ISO) | terminal | removed again when a retry refolds IN_PROGRESS |
 * | last_updated | S (ISO) | every write | not projected, so flushes skip the GSIs |
 * | total_items | N | createJob | |
 * | processed_items, failed_items, skipped_items, conflict_items | N | createJob (0) + every flush (ADD) | processed = indexed successfully |
 * | completed_chunks | SS | every flush (ADD) | per-job chunk dedup; short ids (`p{idx}`, `preparse`, `timeout`); absent until the first flush |
 * | job_type, platform | S | createJob | |
 * | is_internal | BOOL | createJob, if given | |
 * | retry_count | N | createJob, if given | |
 * | error_message | S | createJob, if given | |
 * | initiator_user_id | S | createJob, if given | |
 * | estimated_time_minutes | N | createJob, if given | |
 * | ttl | N (epoch s) | terminal | removed again when a retry refolds IN_PROGRESS |
 *
 * The job is done when processed + failed + skipped + conflict ≥ total_items; its terminal status is
 * `terminalStatusFor(counters)`.
 */
export interface JobRow {
  pk: string;
  sk: string;
  job_id: string;
  job_status: JobStatus;
  status_created_at: string;
  created_at: string;
  started_at?: string;
  completed_at?: string;
  last_updated: string;
  total_items: number;
  processed_items: number;
  failed_items: number;
  skipped_items: number;
  conflict_items: number;
  completed_chunks?: Set<string>;
  job_type: string;
  platform: string;
  is_internal?: boolean;
  retry_count?: number;
  error_message?: string;
  initiator_user_id?: string;
  estimated_time_minutes?: number;
  ttl?: number;
}

/** The four counters a flush adds, and the row's running totals. */
export interface JobCounters {
  processed: number;
  failed: number;
  skipped: number;
  conflict: number;
}

/** Row attribute holding each counter. */
export const COUNTER_ATTRIBUTES = {
  processed: 'processed_items',
  failed: 'failed_items',
  skipped: 'skipped_items',
  conflict: 'conflict_items',
} as const satisfies Record<keyof JobCounters, keyof JobRow>;

export const countersTotal = (c: JobCounters): number => c.processed + c.failed + c.skipped + c.conflict;

/** Done = every item is accounted for, whatever its outcome. */
export const isDone = (c: JobCounters, totalItems: number): boolean => countersTotal(c) >= totalItems;

/**
 * The terminal status of a finished job: any failed item makes it FAILED; otherwise any conflict makes
 * it CONFLICT; otherwise COMPLETED. Skipped items alone do not fail a job (they were deliberately
 * not indexed).
 */
export const terminalStatusFor = (c: JobCounters): TerminalStatus => {
  if (c.failed > 0) return 'FAILED';
  if (c.conflict > 0) return 'CONFLICT';
  return 'COMPLETED';
};

/**
 * The S3 leg of a flush, as small as recordFlush needs (JobDetailsStore satisfies it). Passing null
 * means the details bucket is not configured: the S3 leg is skipped (seed empty-bucket contract).
 */
export interface FlushDetailsWriter {
  writeFlush(shopId: string, jobId: string, flushId: string, payload: JobDetailsPayload): Promise<unknown>;
}

/** Anything that sends DynamoDB document-client commands (the real client, or a test wrapper). */
export type DdbSender = Pick<DynamoDBDocumentClient, 'send'>;

/** Table keys of one job. */
export interface JobKey {
  shopId: string;
  jobId: string;
}
