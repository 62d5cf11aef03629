import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  type HeadObjectCommandInput,
  ListObjectsV2Command,
  PutObjectCommand,
  RestoreObjectCommand,
  type RestoreObjectCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { makeContext } from '../../infra/cli/context';
import { memoryOutput } from '../../infra/cli/output';
import { parseRedactOptions, redactCommand } from '../../infra/cli/redact';
import { stepHandlers, synthesizedDefinition } from '../../infra/local/runner';
import {
  COLD_PREFIX,
  monthIndexKey,
  parseMonthIndex,
  parsePartKey,
  parseSharedIndex,
  sharedIndexKey,
} from '../../shared/archive/format';
import { parseConfig } from '../../shared/config';
import type { JobDetails } from '../../shared/details/payload';
import { getRequest } from '../../shared/erasure/ledger';
import { JobDetailsReader } from '../../shared/reader/reader';
import {
  JOURNAL_ROLLBACK_AFTER_MS,
  REDACT_CRASH_POINTS,
  type RedactCrashPoint,
} from '../../shared/redact/redact';
import { redactDetails } from '../../shared/redact/redact-details';
import {
  type ArchiverEnv,
  archiverEnv,
  cliContextFor,
  DAY,
  daysAgo,
  getBytes,
  inMonth,
  listKeys,
  runLocal,
  runMachine,
  sharedLineShops,
} from '../support/archiver-fixtures';
import { testS3 } from '../support/local';
import { bucketContents, indexedFilters, type Seeded, seedDocJob } from '../support/redact-fixtures';

/**
 * Redaction interrupted at each crash point (after the journal, after the new part, after the index
 * switch, after the old part's delete, after a hot rewrite) converges on a rerun: the document is in
 * no byte of the shop, no journal or unreferenced part is left, every job reads as before less the
 * document. Then a part in Glacier Flexible Retrieval: restore requested, pending, finished later,
 * the early deletion counted.
 */
jest.setTimeout(300_000);

const SHOP = 'shop-c';
const docOf = (p: string) => `gid://shopify/Customer/${p}`;
const definition = synthesizedDefinition();
const DOCS = REDACT_CRASH_POINTS.map(docOf);

let env: ArchiverEnv;
let jobs: Seeded[] = [];
const before = new Map<string, JobDetails>();

const details = async (j: Seeded) =>
  (
    await new JobDetailsReader(env.s3, env.bucket).readAllDetails({
      shopId: j.shopId,
      jobId: j.jobId,
      completedAt: j.completedAt,
    })
  ).details as JobDetails;

/** The details less every note (the notes' times depend on which run did the work). */
const unnoted = (d: JobDetails): JobDetails => {
  const { redacted: _r, ...rest } = d;
  return rest;
};

/** The shop's parts, each named by its month index with its filters; no journal, no sidecar left. */
const expectConsistent = async (shopId: string) => {
  const parts = (await listKeys(env.s3, env.bucket, `${COLD_PREFIX}${shopId}/`)).map((k) => parsePartKey(k));
  for (const p of parts) {
    if (!p) throw new Error('not a part key');
    const idx = parseMonthIndex(await getBytes(env.s3, env.bucket, monthIndexKey(shopId, p.month)), 'index');
    expect(idx.parts.map((x) => x.name)).toContain(p.partName);
    expect(idx.parts.find((x) => x.name === p.partName)?.filters).toBeDefined();
  }
  const keys = await listKeys(env.s3, env.bucket, `job-details-index/${shopId}/`);
  expect(keys.filter((k) => k.includes('/redact/'))).toEqual([]);
  expect(keys.filter((k) => k.endsWith('.filter'))).toEqual([]);
};

beforeAll(async () => {
  env = await archiverEnv();
  const all = (tag: string) => ({ failed: { timeout: [...DOCS, `${tag}-keep`] } });
  jobs = [
    await seedDocJob(env, SHOP, inMonth(2, 3), [all('a'), { skipped: { x: [DOCS[1] as string, 'a2'] } }]),
    await seedDocJob(env, SHOP, inMonth(2, 4), [{ failed: { timeout: ['b-keep'] } }]),
    await seedDocJob(env, SHOP, inMonth(3, 5), [all('c')]),
  ];
  expect((await runMachine(env)).run.status).toBe('SUCCEEDED');
  jobs.push(await seedDocJob(env, SHOP, daysAgo(1), [all('h1'), all('h2')])); // two hot objects
  for (const j of jobs) before.set(j.jobId, await details(j));
});

