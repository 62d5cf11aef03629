import { randomUUID } from 'node:crypto';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createTableInput, jobPk, jobSk } from '../../shared/jobs/schema';
import { fromCapacity, type Measured, sizingSender } from './measure';
import { countsOf, type Details, flushBatches, mergeDetails, type Workload } from './workload';

/**
 * A replica of the seed's "today" layout (components/ecom_indexer), kept as written there so the
 * comparison is honest:
 * - 36-char UUID job ids; chunk ids `{s3_key}#part#{idx}` / `{s3_key}#preparse`, with s3_key like
 *   `imports/{shop}/{date}/{uuid}.jsonl`;
 * - details `list_append`ed into reason maps on the item (failed_items_details, skipped_items_details,
 *   conflict_details) and platform_data stored on the item;
 * - GSI_JobLookup (job_id) and GSI_JobsByStatus (job_status / status_created_at), both ALL-projected;
 * - separate writes: IN_PROGRESS, platform_data, preparse delta, per flush 2 (counters + chunks, then
 *   the details write — `_write_details_with_retry`, which the seed deletes), and the completion
 *   write after a strongly consistent GetItem (check_and_complete_job).
 */
export const LEGACY_GSIS = ['GSI_JobLookup', 'GSI_JobsByStatus'] as const;

