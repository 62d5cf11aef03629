import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RAW_TABLES } from '../../infra/construct/archive-sql';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { LocalSqlEngine } from '../../infra/local/sql-engine';
import { COLD_PREFIX, type PartRecord, SHARED } from '../../shared/archive/format';
import { DOCUMENTED_QUERIES, SQL_VIEWS } from '../../shared/sql/queries';
import { useOutdirs } from '../infra/template-helpers';
import {
  type ArchiverEnv,
  archiverEnv,
  inMonth,
  listKeys,
  monthOfDate,
  partLines,
  runMachine,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import { emulatedAthena } from '../support/athena-emulation';

/**
 * The SQL the construct deploys for Athena (its Glue tables and views, read from the synthesized
 * template) answers what the local engine answers, on a bucket the synthesized state machine filled
 * with packed (shared-part) and own shop-months: every row of every view, and every documented
 * query for every shop. Athena is emulated on DuckDB (test/support/athena-emulation.ts).
 */
jest.setTimeout(240_000);

const outdir = useOutdirs();
const A = inMonth(3, 2);
const B = inMonth(2, 2);
const STATUSES = ['FAILED', 'CONFLICT', 'COMPLETED'] as const;

/** shop → [jobs in month A, jobs in month B, flushes a job]: big shop-months get parts of their own. */
const FLEET: Record<string, readonly [number, number, number]> = {
  'mixed.myshopify.com': [6, 1, 6],
  'pa.myshopify.com': [1, 2, 1],
  'pb.myshopify.com': [2, 0, 1],
  'own.myshopify.com': [0, 6, 6],
};

/** The shop-months with parts of their own (`shop month`); every other one is packed. */
const OWN = [`mixed.myshopify.com ${monthOfDate(A)}`, `own.myshopify.com ${monthOfDate(B)}`];
const isBig = (k: string): boolean => OWN.includes(k);

let env: ArchiverEnv;
let template: Template;
let local: LocalSqlEngine;
let athena: Awaited<ReturnType<typeof emulatedAthena>>;
const seeded: Array<SeededJob & { month: string; flushes: number }> = [];

/**
 * Flush details whose ids are numbered (offsets, JSON numbers, at rest), one below the first, one
 * beginning with `~` and one that reads as an integer (both stored with a `~` in front).
 */
const numberedDocs = (shopId: string, n: number) => (i: number) => {
  const base = 7086727600000 + n * 10_000 + i * 100;
  const ids = [base, base + 7, base - 3, base + 9_919].map((x) => `gid://shopify/Product/${x}`);
  return {
    failed: { timeout: [...ids, `~${shopId}-${i}`, `${n + 1}0${i}`] },
    skipped: { unchanged: [`p${n}-${i}`, `p${n}-${i + 10}`] },
  };
};

const sortRows = (rows: Record<string, unknown>[]) =>
  [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

beforeAll(async () => {
  env = await archiverEnv({ packBelowKb: 128 });
  let n = 0;
  for (const [shopId, [inA, inB, flushes]] of Object.entries(FLEET))
    for (const [at, count] of [
      [A, inA],
      [B, inB],
    ] as const)
      for (let i = 0; i < count; i++) {
        const status = STATUSES[n++ % STATUSES.length];
        const job = await seedTerminalJob(env, {
          shopId,
          completedAt: new Date(at.getTime() + n * 60_000),
          status,
          flushes,
          // Every other FAILED job lists numbered ids, stored as offsets from the list's first
          // (docs/archive-format.md, "Document lists"): the views must restore them.
          ...(status === 'FAILED' && n % 2 === 0 ? { details: numberedDocs(shopId, n) } : {}),
        });
        seeded.push({ ...job, month: monthOfDate(at), flushes });
      }
  // Pack below a threshold between the small and the big shop-months' hot bytes (measured).
  const bytes = new Map<string, number>();
  for (const j of seeded) {
    const sizes = await env.s3.send(
      new ListObjectsV2Command({ Bucket: env.bucket, Prefix: `job-details/${j.jobId}/` }),
    );
    const k = `${j.shopId} ${j.month}`;
    bytes.set(k, (bytes.get(k) ?? 0) + (sizes.Contents ?? []).reduce((s, o) => s + (o.Size ?? 0), 0));
  }
  const smallMax = Math.max(...[...bytes].filter(([k]) => !isBig(k)).map(([, b]) => b));
  const bigMin = Math.min(...[...bytes].filter(([k]) => isBig(k)).map(([, b]) => b));
  expect(smallMax).toBeLessThan(bigMin);
  env.deps = env.withDeps({ settings: { packBelowKb: (smallMax + bigMin) / 2 / 1024 } });
  const run = await runMachine(env);
  expect(run.run.status).toBe('SUCCEEDED');
  expect(run.report).toMatchObject({ jobsArchived: seeded.length, groupsFailed: [] });

  const s = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() }), 'S');
  new JobDetailsArchive(s, 'A', { sql: { firstMonth: monthOfDate(inMonth(6, 1)) } });
  template = Template.fromStack(s);
  local = await LocalSqlEngine.load(env.s3, env.bucket);
  athena = await emulatedAthena(template, env.s3, env.bucket);
});