const crashed = (p: RedactCrashPoint) =>
  Object.assign(new Error(`injected crash at ${p}`), { name: 'Crash' });

test.each(REDACT_CRASH_POINTS.map((p) => [p]))('a crash at %s converges on rerun', async (point) => {
  const doc = docOf(point);
  const ctx = cliContextFor(env);
  const opts = parseRedactOptions({ shop: SHOP, doc, 'request-id': `crash-${point}` });
  let fired = false;
  await expect(
    redactCommand(ctx, opts, memoryOutput(), {
      crashPoint: (p) => {
        if (p !== point || fired) return;
        fired = true;
        throw crashed(p);
      },
    }),
  ).rejects.toThrow(/injected crash/);
  expect(fired).toBe(true);
  // A crash inside a part rewrite leaves its journal (and the old part) for the rerun.
  const journals = (await listKeys(env.s3, env.bucket, `job-details-index/${SHOP}/`)).filter((k) =>
    k.includes('/redact/'),
  );
  expect(journals).toHaveLength(point === 'hot-object-rewritten' ? 0 : 1);
  expect((await getRequest(env, `crash-${point}`))?.request.state).toBe('received');
  if (point === 'journal-written' || point === 'new-part-written') {
    // Uncommitted and young: it may be a redaction still running, so a rerun now leaves it (pending).
    const now = await redactCommand(ctx, opts, memoryOutput());
    expect(now.exitCode).toBe(5);
    expect(now.results[0]?.report.pending).toEqual([
      expect.objectContaining({ reason: 'rewrite-in-progress' }),
    ]);
    expect((await getRequest(env, `crash-${point}`))?.request.state).toBe('pending');
  }
  // A rerun past the journal's rollback age finishes or undoes it.
  const later = makeContext({
    ddb: env.ddb,
    s3: env.s3,
    table: env.table,
    bucket: env.bucket,
    cfg: parseConfig(process.env),
    now: () => new Date(Date.now() + JOURNAL_ROLLBACK_AFTER_MS + 60_000),
  });
  const { exitCode, results } = await redactCommand(later, opts, memoryOutput());
  expect(exitCode).toBe(0);
  const r = results[0]?.report;
  // Crashed after the switch: the rerun finishes that rewrite from its journal.
  if (point === 'index-switched' || point === 'old-part-deleted') expect(r?.archive.journalsResolved).toBe(1);
  if (point === 'journal-written' || point === 'new-part-written')
    expect(r?.archive.journalsResolved).toBe(1);
  expect((await getRequest(env, `crash-${point}`))?.request.state).toBe('complete');
  const contents = await bucketContents(env);
  for (const [key, v] of contents) expect({ key, has: v.text.includes(doc) }).toEqual({ key, has: false });
  for (const f of await indexedFilters(env, SHOP, doc)) expect(f.matches).toEqual([]);
  await expectConsistent(SHOP);
});

test('after every crash and rerun, each job reads as before less the documents', async () => {
  for (const j of jobs) {
    let expected = before.get(j.jobId) as JobDetails;
    for (const d of DOCS) expected = redactDetails(expected, d, 'x').details;
    const now = await details(j);
    expect(unnoted(now)).toEqual(unnoted(expected));
    // A job that listed any of the documents carries notes (one per run and object count); others none.
    expect((now.redacted ?? []).length > 0).toBe(expected.redacted !== undefined);
  }
});

type Stage = 'none' | 'ongoing' | 'done';

/** One job of `shop` (in month −2, on `day`) listing `doc` and one other id, archived by a run. */
const archivedDocJob = async (shop: string, doc: string, day: number) => {
  const job = await seedDocJob(env, shop, inMonth(2, day), [{ failed: { timeout: [doc, `${shop}-keep`] } }]);
  expect((await runMachine(env)).run.status).toBe('SUCCEEDED');
  return { job, was: await details(job) };
};

