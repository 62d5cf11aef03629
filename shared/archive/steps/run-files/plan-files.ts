import { planBatchesKey, plannedJobsKey } from '../../format';
import type { PageGroup } from '../plan/plan-rows';
import type { PlannedBatch, PlannedGroup } from '../types';
import { gzipMember } from './gzip-members';

/**
 * Pure layout of a plan page's two files: the planned jobs (JSONL, each group's lines one gzip member,
 * so a group is a byte range, a batch one ranged GET, and each group inflates alone) and the batches
 * (JSONL, the Map's items; plain: the Map's ItemReader reads them).
 */
export interface PlanFiles {
  readonly jobsKey: string;
  readonly jobsBody: Buffer;
  readonly batchesKey: string;
  readonly batchesBody: Buffer;
  readonly batches: PlannedBatch[];
}

/**
 * Hot bytes per batch, at most (a larger shop-month is a batch alone): what bounds a batch's time,
 * with `batchJobs` its requests. ArchiveBatch compresses what it reads (gzip level 9 at a share of a
 * vCPU under 1,769 MB); a 1 GB shop-month is the largest the benchmarks measure in one invocation
 * (docs/benchmarks.md, "Memory"), so no batch of several holds more.
 */
export const BATCH_HOT_BYTES_MAX = 1024 ** 3;

export interface BatchLimits {
  /** Shop-months per batch. */
  readonly batchGroups: number;
  /** Jobs per batch; a larger shop-month is a batch of its own. */
  readonly batchJobs: number;
}

/** A group's hot bytes as Plan listed them (0 for jobs it did not list: ArchiveBatch lists those). */
const hotBytesOf = (g: PageGroup): number =>
  g.jobs.reduce((a, j) => a + (j.objects ?? []).reduce((s, o) => s + o.size, 0), 0);

export const layoutPlanFiles = (
  runId: string,
  page: number,
  groups: readonly PageGroup[],
  limits: BatchLimits,
  /** Whether a group is packed (PlannedGroup.pack). */
  pack: (g: PageGroup) => PlannedGroup['pack'] = () => undefined,
): PlanFiles => {
  const jobsKey = plannedJobsKey(runId, page);
  const chunks: Buffer[] = [];
  let offset = 0;
  // Packed groups last, by month: the small shop-months of a month fill the same batches, which
  // write one shared part each (their shared index is one object per month).
  const packed = groups.filter((g) => pack(g) === true);
  const ordered = [
    ...groups.filter((g) => pack(g) !== true),
    ...packed
      .map((g, i) => ({ g, i }))
      .sort((a, b) => (a.g.month === b.g.month ? a.i - b.i : a.g.month < b.g.month ? -1 : 1))
      .map((x) => x.g),
  ];
  const planned: PlannedGroup[] = ordered.map((g) => {
    const body = gzipMember(Buffer.from(g.jobs.map((j) => `${JSON.stringify(j)}\n`).join(''), 'utf8'));
    chunks.push(body);
    const start = offset;
    offset += body.length;
    return {
      shopId: g.shopId,
      month: g.month,
      jobsKey,
      jobsRange: [start, offset],
      jobCount: g.jobs.length,
      ...(pack(g) !== undefined ? { pack: pack(g) } : {}),
    };
  });

  // First fit in plan order: groups of one batch sit next to each other in the jobs file.
  const batches: PlannedBatch[] = [];
  let current: PlannedGroup[] = [];
  let jobs = 0;
  let bytes = 0;
  const close = () => {
    if (current.length > 0) batches.push({ page, batch: batches.length, groups: current });
    current = [];
    jobs = 0;
    bytes = 0;
  };
  planned.forEach((g, i) => {
    const b = hotBytesOf(ordered[i] as PageGroup);
    if (
      current.length >= limits.batchGroups ||
      (current.length > 0 && (jobs + g.jobCount > limits.batchJobs || bytes + b > BATCH_HOT_BYTES_MAX))
    )
      close();
    current.push(g);
    jobs += g.jobCount;
    bytes += b;
  });
  close();
  // Each month's shared staging is collected by the first batch with a group of it that may pack.
  const collecting = new Map<string, number>();
  for (const b of batches)
    for (const g of b.groups)
      if (g.pack !== undefined && !collecting.has(g.month)) collecting.set(g.month, b.batch);
  for (const [month, at] of collecting) {
    const b = batches[at] as PlannedBatch;
    batches[at] = { ...b, collectShared: [...(b.collectShared ?? []), month] };
  }

  return {
    jobsKey,
    jobsBody: Buffer.concat(chunks),
    batchesKey: planBatchesKey(runId, page),
    batchesBody: Buffer.from(batches.map((b) => `${JSON.stringify(b)}\n`).join(''), 'utf8'),
    batches,
  };
};