afterAll(() => {
  local?.close();
  athena?.close();
});

test('the bucket holds both layouts; shared job lines name their segment’s shop', async () => {
  const keys = await listKeys(env.s3, env.bucket, COLD_PREFIX);
  const shared = keys.filter((k) => k.startsWith(`${COLD_PREFIX}${SHARED}/`));
  expect(shared.length).toBe(2); // one per month
  expect(keys.filter((k) => !shared.includes(k)).map((k) => k.split('/').slice(1, 3).join(' '))).toEqual(OWN);
  for (const key of shared) {
    let header = '';
    for (const r of (await partLines(env, key)) as Array<PartRecord & { shop_id?: string }>) {
      if (r.type === 'part') header = r.shop_id;
      if (r.type === 'job') expect(r.shop_id).toBe(header);
    }
  }
  for (const key of keys.filter((k) => !shared.includes(k)))
    for (const r of (await partLines(env, key)) as unknown as Array<Record<string, unknown>>)
      if (r.type === 'job') expect(r).not.toHaveProperty('shop_id');
});

test('fleet views: every row of the local engine, attributed to its shop', async () => {
  for (const view of [SQL_VIEWS.fleetJobs, SQL_VIEWS.fleetDocuments]) {
    const want = (await local.query(`SELECT * FROM ${view}`)).rows;
    const got = await athena.query(`SELECT * FROM ${view}`);
    expect(sortRows(got)).toEqual(sortRows(want));
    if (view === SQL_VIEWS.fleetJobs) expect(got).toHaveLength(seeded.length);
    expect(got.some((r) => r.shop_id === SHARED || r.shop_id === null)).toBe(false);
  }
  const jobs = await athena.query(`SELECT shop_id, job_id FROM ${SQL_VIEWS.fleetJobs}`);
  expect(sortRows(jobs)).toEqual(sortRows(seeded.map((j) => ({ shop_id: j.shopId, job_id: j.jobId }))));
});

test('per-shop views: own parts and the shop’s shared lines, the same rows as the local engine', async () => {
  for (const shop of [...Object.keys(FLEET), SHARED, 'absent.myshopify.com']) {
    for (const view of [SQL_VIEWS.jobs, SQL_VIEWS.documents]) {
      const sql = `SELECT * FROM ${view} WHERE shop_id = ?`;
      const want = (await local.query(sql, [shop])).rows;
      expect(sortRows(await athena.query(sql, [shop]))).toEqual(sortRows(want));
      if (view === SQL_VIEWS.jobs)
        expect(want.map((r) => r.job_id).sort()).toEqual(
          seeded
            .filter((j) => j.shopId === shop)
            .map((j) => j.jobId)
            .sort(),
        );
    }
  }
  // A month filter prunes the shared table's partitions as it prunes the shop's own.
  const sql = `SELECT job_id FROM ${SQL_VIEWS.jobs} WHERE shop_id = ? AND month = ?`;
  const got = await athena.query(sql, ['mixed.myshopify.com', monthOfDate(B)]);
  expect(got.map((r) => r.job_id)).toEqual(
    seeded
      .filter((j) => j.shopId === 'mixed.myshopify.com' && j.month === monthOfDate(B))
      .map((j) => j.jobId),
  );
});

