/**
 * `jobarchive seed` and `lookup` in-process against the jest stack (DynamoDB Local + s3rver), each
 * suite on a fresh table and bucket: what seed prints is what the table holds, reruns are
 * reproducible, and a lookup of a hot job returns its row and the details the seed wrote.
 */
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { type CliContext, makeContext } from '../../infra/cli/context';
import { shopIdFor } from '../../infra/cli/fleet';
import { type LookupResult, lookupCommand } from '../../infra/cli/lookup';
import { memoryOutput } from '../../infra/cli/output';
import { type SeedResult, seedCommand } from '../../infra/cli/seed';
import { parseConfig } from '../../shared/config';
import { jobPk } from '../../shared/jobs/schema';
import type { JobRow } from '../../shared/jobs/types';
import { freshBucket, freshTable, testDdb, testS3 } from '../support/local';

const NOW = new Date('2026-05-10T12:00:00.000Z');
const OPTS = { shops: 3, jobsPerShop: 4, months: 2, seed: 7, concurrency: 4, json: true } as const;

const ddb = testDdb();
const s3 = testS3();

const newContext = async (): Promise<CliContext> =>
  makeContext({
    ddb,
    s3,
    table: await freshTable(),
    bucket: await freshBucket(),
    cfg: parseConfig(process.env),
    now: () => NOW,
  });

const rowsOf = async (ctx: CliContext, shops: number): Promise<JobRow[]> => {
  const rows: JobRow[] = [];
  for (let s = 0; s < shops; s++) {
    const out = await ctx.ddb.send(
      new QueryCommand({
        TableName: ctx.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': jobPk(shopIdFor(s)) },
        ConsistentRead: true,
      }),
    );
    rows.push(...((out.Items ?? []) as JobRow[]));
  }
  return rows;
};

const byId = <T extends { jobId: string }>(list: T[]) =>
  [...list].sort((a, b) => a.jobId.localeCompare(b.jobId));

describe('jobarchive seed', () => {
  let ctx: CliContext;
  let seeded: SeedResult;

  beforeAll(async () => {
    ctx = await newContext();
    const io = memoryOutput();
    await seedCommand(ctx, OPTS, io);
    seeded = io.json<SeedResult>();
  });

  it('--json lists every job written, exactly the terminal rows now in the table', async () => {
    expect(seeded.seed).toBe(7);
    expect(seeded.now).toBe(NOW.toISOString());
    expect(seeded.jobs).toHaveLength(12);
    const rows = await rowsOf(ctx, OPTS.shops);
    expect(
      byId(
        rows.map((r) => ({
          shopId: r.pk.slice(5),
          jobId: r.job_id,
          completedAt: r.completed_at,
          status: r.job_status,
        })),
      ),
    ).toEqual(byId(seeded.jobs));
    for (const r of rows) {
      expect(['COMPLETED', 'FAILED', 'CONFLICT']).toContain(r.job_status);
      // The terminal write made the GSI sort key the completion time.
      expect(r.status_created_at).toBe(r.completed_at);
      expect(r.processed_items + r.failed_items + r.skipped_items + r.conflict_items).toBe(r.total_items);
    }
  });

  it('wrote hot objects attributed to their shop by metadata', async () => {
    const withDetails = seeded.jobs.find((j) => j.status === 'FAILED') ?? seeded.jobs[0];
    if (!withDetails) throw new Error('seeded nothing');
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: ctx.bucket, Prefix: `job-details/${withDetails.jobId}/` }),
    );
    const key = listed.Contents?.[0]?.Key;
    expect(key).toBeDefined();
    const head = await s3.send(new HeadObjectCommand({ Bucket: ctx.bucket, Key: key }));
    expect(head.Metadata).toMatchObject({ 'shop-id': withDetails.shopId, 'job-id': withDetails.jobId });
  });

  it('is reproducible: the same seed into another table prints the same jobs; a rerun skips them all', async () => {
    const other = await newContext();
    const io = memoryOutput();
    await seedCommand(other, OPTS, io);
    expect(io.json<SeedResult>()).toEqual(seeded);

    const again = memoryOutput();
    const r = await seedCommand(other, OPTS, again);
    expect(r.jobs).toEqual([]);
    expect(r.alreadyPresent).toBe(12);
    expect(await rowsOf(other, OPTS.shops)).toHaveLength(12);
  });

  it('prints a human summary without --json', async () => {
    const io = memoryOutput();
    await seedCommand(await newContext(), { ...OPTS, shops: 1, jobsPerShop: 2, json: false }, io);
    expect(io.stdout[0]).toMatch(
      /^seeded 2 jobs for 1 shops over 2 months into jobs-.* \(seed 7, now 2026-05-10T12:00:00.000Z\)$/,
    );
    expect(io.stdout.join('\n')).toMatch(/month\s+COMPLETED\s+FAILED\s+CONFLICT/);
    expect(io.stderr[io.stderr.length - 1]).toBe('seed: jobs 2/2 (100%)');
  });
});

