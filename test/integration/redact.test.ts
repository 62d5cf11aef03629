import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { auditCommand, parseAuditOptions } from '../../infra/cli/audit';
import { auditExitCode } from '../../infra/cli/audit-model';
import { memoryOutput } from '../../infra/cli/output';
import { parseRedactOptions, redactCommand } from '../../infra/cli/redact';
import { parseSqlOptions, sqlCommand } from '../../infra/cli/sql';
import { synthesizedDefinition } from '../../infra/local/runner';
import { COLD_PREFIX, flattenPart, INDEX_PREFIX, partPlace } from '../../shared/archive/format';
import type { JobDetails } from '../../shared/details/payload';
import { ERASURE_PREFIX, getRequest, REQUESTS_PREFIX } from '../../shared/erasure/ledger';
import { JobDetailsReader } from '../../shared/reader/reader';
import { redactDetails } from '../../shared/redact/redact-details';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  daysAgo,
  inMonth,
  listKeys,
  partLines,
  runLocal,
  runMachine,
} from '../support/archiver-fixtures';
import { bucketContents, indexedFilters, type Seeded, seedDocJob } from '../support/redact-fixtures';

/**
 * `jobarchive redact` on the embedded stack: jobs archived by the synthesized state machine plus a
 * job still hot, all listing one customer's document id; another shop lists the same id. After the
 * redaction the id occurs in no byte of the bucket outside that other shop (every object read,
 * gunzipped when gzip), no filter matches it, every job's details are what they were less the
 * document (plus the note), and the other shop's objects are byte for byte what they were.
 */
jest.setTimeout(240_000);

const SHOP = 'shop-r';
const OTHER = 'shop-o';
const DOC = 'gid://shopify/Customer/7301';

let env: ArchiverEnv;
let jobs: Seeded[] = [];
const before = new Map<string, unknown>();
let otherObjects = new Map<string, Buffer>();
let sqlBefore: unknown[] = [];

/** The local SQL engine's view of the shop: its archived jobs' listing counts, and the document's rows. */
const sqlView = async () => {
  const q = async (stmt: string, ...params: string[]) =>
    (
      await sqlCommand(
        cliContextFor(env),
        parseSqlOptions({ _: [stmt, ...params], json: true }),
        memoryOutput(),
      )
    )?.rows;
  return [
    await q('SELECT job_id, failed, skipped, conflict FROM jobs WHERE shop_id = ? ORDER BY job_id', SHOP),
    await q('SELECT COUNT(*) AS n FROM job_documents WHERE shop_id = ? AND doc_id = ?', SHOP, DOC),
  ];
};

const reader = () => new JobDetailsReader(env.s3, env.bucket);
const lookup = async (j: Seeded) => {
  const q = { shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt };
  const r = await reader().readAllDetails(q);
  return { details: r.details, platformData: (await reader().readPlatformData(q)).data };
};

beforeAll(async () => {
  env = await archiverEnv();
  const m2 = (d: number) => inMonth(2, d);
  jobs = [
    await seedDocJob(env, SHOP, m2(3), [
      { failed: { timeout: [DOC, 'p-1'] } },
      { skipped: { unchanged: ['p-2'] } },
    ]),
    await seedDocJob(env, SHOP, m2(4), [
      {
        conflict: { version: [{ doc_id: DOC, existing_version: 3, incoming_version: 2 }] },
        failed: { timeout: ['p-3'] },
      },
    ]),
    await seedDocJob(env, SHOP, m2(5), [{ failed: { timeout: ['p-4'] } }]),
    await seedDocJob(env, SHOP, inMonth(3, 6), [{ failed: { invalid: [DOC] } }]),
    await seedDocJob(env, OTHER, m2(3), [{ failed: { timeout: [DOC, 'o-1'] } }]),
  ];
  const r = await runMachine(env);
  expect(r.run.status).toBe('SUCCEEDED');
  // Completed yesterday: still hot, found through the shop's rows.
  jobs.push(await seedDocJob(env, SHOP, daysAgo(1), [{ failed: { timeout: [DOC, 'h-1'] } }]));
  for (const j of jobs) before.set(j.jobId, await lookup(j));
  const all = await bucketContents(env);
  expect([...all.keys()].some((k) => k.startsWith(`${COLD_PREFIX}${SHOP}/`))).toBe(true);
  sqlBefore = await sqlView();
  otherObjects = new Map([...all].filter(([, v]) => v.shop === OTHER).map(([k, v]) => [k, v.raw]));
  expect(otherObjects.size).toBeGreaterThan(1);
});