/** The CLI's context over another S3 client (the Glacier stand-in below). */
const cliOver = (s3: S3Client) =>
  makeContext({ ddb: env.ddb, s3, table: env.table, bucket: env.bucket, cfg: parseConfig(process.env) });

/** s3rver's client, with the parts `isPart` names in Glacier FR at `stage()` (see the Glacier test). */
const glacierS3 = (isPart: (key: string | undefined) => boolean, stage: () => Stage) => {
  const real = testS3();
  const client = testS3();
  const mock = mockClient(client);
  const restores: RestoreObjectCommandInput[] = [];
  const lastModified = new Date(Date.now() - 30 * DAY);
  mock.on(HeadObjectCommand).callsFake(async (input: HeadObjectCommandInput) => {
    const out = await real.send(new HeadObjectCommand(input));
    if (!isPart(input.Key) || out.ContentLength === undefined) return out;
    const restore = {
      none: undefined,
      ongoing: 'ongoing-request="true"',
      done: 'ongoing-request="false", expiry-date="Fri, 01 Jan 2027 00:00:00 GMT"',
    }[stage()];
    return {
      ...out,
      StorageClass: 'GLACIER',
      LastModified: lastModified,
      ...(restore ? { Restore: restore } : {}),
    };
  });
  mock.on(GetObjectCommand).callsFake(async (input) => {
    if (isPart(input.Key) && stage() !== 'done')
      throw Object.assign(new Error("The operation is not valid for the object's storage class"), {
        name: 'InvalidObjectState',
        $metadata: { httpStatusCode: 403 },
      });
    return real.send(new GetObjectCommand(input));
  });
  mock.on(RestoreObjectCommand).callsFake(async (input: RestoreObjectCommandInput) => {
    restores.push(input);
    return {};
  });
  mock.on(PutObjectCommand).callsFake((input) => real.send(new PutObjectCommand(input)));
  mock.on(ListObjectsV2Command).callsFake((input) => real.send(new ListObjectsV2Command(input)));
  mock.on(DeleteObjectCommand).callsFake((input) => real.send(new DeleteObjectCommand(input)));
  return { client, restores };
};

/**
 * Glacier Flexible Retrieval: s3rver has no storage classes, restores or `Restore` header, so
 * aws-sdk-client-mock supplies ONLY those — HeadObject answers StorageClass GLACIER and the Restore
 * header of each stage (none → ongoing → done), RestoreObject is recorded, a GET before the restore
 * is done fails with InvalidObjectState as S3's does. Every other call, and the bytes, are s3rver's.
 */
test('a part in Glacier: restore requested, pending (exit 5), finished on a later run, early deletion counted', async () => {
  const shop = 'shop-g';
  const doc = 'gid://shopify/Customer/900';
  const { job, was } = await archivedDocJob(shop, doc, 7);
  let stage: Stage = 'none';
  const isPart = (key: string | undefined) => key?.startsWith(`${COLD_PREFIX}${shop}/`) === true;
  const { client, restores } = glacierS3(isPart, () => stage);
  const ctx = cliOver(client);
  const opts = parseRedactOptions({ shop, doc, 'request-id': 'glacier-1' });

  const first = memoryOutput();
  const r1 = await redactCommand(ctx, opts, first);
  expect(r1.exitCode).toBe(5);
  expect(r1.results[0]?.report.pending).toEqual([
    expect.objectContaining({ storageClass: 'GLACIER', reason: 'restore-requested' }),
  ]);
  expect(restores).toHaveLength(1);
  expect(restores[0]?.RestoreRequest?.GlacierJobParameters?.Tier).toBe(ctx.cfg.restoreTier);
  expect(first.stdout.join('\n')).toMatch(/pending: .* \(GLACIER\): restore requested/);
  expect((await getRequest(env, 'glacier-1'))?.request).toMatchObject({
    state: 'pending',
    pendingReason: 'restore',
    docId: doc,
  });

  stage = 'ongoing';
  const r2 = await redactCommand(ctx, parseRedactOptions({ pending: true }), memoryOutput());
  expect(r2.exitCode).toBe(5);
  expect(r2.results.find((x) => x.requestId === 'glacier-1')?.report.pending[0]?.reason).toBe(
    'restore-in-progress',
  );
  expect(restores).toHaveLength(1);

  stage = 'done';
  const out = memoryOutput();
  const r3 = await redactCommand(ctx, parseRedactOptions({ pending: true, json: true }), out);
  expect(r3.exitCode).toBe(0);
  const done = r3.results.find((x) => x.requestId === 'glacier-1')?.report;
  expect(done?.archive.listings).toBe(1);
  expect(done?.earlyDeletions).toEqual([
    expect.objectContaining({ storageClass: 'GLACIER', minDays: 90, chargedDays: expect.closeTo(60, 0) }),
  ]);
  const json = out.json<{ results: { requestId: string; earlyDeletionDollars: number }[] }>();
  expect(json.results.find((x) => x.requestId === 'glacier-1')?.earlyDeletionDollars).toBeGreaterThan(0);
  const req = (await getRequest(env, 'glacier-1'))?.request;
  expect(req).toMatchObject({ state: 'complete', receipt: { partsRewritten: 1, earlyDeletions: 1 } });
  expect(req?.docId).toBeUndefined();
  expect(unnoted(await details(job))).toEqual(unnoted(redactDetails(was, doc, 'x').details));
  for (const [key, v] of await bucketContents(env))
    expect({ key, has: v.text.includes(doc) }).toEqual({ key, has: false });
  await expectConsistent(shop);
});