export const legacyTableInput = (tableName: string): CreateTableCommandInput => {
  const base = createTableInput(tableName);
  return {
    ...base,
    GlobalSecondaryIndexes: [
      {
        IndexName: 'GSI_JobLookup',
        KeySchema: [{ AttributeName: 'job_id', KeyType: 'HASH' }],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: 'GSI_JobsByStatus',
        KeySchema: [
          { AttributeName: 'job_status', KeyType: 'HASH' },
          { AttributeName: 'status_created_at', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ],
  };
};

export interface LegacyOptions {
  /**
   * Writes per batcher flush: 2 = counters + chunks, then the details write (what a flush with
   * details costs today); 1 = the seed's lower bound, both in one UpdateItem (sensitivity check).
   */
  writesPerFlush: 1 | 2;
}

export interface LegacyRun {
  jobId: string;
  created: Measured;
  writes: Measured[];
  /** The strongly consistent completion read (RCU, not WCU). */
  completionRead: Measured;
}

/** `SET <attr>.#rN = list_append(if_not_exists(<attr>.#rN, :empty), :vN)` for each reason. */
const appendParts = (
  attr: string,
  tag: string,
  map: Record<string, unknown[]>,
  names: Record<string, string>,
  values: Record<string, unknown>,
): string[] =>
  Object.entries(map)
    .filter(([, list]) => list.length > 0)
    .map(([reason, list], i) => {
      names[`#${tag}${i}`] = reason;
      values[`:${tag}${i}`] = list;
      values[':empty'] = [];
      return `${attr}.#${tag}${i} = list_append(if_not_exists(${attr}.#${tag}${i}, :empty), :${tag}${i})`;
    });

const detailParts = (
  d: Details,
  names: Record<string, string>,
  values: Record<string, unknown>,
): string[] => [
  ...appendParts('failed_items_details', 'f', d.failed, names, values),
  ...appendParts('skipped_items_details', 's', d.skipped, names, values),
  ...appendParts('conflict_details', 'k', d.conflict, names, values),
];

export const runLegacyJob = async (
  ddb: DynamoDBDocumentClient,
  table: string,
  w: Workload,
  clock: () => string,
  opts: LegacyOptions = { writesPerFlush: 2 },
): Promise<LegacyRun> => {
  const { sender, log } = sizingSender(ddb);
  const jobId = randomUUID();
  const key = { pk: jobPk(w.shopId), sk: jobSk(jobId) };
  const s3Key = `imports/${w.shopId}/2026-03-14/${randomUUID()}.jsonl`;
  const cap = { ReturnConsumedCapacity: 'INDEXES' as const };
  const labels: string[] = [];
  const update = async (
    label: string,
    input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
  ) => {
    labels.push(label);
    await sender.send(new UpdateCommand({ TableName: table, Key: key, ...input, ...cap }));
  };

  // Job creation happens upstream (admin server); measured but excluded from the totals.
  const created = clock();
  await sender.send(
    new PutCommand({
      TableName: table,
      Item: {
        ...key,
        job_id: jobId,
        job_status: 'PENDING',
        status_created_at: created,
        created_at: created,
        last_updated: created,
        job_type: 'full_sync',
        platform: 'shopify',
        is_internal: false,
        retry_count: 0,
        initiator_user_id: 'user-4821',
        estimated_time_minutes: 12,
        total_items: w.totalItems,
        processed_items: 0,
        failed_items: 0,
        skipped_items: 0,
        conflict_items: 0,
        failed_items_details: {},
        skipped_items_details: {},
        conflict_details: {},
      },
      ConditionExpression: 'attribute_not_exists(pk)',
      ...cap,
    }),
  );
  labels.push('create (excluded)');

  let ts = clock();
  await update('update_job_status(IN_PROGRESS)', {
    UpdateExpression: 'SET job_status = :s, started_at = :ts, status_created_at = :ts, last_updated = :ts',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':s': 'IN_PROGRESS', ':ts': ts },
  });

  await update('update_platform_data', {
    UpdateExpression: 'SET platform_data = :pd, last_updated = :ts',
    ExpressionAttributeValues: { ':pd': w.platformData, ':ts': clock() },
  });

  {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ':n': countsOf([{ idx: -1, processed: 0, details: w.preparseSkipped }]).skipped,
      ':cs': new Set([`${s3Key}#preparse`]),
      ':c': `${s3Key}#preparse`,
      ':ts': clock(),
    };
    const sets = detailParts(w.preparseSkipped, names, values);
    await update('_apply_chunk_delta(preparse)', {
      UpdateExpression: `ADD skipped_items :n, completed_chunks :cs SET ${[...sets, 'last_updated = :ts'].join(', ')}`,
      ConditionExpression: 'NOT contains(completed_chunks, :c)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  let n = 0;
  for (const batch of flushBatches(w)) {
    n++;
    const ids = batch.map((c) => `${s3Key}#part#${c.idx}`);
    const c = countsOf(batch);
    const values: Record<string, unknown> = {
      ':p': c.processed,
      ':f': c.failed,
      ':s': c.skipped,
      ':k': c.conflict,
      ':cs': new Set(ids),
      ':ts': clock(),
    };
    ids.forEach((id, i) => {
      values[`:c${i}`] = id;
    });
    const counters = {
      add: 'ADD processed_items :p, failed_items :f, skipped_items :s, conflict_items :k, completed_chunks :cs',
      condition: ids.map((_, i) => `NOT contains(completed_chunks, :c${i})`).join(' AND '),
    };
    const names: Record<string, string> = {};
    const detailValues: Record<string, unknown> = {};
    const sets = detailParts(mergeDetails(batch.map((ch) => ch.details)), names, detailValues);
    if (opts.writesPerFlush === 1) {
      await update(`flush ${n}: counters + chunks + details`, {
        UpdateExpression: `${counters.add} SET ${[...sets, 'last_updated = :ts'].join(', ')}`,
        ConditionExpression: counters.condition,
        ...(sets.length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: { ...values, ...detailValues },
      });
      continue;
    }
    await update(`flush ${n}: counters + chunks`, {
      UpdateExpression: `${counters.add} SET last_updated = :ts`,
      ConditionExpression: counters.condition,
      ExpressionAttributeValues: values,
    });
    if (sets.length > 0) {
      await update(`flush ${n}: details`, {
        UpdateExpression: `SET ${[...sets, 'last_updated = :ts'].join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...detailValues, ':ts': clock() },
      });
    }
  }

  // check_and_complete_job: strongly consistent read, then the conditional terminal write.
  const read = await ddb.send(
    new GetCommand({ TableName: table, Key: key, ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }),
  );
  const item = read.Item ?? {};
  const done =
    Number(item.processed_items) +
    Number(item.failed_items) +
    Number(item.skipped_items) +
    Number(item.conflict_items);
  if (done < w.totalItems) throw new Error(`legacy replica: job not done (${done} of ${w.totalItems})`);
  const status =
    Number(item.failed_items) > 0 ? 'FAILED' : Number(item.conflict_items) > 0 ? 'CONFLICT' : 'COMPLETED';
  ts = clock();
  await update('check_and_complete_job', {
    UpdateExpression:
      'SET job_status = :t, completed_at = :ts, status_created_at = :ts, last_updated = :ts, #ttl = :ttl',
    ConditionExpression: 'job_status = :inprog',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: {
      ':t': status,
      ':ts': ts,
      ':inprog': 'IN_PROGRESS',
      ':ttl': Math.floor(Date.parse(ts) / 1000) + 90 * 86400,
    },
  });

  const measured = log.map((e, i) => fromCapacity(labels[i] ?? `write ${i}`, e.capacity, e.itemBytes));
  const [createdRow, ...writes] = measured;
  const rcu = read.ConsumedCapacity?.CapacityUnits ?? 0;
  return {
    jobId,
    created: createdRow as Measured,
    writes,
    completionRead: {
      write: 'GetItem ConsistentRead (check_and_complete_job)',
      table: rcu,
      gsi: {},
      total: rcu,
      itemBytes: writes.at(-2)?.itemBytes ?? 0,
      rcu,
    },
  };
};
