import { mapLimit } from '../../shared/concurrency';
import { JobDetailsStore } from '../../shared/details/store';
import { InvalidInputError, isNamedError, JobArchiveError } from '../../shared/errors';
import { createJob } from '../../shared/jobs/create-job';
import { isConditionalCheckFailed } from '../../shared/jobs/job-repo';
import { recordFlush } from '../../shared/jobs/record-flush';
import type { JobStatus } from '../../shared/jobs/schema';
import { boolFlag, type CommandSpec, dateFlag, type Flags, stringFlag, wholeNumberFlag } from './args';
import type { CliContext } from './context';
import { fleetStats, type PlannedJob, planFleet } from './fleet';
import { type Output, printJson, table } from './output';
import { startProgress } from './progress';
import { type IndexerRowStyle, ROW_STYLES, type RowStyle, writeIndexerJob } from './python-rows';

export const seedSpec: CommandSpec = {
  name: 'seed',
  short: 'write a simulated, seeded fleet of terminal jobs through the hot-path writer',
  summary:
    'Write a simulated fleet of terminal jobs through the hot-path writer (createJob, platform data, recordFlush). ' +
    'Deterministic for a given --seed; jobs already present (same seed rerun) are skipped.',
  options: {
    shops: { type: 'string', value: 'N', help: 'shops in the fleet (default 5)' },
    jobs: { type: 'string', value: 'N', help: 'jobs per shop, spread over the months (default 10)' },
    months: {
      type: 'string',
      value: 'N',
      help: 'calendar months, ending with the month of --now (default 3)',
    },
    seed: { type: 'string', value: 'N', help: 'PRNG seed (default 1)' },
    now: { type: 'string', value: 'ISO', help: 'the simulated present (default: now)' },
    concurrency: { type: 'string', value: 'N', help: 'jobs written in parallel (default 8)' },
    'row-style': {
      type: 'string',
      value: 'STYLE',
      help: `how rows are written: ${ROW_STYLES.join(' | ')} (default library; python = as the production Python indexer writes them, pre-migration = details inline on the row)`,
    },
  },
  notes: [
    'Cost per job: 1 PutItem, 1 UpdateItem per flush (+1 terminal), 1 PutObject per flush with details (+1 platform data).',
  ],
};

export interface SeedOptions {
  readonly shops: number;
  readonly jobsPerShop: number;
  readonly months: number;
  readonly seed: number;
  /** Undefined: the context's clock. */
  readonly now?: Date;
  readonly concurrency: number;
  /** @default 'library' */
  readonly rowStyle?: RowStyle;
  readonly json: boolean;
}

export const parseSeedOptions = (flags: Flags): SeedOptions => {
  const now = dateFlag(flags, 'now');
  return {
    shops: wholeNumberFlag(flags, 'shops', 5, { min: 1, max: 10_000 }),
    jobsPerShop: wholeNumberFlag(flags, 'jobs', 10, { min: 1, max: 100_000 }),
    months: wholeNumberFlag(flags, 'months', 3, { min: 1, max: 120 }),
    seed: wholeNumberFlag(flags, 'seed', 1, { min: 0, max: 0xffff_ffff }),
    ...(now ? { now } : {}),
    concurrency: wholeNumberFlag(flags, 'concurrency', 8, { min: 1, max: 64 }),
    rowStyle: rowStyleFlag(stringFlag(flags, 'row-style')),
    json: boolFlag(flags, 'json'),
  };
};

export interface SeededJob {
  readonly shopId: string;
  readonly jobId: string;
  readonly completedAt: string;
  readonly status: JobStatus;
}

export interface SeedResult {
  readonly seed: number;
  readonly now: string;
  /** Jobs written by this call, in plan order. */
  readonly jobs: SeededJob[];
  /** Planned jobs whose row already existed (a rerun of the same seed): left untouched. */
  readonly alreadyPresent: number;
}

const rowStyleFlag = (raw: string | undefined): RowStyle => {
  if (raw === undefined) return 'library';
  if (!(ROW_STYLES as readonly string[]).includes(raw)) {
    throw new InvalidInputError(
      '--row-style',
      `expected one of ${ROW_STYLES.join(', ')}, got ${JSON.stringify(raw)}`,
    );
  }
  return raw as RowStyle;
};

