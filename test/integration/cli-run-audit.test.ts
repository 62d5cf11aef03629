import { auditCommand } from '../../infra/cli/audit';
import type { CliContext } from '../../infra/cli/context';
import { pickArchivedJob } from '../../infra/cli/demo';
import { lookupCommand } from '../../infra/cli/lookup';
import { memoryOutput } from '../../infra/cli/output';
import { runCommand } from '../../infra/cli/run';
import { type SeedResult, seedCommand } from '../../infra/cli/seed';
import type { RunReport } from '../../shared/archive/steps/types';
import { freshCliContext } from '../support/local';

const NOW = new Date('2026-05-20T12:00:00.000Z');
const CUTOFF = '2026-04-20T12:00:00.000Z'; // NOW − 30 days

let ctx: CliContext;
let seeded: SeedResult;
let report: RunReport;

beforeAll(async () => {
  ctx = await freshCliContext(() => NOW);
  seeded = await seedCommand(
    ctx,
    { shops: 4, jobsPerShop: 6, months: 3, seed: 11, concurrency: 4, json: false },
    memoryOutput(),
  );
  const io = memoryOutput();
  const { exitCode } = await runCommand(
    ctx,
    { input: { olderThanDays: 30, graceHours: 0, now: NOW.toISOString() }, pollMs: 1, json: true },
    io,
  );
  expect(exitCode).toBe(0);
  report = io.json<RunReport>();
});

it('--json prints the run report: every job completed before the cutoff archived and its hot objects deleted', () => {
  const old = seeded.jobs.filter((j) => j.completedAt < CUTOFF);
  expect(old.length).toBeGreaterThan(0);
  expect(report).toMatchObject({
    now: NOW.toISOString(),
    cutoff: CUTOFF,
    dryRun: false,
    jobsPlanned: old.length,
    jobsArchived: old.length,
    jobsQuarantinedCount: 0,
    groupsFailedCount: 0,
    jobsDeleted: old.length,
  });
  expect(report.partsWritten).toBeGreaterThan(0);
  expect(report.objectsDeleted).toBeGreaterThan(0);
});

it('audit afterwards: archived = the report, only recent jobs still hot, no orphans, no mismatches', async () => {
  const r = await auditCommand(ctx, { maxHeads: 100, concurrency: 4, json: false }, memoryOutput());
  expect(r.totals.archivedJobs).toBe(report.jobsArchived);
  expect(r.orphans).toEqual([]);
  expect(r.mismatches).toEqual([]);
  for (const g of r.groups) {
    // Archived months have nothing hot left; hot months are the ones after the cutoff month.
    if (g.archivedJobs > 0) expect(g.archivedDeleted).toBe(g.archivedJobs);
    if (g.hotJobs > 0) expect(g.month >= CUTOFF.slice(0, 7)).toBe(true);
  }
  const archivedByGroup = r.groups.reduce((n, g) => n + g.archivedDeleted, 0);
  expect(archivedByGroup).toBe(report.jobsDeleted);
});

it('lookup of an archived job reads it from the archive, with the part as provenance', async () => {
  const pick = await pickArchivedJob(ctx);
  if (!pick) throw new Error('nothing archived');
  const io = memoryOutput();
  const { result, exitCode } = await lookupCommand(ctx, { ...pick, searchMonths: 24, json: false }, io);
  expect(exitCode).toBe(0);
  expect(result.lookup.detailsSource).toBe('archive');
  expect(result.lookup.hotKeys).toEqual([]);
  expect(result.lookup.provenance.parts).toHaveLength(1);
  expect(result.lookup.provenance.parts[0]).toMatch(
    new RegExp(`^job-details-cold/${pick.shopId.replace(/\./g, '\\.')}/`),
  );
  expect(io.stdout.join('\n')).toMatch(/^details: +from archive$/m);
  expect(io.stdout.join('\n')).toMatch(/^provenance: source archive, 1 part\(s\)/m);
});

it('a dry run afterwards finds nothing left to archive', async () => {
  const io = memoryOutput();
  const { outcome } = await runCommand(
    ctx,
    {
      input: { olderThanDays: 30, graceHours: 0, now: NOW.toISOString(), dryRun: true },
      pollMs: 1,
      json: false,
    },
    io,
  );
  expect(outcome.status).toBe('SUCCEEDED');
  expect(io.stdout[0]).toMatch(/DRY RUN/);
  expect(io.stdout.join('\n')).toMatch(/jobs: +\d+ planned: 0 would be archived/);
});
