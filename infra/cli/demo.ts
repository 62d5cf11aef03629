import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import {
  INDEX_PREFIX,
  type MonthIndex,
  parseMonthIndex,
  parseMonthIndexKey,
  parseSharedIndex,
  parseSharedIndexKey,
} from '../../shared/archive/format';
import { expandSettled } from '../../shared/archive/settled-jobs';
import type { RunReport } from '../../shared/archive/steps/types';
import { getObjectBytes, listAll } from '../../shared/s3/objects';
import { boolFlag, type CommandSpec, EXIT_FAILURE, EXIT_OK, type Flags, runNowFlag } from './args';
import type { CliContext } from './context';
import { type LookupResult, lookupCommand } from './lookup';
import { type Output, printJson } from './output';
import { type RunDeps, runCommand } from './run';
import { isRunReport, type RunOutcome } from './run-summary';
import { type SeedResult, seedCommand } from './seed';

export const demoSpec: CommandSpec = {
  name: 'demo',
  short: 'the tour behind npm start: seed, archive, report, look one job up',
  summary:
    'The tour (npm start): embedded stack up, a demo fleet seeded when the table is empty, an archival run that ' +
    'makes the old months eligible, its report, and one archived job looked up with its provenance.',
  without: { aws: 'it writes a fake fleet and deletes hot objects, on the embedded stack only' },
  options: {
    now: {
      type: 'string',
      value: 'ISO',
      help: 'the simulated present for seeding and the run (default: now; not in the future: the run refuses that)',
    },
  },
  notes: ['Runs on the embedded stack only (no --aws): it writes a fake fleet and deletes hot objects.'],
};

/** The demo fleet: tens of shops over a few months, so several months are old enough to archive. */
export const DEMO_FLEET = { shops: 24, jobsPerShop: 6, months: 4, seed: 42 } as const;
/** Run settings that make everything older than 30 days eligible and delete right after commit. */
export const DEMO_RUN = { olderThanDays: 30, graceHours: 0 } as const;

export interface DemoOptions {
  readonly now?: Date;
  readonly json: boolean;
}

export const parseDemoOptions = (flags: Flags): DemoOptions => {
  const now = runNowFlag(flags, 'now');
  return { ...(now ? { now } : {}), json: boolFlag(flags, 'json') };
};

export interface DemoResult {
  readonly seeded: SeedResult | null;
  readonly run: RunOutcome;
  readonly lookup: LookupResult | null;
}

const tableIsEmpty = async (ctx: CliContext): Promise<boolean> => {
  const out = await ctx.ddb.send(
    new ScanCommand({ TableName: ctx.table, Limit: 1, ProjectionExpression: 'pk' }),
  );
  return (out.Items ?? []).length === 0;
};

/**
 * An archived job worth showing: from the first few month indexes, one whose hot objects are gone
 * (so the lookup really reads the archive), preferring one with platform data.
 */
export const pickArchivedJob = async (
  ctx: CliContext,
  maxIndexes = 10,
): Promise<{ shopId: string; jobId: string } | null> => {
  const indexes: MonthIndex[] = [];
  for await (const o of listAll(ctx.s3, ctx.bucket, INDEX_PREFIX)) {
    // Small shop-months are packed: their indexes are views in their month's shared index.
    const shared = parseSharedIndexKey(o.key) !== null;
    if (!shared && !parseMonthIndexKey(o.key)) continue;
    const got = await getObjectBytes(ctx.s3, ctx.bucket, o.key);
    if (got && shared) indexes.push(...parseSharedIndex(got.bytes, o.key).views.values());
    // A settled part keeps no entries: its jobs are listed from its records (the demo's parts are
    // young, in Standard; one in a restore class is skipped, another index may serve).
    else if (got) indexes.push((await expandSettled(ctx, parseMonthIndex(got.bytes, o.key))).index);
    if (indexes.length >= maxIndexes) break;
  }
  let fallback: { shopId: string; jobId: string } | null = null;
  for (const idx of indexes) {
    for (const [jobId, entries] of Object.entries(idx.jobs)) {
      const last = entries[entries.length - 1];
      if (!last) continue;
      fallback ??= { shopId: idx.shop_id, jobId };
      if (last.deleted_at !== null && last.platform_data !== null) return { shopId: idx.shop_id, jobId };
    }
  }
  return fallback;
};