/** Replays one planned job through the writer library, as the indexer would. */
const writeJob = async (
  ctx: CliContext,
  store: JobDetailsStore,
  job: PlannedJob,
): Promise<SeededJob | null> => {
  try {
    // The planned id only: a collision means this seed already wrote the job.
    await createJob(ctx.ddb, ctx.table, job.input, {
      now: job.createdAt,
      idGenerator: () => job.jobId,
      maxAttempts: 1,
    });
  } catch (err) {
    if (isNamedError(err, 'JobArchiveError') && isConditionalCheckFailed((err as Error).cause)) return null;
    throw err;
  }
  if (job.platformData) await store.writePlatformData(job.shopId, job.jobId, job.platformData);
  let knownStatus: JobStatus | undefined = 'PENDING';
  let finalStatus: JobStatus | undefined;
  let completedAt: string | undefined;
  for (const f of job.flushes) {
    const r = await recordFlush(
      { ddb: ctx.ddb, table: ctx.table, detailsWriter: store },
      { shopId: job.shopId, jobId: job.jobId, totalItems: job.input.totalItems, knownStatus },
      { chunkIds: f.chunkIds, counts: f.counts, ...(f.details ? { details: f.details } : {}) },
      { now: f.at, ttlDays: ctx.cfg.jobTtlDays },
    );
    knownStatus = r.jobStatus;
    if (r.terminal?.written) {
      finalStatus = r.terminal.status;
      completedAt = r.terminal.completedAt;
    }
  }
  if (finalStatus !== job.status || completedAt !== job.completedAt.toISOString()) {
    throw new JobArchiveError(
      `seed: job ${job.jobId} of ${job.shopId} ended ${finalStatus ?? 'not terminal'} at ${completedAt ?? '-'}, planned ${job.status} at ${job.completedAt.toISOString()}`,
    );
  }
  return { shopId: job.shopId, jobId: job.jobId, completedAt, status: finalStatus };
};

/** One planned job written as the production indexer would (python-rows.ts). */
const writeStyled = async (
  ctx: CliContext,
  job: PlannedJob,
  style: IndexerRowStyle,
): Promise<SeededJob | null> => {
  const w = await writeIndexerJob(ctx, job, style);
  return w && { shopId: job.shopId, jobId: w.jobId, completedAt: w.completedAt, status: job.status };
};

export const seedCommand = async (ctx: CliContext, opts: SeedOptions, io: Output): Promise<SeedResult> => {
  const now = opts.now ?? ctx.now();
  const plan = planFleet({
    shops: opts.shops,
    jobsPerShop: opts.jobsPerShop,
    months: opts.months,
    seed: opts.seed,
    now,
  });
  const style = opts.rowStyle ?? 'library';
  const store = new JobDetailsStore(ctx.s3, ctx.bucket, { readConcurrency: ctx.cfg.readConcurrency });
  const progress = startProgress(io, 'seed: jobs', plan.length);
  let written: (SeededJob | null)[];
  try {
    written = await mapLimit(plan, opts.concurrency, async (job) => {
      const r = style === 'library' ? await writeJob(ctx, store, job) : await writeStyled(ctx, job, style);
      progress.tick();
      return r;
    });
  } finally {
    progress.done();
  }
  const jobs = written.filter((j): j is SeededJob => j !== null);
  const result: SeedResult = {
    seed: opts.seed,
    now: now.toISOString(),
    jobs,
    alreadyPresent: written.length - jobs.length,
  };
  if (opts.json) {
    printJson(io, result);
    return result;
  }
  const writtenIds = new Set(jobs.map((j) => j.jobId));
  const stats = fleetStats(plan.filter((j) => writtenIds.has(j.jobId)));
  io.out(
    `seeded ${jobs.length} jobs for ${opts.shops} shops over ${opts.months} months into ${ctx.table} / ${ctx.bucket} (seed ${opts.seed}, now ${result.now})`,
  );
  if (result.alreadyPresent > 0) io.out(`skipped ${result.alreadyPresent} jobs already present (same seed)`);
  const byMonth = new Map<string, Record<string, number>>();
  for (const j of jobs) {
    const m = j.completedAt.slice(0, 7);
    const row = byMonth.get(m) ?? {};
    row[j.status] = (row[j.status] ?? 0) + 1;
    byMonth.set(m, row);
  }
  const rows = [...byMonth.entries()].sort(([a], [b]) => a.localeCompare(b));
  for (const line of table([
    ['month', 'COMPLETED', 'FAILED', 'CONFLICT'],
    ...rows.map(([m, r]) => [m, r.COMPLETED ?? 0, r.FAILED ?? 0, r.CONFLICT ?? 0]),
  ])) {
    io.out(`  ${line}`);
  }
  io.out(
    `  ${stats.flushes} flushes, ${stats.detailObjects} detail objects, ${stats.docIds} doc ids in details`,
  );
  return result;
};