test('after redact the id is in no byte of the shop; details unchanged less the document; other shop untouched', async () => {
  const ctx = cliContextFor(env);
  const io = memoryOutput();
  const { exitCode, results } = await redactCommand(
    ctx,
    parseRedactOptions({ shop: SHOP, doc: DOC, 'request-id': 'webhook-1' }),
    io,
  );
  expect(exitCode).toBe(0);
  const report = results[0]?.report;
  expect(report).toMatchObject({ complete: true, pending: [], hot: { objectsRewritten: 1, listings: 1 } });
  expect(report?.archive.listings).toBe(3);
  expect(report?.archive.partsRewritten.length).toBe(2); // one part per month
  expect(io.stdout.join('\n')).toMatch(/complete/);

  // No byte (gunzipped) of any object outside the other shop names the document; filters miss it.
  const after = await bucketContents(env);
  for (const [key, v] of after) {
    if (v.shop === OTHER) continue;
    expect({ key, has: v.text.includes(DOC) || v.raw.includes(DOC) }).toEqual({ key, has: false });
  }
  const filters = await indexedFilters(env, SHOP, DOC);
  expect(filters.length).toBe(2);
  // Each part's filters (its last member; none when it lists no document) match it nowhere.
  for (const f of filters) expect(f).toMatchObject({ matches: [] });
  expect(filters.some((f) => f.filtered)).toBe(true);
  expect((await indexedFilters(env, OTHER, DOC)).map((f) => f.matches.length)).toEqual([1]);
  // The other shop's objects are byte for byte what they were, and nothing of it was added or removed.
  const otherAfter = [...after].filter(([, v]) => v.shop === OTHER);
  expect(otherAfter.map(([k]) => k).sort()).toEqual([...otherObjects.keys()].sort());
  for (const [k, v] of otherAfter) expect(v.raw.equals(otherObjects.get(k) as Buffer)).toBe(true);

  // Every job reads as before less the document (plus the note); the others exactly as before.
  const at = report?.at as string;
  for (const j of jobs) {
    const was = before.get(j.jobId) as { details: JobDetails; platformData: unknown };
    expect(was.platformData).toEqual({ indexer: { v: 1 } });
    const now = await lookup(j);
    const expected = j.shopId === SHOP ? redactDetails(was.details, DOC, at).details : was.details;
    expect(now).toEqual({ details: expected, platformData: was.platformData });
  }

  // The ledger: complete, with a receipt of counts, the document id dropped.
  const req = await getRequest(env, 'webhook-1');
  expect(req?.request).toMatchObject({
    state: 'complete',
    kind: 'redact-doc',
    receipt: {
      hotObjectsRewritten: 1,
      archivedListingsRemoved: 3,
      partsRewritten: 2,
      partsPendingRestore: 0,
    },
  });
  expect(req?.request.docId).toBeUndefined();

  // The parts flatten (SQL, search) with the listings gone, and the archive audits clean.
  for (const key of [...after.keys()].filter((k) => k.startsWith(`${COLD_PREFIX}${SHOP}/`))) {
    const place = partPlace(key);
    if (!place) continue;
    const flat = flattenPart(await partLines(env, key), place, key);
    expect(flat.documents.filter((d) => d.doc_id === DOC)).toEqual([]);
    expect(flat.jobs.length).toBeGreaterThan(0);
  }
  // SQL reads the redacted parts: each job's listings less the document's, no row of the document.
  const [jobsNow, docNow] = await sqlView();
  const [jobsWas, docWas] = sqlBefore as [Array<Record<string, unknown>>, unknown];
  expect(docWas).toEqual([{ n: 3 }]);
  expect(jobsWas).toHaveLength(4);
  expect(docNow).toEqual([{ n: 0 }]);
  const less: Record<string, [string, number]> = {
    [jobs[0]?.jobId as string]: ['failed', 1],
    [jobs[1]?.jobId as string]: ['conflict', 1],
    [jobs[3]?.jobId as string]: ['failed', 1],
  };
  expect(jobsNow).toEqual(
    jobsWas.map((r) => {
      const d = less[r.job_id as string];
      return d ? { ...r, [d[0]]: (r[d[0]] as number) - d[1] } : r;
    }),
  );
  const found = await reader().findDocument({ shopId: SHOP, docId: DOC }, { ddb: env.ddb, table: env.table });
  expect(found.jobs).toEqual([]);
  const audit = await auditCommand(ctx, parseAuditOptions({ deep: true }), memoryOutput());
  expect(auditExitCode(audit)).toBe(0);
  expect([...after.keys()].filter((k) => k.startsWith(INDEX_PREFIX) && k.includes('/redact/'))).toEqual([]);
  expect([...after.keys()].some((k) => k.startsWith(REQUESTS_PREFIX))).toBe(true);
});

