import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

/**
 * The jobs table, described once. The local stack builds its CreateTable call from this and the CDK
 * construct builds its TableV2 from it, so the two cannot drift.
 *
 * Keys: `pk = SHOP#{shop_id}`, `sk = JOB#{job_id}` — the shop id is derivable from the row (and from
 * every GSI entry, since table keys are always projected).
 *
 * GSI_JobsByStatus_v2: partition `job_status`, sort `status_created_at` = ISO time the row entered its
 * current status (for terminal rows that equals `completed_at`). "Terminal jobs completed before T" is
 * then one Query per terminal status: `job_status = :s AND status_created_at < :T`.
 */
export const JOBS_TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'ttl',
  gsiJobLookup: {
    name: 'GSI_JobLookup_v2',
    partitionKey: 'job_id',
    projection: 'KEYS_ONLY',
  },
  gsiJobsByStatus: {
    name: 'GSI_JobsByStatus_v2',
    partitionKey: 'job_status',
    sortKey: 'status_created_at',
    projection: 'INCLUDE',
    /** Exactly the seed's list: counters, completed_chunks, retry_attribution, last_updated stay out. */
    nonKeyAttributes: [
      'job_id',
      'job_type',
      'is_internal',
      'platform',
      'started_at',
      'completed_at',
      'error_message',
      'ttl',
      'created_at',
      'retry_count',
      'estimated_time_minutes',
      'initiator_user_id',
    ],
  },
} as const;

export const JOB_STATUSES = ['PENDING', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CONFLICT'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES = ['COMPLETED', 'FAILED', 'CONFLICT'] as const satisfies readonly JobStatus[];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
/** Statuses from which the first flush may move a job to IN_PROGRESS (seed Phase 2, a retry included). */
export const IN_PROGRESS_ELIGIBLE = ['PENDING', 'FAILED', 'CONFLICT'] as const satisfies readonly JobStatus[];

export const jobPk = (shopId: string): string => `SHOP#${shopId}`;
export const jobSk = (jobId: string): string => `JOB#${jobId}`;
export const shopIdFromPk = (pk: string): string => (pk.startsWith('SHOP#') ? pk.slice(5) : pk);
export const jobIdFromSk = (sk: string): string => (sk.startsWith('JOB#') ? sk.slice(4) : sk);

/** CreateTable input for DynamoDB Local and tests (on-demand, both GSIs). */
export const createTableInput = (tableName: string): CreateTableCommandInput => {
  const t = JOBS_TABLE;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: t.partitionKey, AttributeType: 'S' },
      { AttributeName: t.sortKey, AttributeType: 'S' },
      { AttributeName: t.gsiJobLookup.partitionKey, AttributeType: 'S' },
      { AttributeName: t.gsiJobsByStatus.partitionKey, AttributeType: 'S' },
      { AttributeName: t.gsiJobsByStatus.sortKey, AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: t.partitionKey, KeyType: 'HASH' },
      { AttributeName: t.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: t.gsiJobLookup.name,
        KeySchema: [{ AttributeName: t.gsiJobLookup.partitionKey, KeyType: 'HASH' }],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: t.gsiJobsByStatus.name,
        KeySchema: [
          { AttributeName: t.gsiJobsByStatus.partitionKey, KeyType: 'HASH' },
          { AttributeName: t.gsiJobsByStatus.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...t.gsiJobsByStatus.nonKeyAttributes] },
      },
    ],
  };
};