/**
 * What the product is for, in the run's own figures: many small hot objects become one part per
 * shop-month. The demo fleet is far too small for the bytes to shrink — say so rather than let the
 * first figure a newcomer sees suggest that archiving makes data bigger.
 */
export const whatItShows = (r: RunReport): string[] => {
  if (r.partsWritten === 0) return [];
  const perGroup = r.jobsArchived / r.partsWritten;
  const ratio = r.bytesIn > 0 ? r.bytesOut / r.bytesIn : 0;
  return [
    '',
    '== what this run shows',
    `objects:  ${r.objectsDeleted} small hot objects deleted, ${r.partsWritten} parts written (one per shop-month, each with its month index)`,
    `bytes:    at rest ${ratio.toFixed(2)}× the hot bytes. The demo's shop-months hold ~${perGroup.toFixed(0)} jobs: too few for`,
    '          compressing them together to outweigh a part header and an index. A 1,500-job month comes out',
    '          at 0.72× (docs/benchmarks.md); whether archiving pays in money for your workload: `jobarchive cost`.',
  ];
};

/** Sub-steps print their human output; with --json it goes to stderr and stdout gets one document. */
const stepOutput = (io: Output, json: boolean): Output => (json ? { ...io, out: (t) => io.err(t) } : io);

export const demoCommand = async (
  ctx: CliContext,
  opts: DemoOptions,
  io: Output,
  runDeps: RunDeps = {},
): Promise<{ result: DemoResult; exitCode: number }> => {
  const now = opts.now ?? ctx.now();
  const sub = stepOutput(io, opts.json);
  const heading = (t: string): void => {
    sub.out('');
    sub.out(`== ${t}`);
  };

  let seeded: SeedResult | null = null;
  if (await tableIsEmpty(ctx)) {
    heading(
      `seeding a demo fleet: ${DEMO_FLEET.shops} shops × ${DEMO_FLEET.jobsPerShop} jobs over ${DEMO_FLEET.months} months`,
    );
    seeded = await seedCommand(ctx, { ...DEMO_FLEET, now, concurrency: 8, json: false }, sub);
  } else {
    heading(`table ${ctx.table} already has jobs: not seeding (delete the data dir to start over)`);
  }

  heading(
    `archival run: now ${now.toISOString()}, older than ${DEMO_RUN.olderThanDays} days, grace ${DEMO_RUN.graceHours} h`,
  );
  const { outcome } = await runCommand(
    ctx,
    { input: { ...DEMO_RUN, now: now.toISOString() }, pollMs: 2000, json: false },
    sub,
    runDeps,
  );
  if (outcome.status !== 'SUCCEEDED') {
    const result: DemoResult = { seeded, run: outcome, lookup: null };
    if (opts.json) printJson(io, result);
    return { result, exitCode: EXIT_FAILURE };
  }

  if (isRunReport(outcome.output)) for (const l of whatItShows(outcome.output)) sub.out(l);

  const pick = await pickArchivedJob(ctx);
  let lookup: LookupResult | null = null;
  if (pick) {
    heading(`lookup of archived job ${pick.jobId} of ${pick.shopId}`);
    ({ result: lookup } = await lookupCommand(ctx, { ...pick, searchMonths: 24, json: false }, sub));
  } else {
    heading('no archived job to look up (nothing was old enough)');
  }
  const result: DemoResult = { seeded, run: outcome, lookup };
  if (opts.json) printJson(io, result);
  return { result, exitCode: EXIT_OK };
};
