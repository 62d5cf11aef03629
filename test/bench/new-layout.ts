import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JobDetailsStore } from '../../shared/details';
import { chunkIds } from '../../shared/ids';
import { createJob } from '../../shared/jobs/create-job';
import { type FlushResult, recordFlush } from '../../shared/jobs/record-flush';
import type { JobStatus } from '../../shared/jobs/schema';
import { fromCapacity, type Measured, sizingSender } from './measure';
import { countsOf, flushBatches, mergeDetails, type Workload } from './workload';

export interface NewRun {
  jobId: string;
  created: Measured;
  writes: Measured[];
  s3Puts: number;
  final: FlushResult;
}

/**
 * The same job through the library: platform data to S3, recordFlush × 4 (the preparse skips ride
 * in the first flush as chunk `preparse`, which also folds IN_PROGRESS), and the terminal write the
 * last flush makes from its returned counters.
 */
export const runNewJob = async (
  ddb: DynamoDBDocumentClient,
  table: string,
  store: JobDetailsStore,
  w: Workload,
  clock: () => Date,
): Promise<NewRun> => {
  const { sender, log } = sizingSender(ddb);
  const labels: string[] = [];

  // Upstream in production too; excluded from the totals like the legacy create.
  const { jobId } = await createJob(
    sender,
    table,
    {
      shopId: w.shopId,
      jobType: 'full_sync',
      platform: 'shopify',
      totalItems: w.totalItems,
      isInternal: false,
      retryCount: 0,
      initiatorUserId: 'user-4821',
      estimatedTimeMinutes: 12,
    },
    { now: clock() },
  );
  labels.push('create (excluded)');

  let s3Puts = 0;
  await store.writePlatformData(w.shopId, jobId, w.platformData);
  s3Puts++;

  let knownStatus: JobStatus | undefined = 'PENDING';
  let final: FlushResult | undefined;
  let n = 0;
  for (const batch of flushBatches(w)) {
    n++;
    const ids = batch.map((c) => chunkIds.part(c.idx));
    const parts = batch.map((c) => c.details);
    const counts = countsOf(batch);
    if (n === 1) {
      ids.push(chunkIds.preparse);
      parts.unshift(w.preparseSkipped);
      counts.skipped += countsOf([{ idx: -1, processed: 0, details: w.preparseSkipped }]).skipped;
    }
    final = await recordFlush(
      { ddb: sender, table, detailsWriter: store },
      { shopId: w.shopId, jobId, totalItems: w.totalItems, knownStatus },
      { chunkIds: ids, counts, details: mergeDetails(parts) },
      { now: clock(), returnConsumedCapacity: true },
    );
    if (!final.applied) throw new Error(`flush ${n} was not applied: ${final.reason}`);
    if (final.detailsKey !== undefined) s3Puts++;
    for (const c of final.consumedCapacity ?? []) {
      labels.push(
        c.write === 'terminal'
          ? `terminal (${final.terminal?.status})`
          : `recordFlush ${n}${n === 1 ? ' (+preparse, IN_PROGRESS fold)' : ''}`,
      );
    }
    knownStatus = final.jobStatus;
  }
  if (final?.terminal?.written !== true) throw new Error('the last flush did not complete the job');

  const measured = log.map((e, i) => fromCapacity(labels[i] ?? `write ${i}`, e.capacity, e.itemBytes));
  const [created, ...writes] = measured;
  return { jobId, created: created as Measured, writes, s3Puts, final };
};