describe('a shop-month packed into a shared part', () => {
  const P = 'pk-p';
  const OTHERS = ['pk-a', 'pk-z']; // segments before and after the asked shop's
  const packedDocs = ['new-part-written', 'index-switched', 'plain', 'glacier'].map((t) =>
    docOf(`packed-${t}`),
  );
  let packed: ArchiverEnv;
  let pJobs: Seeded[] = [];
  const oJobs: Seeded[] = [];
  const pBefore = new Map<string, JobDetails>();
  let oBefore: string[] = [];
  const read = (j: Seeded) =>
    new JobDetailsReader(packed.s3, packed.bucket).readAllDetails({
      shopId: j.shopId,
      jobId: j.jobId,
      completedAt: j.completedAt,
    });
  /** The other shops' answers (details and platform data): their provenance names the new part. */
  const othersRead = async () => {
    const out: string[] = [];
    for (const j of oJobs) {
      const q = { shopId: j.shopId, jobId: j.jobId, completedAt: j.completedAt };
      const r = new JobDetailsReader(packed.s3, packed.bucket);
      out.push(
        JSON.stringify([j.jobId, (await r.readAllDetails(q)).details, (await r.readPlatformData(q)).data]),
      );
    }
    return out;
  };
  const sharedParts = () => listKeys(packed.s3, packed.bucket, `${COLD_PREFIX}_shared/`);

  beforeAll(async () => {
    packed = await archiverEnv({ packBelowKb: 128 });
    pJobs = [
      await seedDocJob(packed, P, inMonth(2, 8), [{ failed: { timeout: [...packedDocs, 'p-keep'] } }]),
      await seedDocJob(packed, P, inMonth(2, 9), [
        { skipped: { x: [packedDocs[1] as string, 'p2'] } },
        { failed: { timeout: ['p3'] } },
      ]),
    ];
    for (const shop of OTHERS)
      oJobs.push(await seedDocJob(packed, shop, inMonth(2, 8), [{ failed: { timeout: [`${shop}-keep`] } }]));
    expect((await runMachine(packed)).run.status).toBe('SUCCEEDED');
    expect(await sharedParts()).toHaveLength(1);
    expect(await listKeys(packed.s3, packed.bucket, `${COLD_PREFIX}${P}/`)).toEqual([]);
    // Blocks are cut across shops (shared-index@2): the three small shops share the part's one block,
    // so redacting the asked shop re-deflates the others' lines with it and moves their entries.
    const shared = parseSharedIndex(
      await getBytes(packed.s3, packed.bucket, sharedIndexKey(inMonth(2, 8).toISOString().slice(0, 7))),
      'shared',
    );
    const part = shared.parts[0];
    // One block of every shop's lines, then the part's filters member (every shop's filters).
    const data = (part?.size ?? 0) - (part?.filters_bytes ?? 0);
    expect(part?.filters_bytes).toBeGreaterThan(0);
    expect(part?.blocks).toEqual([data]);
    for (const shop of ['pk-a', P, 'pk-z']) expect(part?.segments[shop]).toEqual([0, data]);
    for (const j of pJobs) pBefore.set(j.jobId, (await read(j)).details as JobDetails);
    oBefore = await othersRead();
  });

  /** The document in no byte; one shared part, no journal; the shops read as before (less `docs`). */
  const expectRedacted = async (doc: string, docs: readonly string[]) => {
    for (const [key, v] of await bucketContents(packed))
      expect({ key, has: v.text.includes(doc) }).toEqual({ key, has: false });
    expect(await sharedParts()).toHaveLength(1);
    // The rewritten lines keep the shop they name (SQL on Athena attributes them by it).
    expect(
      Object.fromEntries(Object.entries(await sharedLineShops(packed)).map(([k, v]) => [k, v.length])),
    ).toEqual({ [P]: pJobs.length, 'pk-a': 1, 'pk-z': 1 });
    const keys = await listKeys(packed.s3, packed.bucket, `job-details-index/${P}/`);
    expect(keys.filter((k) => k.includes('/redact/'))).toEqual([]);
    for (const j of pJobs) {
      let expected = pBefore.get(j.jobId) as JobDetails;
      for (const d of docs) expected = redactDetails(expected, d, 'x').details;
      const now = (await read(j)).details as JobDetails;
      expect(unnoted(now)).toEqual(unnoted(expected));
      expect(now.redacted !== undefined).toBe(expected.redacted !== undefined);
    }
    expect(await othersRead()).toEqual(oBefore);
  };

  test.each([['new-part-written' as const], ['index-switched' as const]])(
    'a crash at %s converges on rerun',
    async (point) => {
      const doc = docOf(`packed-${point}`);
      const ctx = cliContextFor(packed);
      const opts = parseRedactOptions({ shop: P, doc, 'request-id': `packed-${point}` });
      await expect(
        redactCommand(ctx, opts, memoryOutput(), {
          crashPoint: (p) => {
            if (p === point) throw crashed(p);
          },
        }),
      ).rejects.toThrow(/injected crash/);
      const journals = (await listKeys(packed.s3, packed.bucket, `job-details-index/${P}/`)).filter((k) =>
        k.includes('/redact/'),
      );
      expect(journals).toHaveLength(1);
      expect(await sharedParts()).toHaveLength(2); // the old part is kept until the switch is finished
      if (point === 'new-part-written') {
        const now = await redactCommand(ctx, opts, memoryOutput());
        expect(now.exitCode).toBe(5);
        expect(now.results[0]?.report.pending).toEqual([
          expect.objectContaining({ reason: 'rewrite-in-progress' }),
        ]);
      }
      const later = makeContext({
        ddb: packed.ddb,
        s3: packed.s3,
        table: packed.table,
        bucket: packed.bucket,
        cfg: parseConfig(process.env),
        now: () => new Date(Date.now() + JOURNAL_ROLLBACK_AFTER_MS + 60_000),
      });
      const { exitCode, results } = await redactCommand(later, opts, memoryOutput());
      expect(exitCode).toBe(0);
      expect(results[0]?.report.archive.journalsResolved).toBe(1);
      expect((await getRequest(packed, `packed-${point}`))?.request.state).toBe('complete');
      await expectRedacted(doc, packedDocs.slice(0, point === 'new-part-written' ? 1 : 2));
    },
  );

  test("redact rewrites only the shop's segment; the other shops read byte for byte as before", async () => {
    const doc = packedDocs[2] as string;
    const r = await redactCommand(
      cliContextFor(packed),
      parseRedactOptions({ shop: P, doc, 'request-id': 'packed-1' }),
      memoryOutput(),
    );
    expect(r.exitCode).toBe(0);
    const report = r.results[0]?.report;
    expect(report?.pending).toEqual([]);
    expect(report?.archive.partsRewritten).toEqual([
      expect.objectContaining({ old: expect.stringContaining('_shared/'), listings: 1 }),
    ]);
    expect((await getRequest(packed, 'packed-1'))?.request.state).toBe('complete');
    await expectRedacted(doc, packedDocs.slice(0, 3));
    // The other shops have nothing of the document: their redaction rewrites nothing.
    const other = await redactCommand(
      cliContextFor(packed),
      parseRedactOptions({ shop: OTHERS[0] as string, doc }),
      memoryOutput(),
    );
    expect(other.exitCode).toBe(0);
    expect(other.results[0]?.report.archive.partsRewritten).toEqual([]);
  });

  /** As the Glacier test below: aws-sdk-client-mock supplies only the storage class and restore. */
  test('a shared part in Glacier FR: restore requested and pending (exit 5), then redacted', async () => {
    const doc = docOf('packed-glacier');
    const month = inMonth(2, 8).toISOString().slice(0, 7);
    const prefix = `${COLD_PREFIX}_shared/${month}/`;
    expect(await listKeys(packed.s3, packed.bucket, prefix)).toHaveLength(1);
    let stage: Stage = 'none';
    const { client, restores } = glacierS3(
      (k) => k?.startsWith(prefix) === true,
      () => stage,
    );
    const ctx = makeContext({
      ddb: packed.ddb,
      s3: client,
      table: packed.table,
      bucket: packed.bucket,
      cfg: parseConfig(process.env),
    });
    const opts = parseRedactOptions({ shop: P, doc, 'request-id': 'packed-glacier' });
    const r1 = await redactCommand(ctx, opts, memoryOutput());
    expect(r1.exitCode).toBe(5);
    expect(r1.results[0]?.report.pending).toEqual([
      expect.objectContaining({ key: expect.stringContaining(prefix), reason: 'restore-requested' }),
    ]);
    expect(restores).toHaveLength(1);
    stage = 'done';
    const r2 = await redactCommand(ctx, parseRedactOptions({ pending: true }), memoryOutput());
    expect(r2.exitCode).toBe(0);
    expect(r2.results.find((x) => x.requestId === 'packed-glacier')?.report.earlyDeletions).toEqual([
      expect.objectContaining({ storageClass: 'GLACIER', minDays: 90 }),
    ]);
    expect((await getRequest(packed, 'packed-glacier'))?.request.state).toBe('complete');
    await expectRedacted(doc, packedDocs);
  });
});