test('every documented query answers the same for every shop', async () => {
  const [from, to] = [monthOfDate(A), monthOfDate(B)];
  const docs = (
    await local.query(`SELECT DISTINCT shop_id, doc_id, kind, reason FROM ${SQL_VIEWS.documents}`)
  ).rows as Array<{ shop_id: string; doc_id: string; kind: string; reason: string }>;
  let compared = 0;
  for (const q of DOCUMENTED_QUERIES) {
    const names = q.params.map((p) => p.name).join(',');
    const params: string[][] =
      names === 'from month,to month'
        ? [[from, to]]
        : names === 'kind,reason,from month,to month'
          ? docs.map((d) => [d.kind, d.reason, from, to])
          : names === 'shop id,document id,from month,to month'
            ? docs.map((d) => [d.shop_id, d.doc_id, from, to])
            : names === 'shop id,from month,to month'
              ? Object.keys(FLEET).map((s) => [s, from, to])
              : [];
    expect(params.length).toBeGreaterThan(0); // a new query needs its parameters here
    for (const p of params) {
      const want = (await local.query(q.sql, p)).rows;
      expect(want.length).toBeGreaterThan(0);
      expect(await athena.query(q.sql, p)).toEqual(want);
      compared++;
    }
  }
  expect(compared).toBeGreaterThan(DOCUMENTED_QUERIES.length);
});

test('the raw tables are the construct’s: parts, parts_shared and parts_fleet', async () => {
  const count = async (sql: string, params: string[] = []) =>
    Number((await athena.query(`SELECT COUNT(*) AS n FROM ${sql}`, params))[0]?.n);
  // `shop_id = '_shared'` projects the shared prefix into `parts` too: the views leave it out.
  const sharedAsShop = await count(`${RAW_TABLES.parts} WHERE shop_id = ?`, [SHARED]);
  const shared = await count(RAW_TABLES.shared);
  expect(sharedAsShop).toBe(shared);
  expect(shared).toBeGreaterThan(0);
  let own = 0;
  for (const shop of Object.keys(FLEET)) own += await count(`${RAW_TABLES.parts} WHERE shop_id = ?`, [shop]);
  expect(await count(RAW_TABLES.fleet)).toBe(own + shared);
});

test('as on Athena, a query reading `parts` must say shop_id = … (injected projection), and only that', async () => {
  const refused = /CONSTRAINT_VIOLATION: For the injected projected partition column shop_id/;
  for (const sql of [
    `SELECT COUNT(*) FROM ${RAW_TABLES.parts}`,
    `SELECT job_id FROM ${SQL_VIEWS.jobs} WHERE month = '${monthOfDate(B)}'`,
    `SELECT doc_id FROM ${SQL_VIEWS.documents} WHERE shop_id <> 'x'`,
    `SELECT job_id FROM ${SQL_VIEWS.jobs} WHERE shop_id = 'pa.myshopify.com' OR shop_id LIKE 'p%'`,
  ])
    await expect(athena.query(sql)).rejects.toThrow(refused);
  // Neither the fleet views nor parts_shared read an injected column.
  expect(await athena.query(`SELECT COUNT(*) AS n FROM ${SQL_VIEWS.fleetJobs}`)).toEqual([
    { n: seeded.length },
  ]);
});
