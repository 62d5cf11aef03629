import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { InvalidInputError, isNamedError } from '../errors';
import { validateJobId, validateShopId } from '../ids';
import { ExactGetCommand } from './exact-commands';
import { JOBS_TABLE, jobIdFromSk, jobPk, jobSk, shopIdFromPk } from './schema';
import type { DdbSender, JobCounters, JobKey, JobRow } from './types';

/** Reads of the jobs table, plus the small helpers the writers share. */

/**
 * The row of one job, or null when it does not exist. Numbers are exact (exact-commands.ts): a number a
 * float64 would not reproduce (a counter beyond 2^53 included) is a RawJsonNumber, not a number.
 */
export const getJob = async (
  ddb: DdbSender,
  table: string,
  shopId: string,
  jobId: string,
  opts: { consistentRead?: boolean } = {},
): Promise<JobRow | null> => {
  validateShopId(shopId);
  validateJobId(jobId);
  const out = await ddb.send(
    new ExactGetCommand({
      TableName: table,
      Key: { pk: jobPk(shopId), sk: jobSk(jobId) },
      ConsistentRead: opts.consistentRead === true,
    }),
  );
  return (out.Item as JobRow | undefined) ?? null;
};

/**
 * Table keys of a job known only by id, via GSI_JobLookup_v2 (KEYS_ONLY: the entry carries pk/sk,
 * and the shop is derived from pk). Callers needing the row follow up with getJob.
 */
export const findJobKeyById = async (
  ddb: DdbSender,
  table: string,
  jobId: string,
): Promise<JobKey | null> => {
  validateJobId(jobId);
  const out = await ddb.send(
    new QueryCommand({
      TableName: table,
      IndexName: JOBS_TABLE.gsiJobLookup.name,
      KeyConditionExpression: 'job_id = :id',
      ExpressionAttributeValues: { ':id': jobId },
      Limit: 1,
    }),
  );
  const item = out.Items?.[0];
  if (item === undefined || typeof item.pk !== 'string' || typeof item.sk !== 'string') return null;
  return { shopId: shopIdFromPk(item.pk), jobId: jobIdFromSk(item.sk) };
};

/** The key of a job, as every write addresses it. */
export const keyOf = (shopId: string, jobId: string) => ({ pk: jobPk(shopId), sk: jobSk(jobId) });

export const wholeNumber = (field: string, v: unknown): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new InvalidInputError(field, `expected a whole number ≥ 0, got ${JSON.stringify(v)}`);
  }
  return v;
};

export const isConditionalCheckFailed = (err: unknown): boolean =>
  isNamedError(err, 'ConditionalCheckFailedException');

/**
 * The item a ConditionalCheckFailedException carries under `ReturnValuesOnConditionCheckFailure:
 * 'ALL_OLD'`. The document client does not unmarshall error payloads, so this reads the raw
 * AttributeValue shapes it needs (S, N, SS, BOOL). Undefined = no item = the row does not exist.
 */
export interface OldItem {
  status: string | undefined;
  counters: JobCounters;
  completedChunks: Set<string>;
}

type RawAttr = { S?: string; N?: string; SS?: string[]; BOOL?: boolean } | undefined;

const rawNumber = (a: RawAttr): number => {
  const n = Number(a?.N ?? 0);
  return Number.isFinite(n) ? n : 0;
};

export const oldItemOf = (err: unknown): OldItem | undefined => {
  const item = (err as { Item?: Record<string, RawAttr> }).Item;
  if (item === undefined || item === null || Object.keys(item).length === 0) return undefined;
  return {
    status: item.job_status?.S,
    counters: {
      processed: rawNumber(item.processed_items),
      failed: rawNumber(item.failed_items),
      skipped: rawNumber(item.skipped_items),
      conflict: rawNumber(item.conflict_items),
    },
    completedChunks: new Set(item.completed_chunks?.SS ?? []),
  };
};