/**
 * The schedule finishes what waits: a redaction pending a restore is in the watermark's erasure
 * summary, so the next scheduled run's Report says so and RunComplete sends it on to Redact
 * `{"pending": true}` (the same Glacier stand-in as above; the run is the synthesized machine's).
 */
test('a scheduled run resumes a redaction pending a restore, and the run after it has none to resume', async () => {
  const shop = 'shop-s';
  const doc = 'gid://shopify/Customer/901';
  const { job, was } = await archivedDocJob(shop, doc, 9);
  let stage: Stage = 'none';
  const { client } = glacierS3(
    (key) => key?.startsWith(`${COLD_PREFIX}${shop}/`) === true,
    () => stage,
  );
  const ctx = cliOver(client);
  const asked = await redactCommand(
    ctx,
    parseRedactOptions({ shop, doc, 'request-id': 'sched-1' }),
    memoryOutput(),
  );
  expect(asked.exitCode).toBe(5);

  stage = 'done';
  const deps = env.withDeps({ s3: client });
  const scheduled = () =>
    runLocal(env, { definition, input: {}, handlers: (sink) => stepHandlers(() => deps, sink) });
  const r = await scheduled();
  expect(r.status).toBe('SUCCEEDED');
  expect(r.output).toMatchObject({ erasurePendingRedactions: 1 });
  expect(r.taskInvocations).toMatchObject({ Plan: 1, Report: 1, RedactPending: 1, Redact: 0 });
  expect((await getRequest(env, 'sched-1'))?.request.state).toBe('complete');
  expect(unnoted(await details(job))).toEqual(unnoted(redactDetails(was, doc, 'x').details));
  for (const [key, v] of await bucketContents(env))
    expect({ key, has: v.text.includes(doc) }).toEqual({ key, has: false });

  const next = await scheduled();
  expect(next.output).toMatchObject({ erasurePendingRedactions: 0 });
  expect(next.taskInvocations.RedactPending).toBe(0);
});
