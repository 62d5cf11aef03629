import { planBatchesKey, plannedJobsKey } from '../../format/keys';
import type { PageGroup } from '../plan/plan-rows';
import type { PlannedBatch, PlannedGroup } from '../types';

/**
 * Pure layout of a plan page's two files: the planned jobs (JSONL, each group's lines contiguous, so a
 * group is a byte range and a batch one ranged GET) and the batches (JSONL, the Map's items).
 */
export interface PlanFiles {
  readonly jobsKey: string;
  readonly jobsBody: Buffer;
  readonly batchesKey: string;
  readonly batchesBody: Buffer;
  readonly batches: PlannedBatch[];
}

export interface BatchLimits {
  /** Shop-months per batch. */
  readonly batchGroups: number;
  /** Jobs per batch; a larger shop-month is a batch of its own. */
  readonly batchJobs: number;
}

export const layoutPlanFiles = (
  runId: string,
  page: number,
  groups: readonly PageGroup[],
  limits: BatchLimits,
): PlanFiles => {
  const jobsKey = plannedJobsKey(runId, page);
  const chunks: Buffer[] = [];
  let offset = 0;
  const planned: PlannedGroup[] = groups.map((g) => {
    const body = Buffer.from(g.jobs.map((j) => `${JSON.stringify(j)}\n`).join(''), 'utf8');
    chunks.push(body);
    const start = offset;
    offset += body.length;
    return { shopId: g.shopId, month: g.month, jobsKey, jobsRange: [start, offset], jobCount: g.jobs.length };
  });

  // First fit in plan order: groups of one batch sit next to each other in the jobs file.
  const batches: PlannedBatch[] = [];
  let current: PlannedGroup[] = [];
  let jobs = 0;
  const close = () => {
    if (current.length > 0) batches.push({ page, batch: batches.length, groups: current });
    current = [];
    jobs = 0;
  };
  for (const g of planned) {
    if (current.length >= limits.batchGroups || (current.length > 0 && jobs + g.jobCount > limits.batchJobs))
      close();
    current.push(g);
    jobs += g.jobCount;
  }
  close();

  return {
    jobsKey,
    jobsBody: Buffer.concat(chunks),
    batchesKey: planBatchesKey(runId, page),
    batchesBody: Buffer.from(batches.map((b) => `${JSON.stringify(b)}\n`).join(''), 'utf8'),
    batches,
  };
};