test('a rerun finds nothing and changes no object', async () => {
  const etags = async () =>
    Promise.all(
      (await listKeys(env.s3, env.bucket, '')).map(async (k) => [
        k,
        (await env.s3.send(new HeadObjectCommand({ Bucket: env.bucket, Key: k }))).ETag,
      ]),
    );
  const was = (await etags()).filter(([k]) => !String(k).startsWith(ERASURE_PREFIX));
  const { exitCode, results } = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop: SHOP, doc: DOC }),
    memoryOutput(),
  );
  expect(exitCode).toBe(0);
  expect(results[0]?.report).toMatchObject({
    complete: true,
    hot: { objectsRewritten: 0, listings: 0 },
    archive: { listings: 0, partsRewritten: [] },
  });
  expect((await etags()).filter(([k]) => !String(k).startsWith(ERASURE_PREFIX))).toEqual(was);
});

test('the deployed state machine redacts from an input {"redact": …} (synthesized definition, real handler)', async () => {
  const doc = 'gid://shopify/Order/55';
  const job = await seedDocJob(env, SHOP, daysAgo(2), [{ failed: { timeout: [doc, 'keep'] } }]);
  const r = await runLocal(env, {
    definition: synthesizedDefinition(),
    input: { redact: { shopId: SHOP, docId: doc, requestId: 'sm-1' } },
    executionName: 'redact-sm-1',
  });
  expect(r.status).toBe('SUCCEEDED');
  expect(r.taskInvocations).toMatchObject({ Redact: 1, Plan: 0 });
  expect(r.output).toEqual({
    requests: [
      expect.objectContaining({ requestId: 'sm-1', shopId: SHOP, complete: true, hotListingsRemoved: 1 }),
    ],
    pending: 0,
  });
  // The task's output (kept in the execution history) never names the document.
  expect(JSON.stringify(r.output)).not.toContain(doc);
  const bad = await runLocal(env, {
    definition: synthesizedDefinition(),
    input: { redact: { shopId: SHOP } },
    executionName: 'redact-sm-2',
  });
  expect(bad.status).toBe('FAILED');
  expect((await getRequest(env, 'sm-1'))?.request.state).toBe('complete');
  const { details } = await reader().readAllDetails({
    shopId: SHOP,
    jobId: job.jobId,
    completedAt: job.completedAt,
  });
  expect(details?.failed).toEqual({ timeout: ['keep'] });
});

test('bad input is a typed error before any write', () => {
  expect(() => parseRedactOptions({ shop: SHOP })).toThrow(/--doc/);
  expect(() => parseRedactOptions({ shop: '../x', doc: DOC })).toThrow(/shop/);
  expect(() => parseRedactOptions({ pending: true, shop: SHOP })).toThrow(/--pending/);
  expect(() => parseRedactOptions({ shop: SHOP, doc: DOC, 'request-id': 'a/b' })).toThrow(/request id/);
});