describe('jobarchive lookup', () => {
  let ctx: CliContext;
  let seeded: SeedResult;

  beforeAll(async () => {
    ctx = await newContext();
    seeded = await seedCommand(ctx, { ...OPTS, json: false }, memoryOutput());
  });

  it('returns the row and the hot details, which account for every non-processed item', async () => {
    const rows = await rowsOf(ctx, OPTS.shops);
    const row = rows.find((r) => r.failed_items + r.skipped_items + r.conflict_items > 0);
    if (!row) throw new Error('no job with details seeded');
    const io = memoryOutput();
    const { result, exitCode } = await lookupCommand(
      ctx,
      { shopId: row.pk.slice(5), jobId: row.job_id, searchMonths: 24, json: true },
      io,
    );
    expect(exitCode).toBe(0);
    const printed = io.json<LookupResult>();
    expect(printed.found).toBe(true);
    expect(printed.row).toMatchObject({
      job_id: row.job_id,
      job_status: row.job_status,
      completed_at: row.completed_at,
    });
    expect(printed.lookup.detailsSource).toBe('hot');
    expect(printed.lookup.archivals).toEqual([]);
    const n = (m: Record<string, readonly unknown[]> | undefined) => Object.values(m ?? {}).flat().length;
    expect(n(printed.lookup.details?.failed)).toBe(row.failed_items);
    expect(n(printed.lookup.details?.skipped)).toBe(row.skipped_items);
    expect(n(printed.lookup.details?.conflict)).toBe(row.conflict_items);
    expect(printed.lookup.provenance).toMatchObject({ source: 'hot', parts: [] });
    expect(printed.lookup.provenance.requests).toBeGreaterThan(0);
    expect(result.lookup.hotKeys.length).toBeGreaterThan(0);
  });

  it('summarizes the details for humans: counts per reason and the first ids', async () => {
    const job = seeded.jobs.find((j) => j.status === 'FAILED');
    if (!job) throw new Error('no FAILED job seeded');
    const io = memoryOutput();
    await lookupCommand(ctx, { shopId: job.shopId, jobId: job.jobId, searchMonths: 24, json: false }, io);
    const text = io.stdout.join('\n');
    expect(text).toContain(`job ${job.jobId} of ${job.shopId}`);
    expect(text).toMatch(/^row: +FAILED, created .*, completed /m);
    expect(text).toMatch(/^ {2}failed: [1-9]\d* \(/m);
    expect(text).toMatch(/gid:\/\/shopify\/Product\/\d+/);
    expect(text).toMatch(/^provenance: source hot, 0 part\(s\), \d+ S3 requests/m);
  });

  it("words the row's TTL by the clock: expires while ahead, expired once past (DynamoDB removes it lazily)", async () => {
    const job = seeded.jobs[0];
    if (!job) throw new Error('nothing seeded');
    const ttlLine = async (now: Date): Promise<string | undefined> => {
      const io = memoryOutput();
      const at = makeContext({ ...ctx, cfg: ctx.cfg, now: () => now });
      await lookupCommand(at, { shopId: job.shopId, jobId: job.jobId, searchMonths: 24, json: false }, io);
      return io.stdout.find((l) => /row expire/.test(l));
    };
    expect(await ttlLine(NOW)).toMatch(/, row expires \d{4}-\d\d-\d\dT[^ ]+Z$/);
    expect(await ttlLine(new Date('2030-01-01T00:00:00Z'))).toMatch(
      /, row expired \d{4}-\d\d-\d\dT[^ ]+Z \(DynamoDB's TTL has not removed it yet\)$/,
    );
  });

  it('a job found nowhere is exit code 1', async () => {
    const io = memoryOutput();
    const { exitCode, result } = await lookupCommand(
      ctx,
      { shopId: shopIdFor(0), jobId: 'aaaaaaaaaaaaa', searchMonths: 3, json: false },
      io,
    );
    expect(exitCode).toBe(1);
    expect(result).toMatchObject({ found: false, row: null });
    expect(io.stderr.join('\n')).toContain('not found');
  });
});
