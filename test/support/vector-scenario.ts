import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { memoryOutput } from '../../infra/cli/output';
import { parseRedactOptions, redactCommand } from '../../infra/cli/redact';
import {
  INDEX_PREFIX,
  MONTH_INDEX_HEADERS,
  parseMonthIndex,
  parseMonthIndexKey,
  serializeMonthIndex,
  settlePart,
} from '../../shared/archive/format';
import { canonicalJson, type JsonValue, rawJsonNumber } from '../../shared/details/json';
import { JobDetailsReader } from '../../shared/reader';
import type { JobLookup } from '../../shared/reader/types';
import { listAll } from '../../shared/s3/objects';
import {
  type ArchiverEnv,
  cliContextFor,
  DAY,
  inMonth,
  retryJob,
  runMachine,
  type SeededJob,
  seedBigJob,
  seedTerminalJob,
} from './archiver-fixtures';

/**
 * The conformance scenario (docs/vectors/): a small bucket the real archiver wrote — an own part, a
 * shared part of two small shops, a job retried after archival (two archivals), a redacted part, a job
 * with no details, a job whose row expired before archival (archived by the orphan sweep) — and what
 * every reader must answer for it. test/vectors/generate.ts snapshots it into docs/vectors/;
 * test/integration/python-reader.test.ts runs it live for the cross-language check.
 */
export const OWN = 'vec-own.myshopify.com';
export const SMALL_A = 'vec-a.myshopify.com';
export const SMALL_B = 'vec-b.myshopify.com';
/** The document redacted from the own part. */
export const REDACTED_DOC = `${OWN}-0-doc-0a`;

export interface ScenarioJob {
  readonly shopId: string;
  readonly jobId: string;
  /** What it exercises. */
  readonly case: string;
}

export interface Scenario {
  readonly jobs: readonly ScenarioJob[];
  /** Documents whose search results the vectors pin. */
  readonly docs: ReadonlyArray<{ readonly shopId: string; readonly docId: string }>;
}

/** The settings the scenario runs under: shop-months below 8 KB of hot bytes share a part. */
export const SCENARIO_SETTINGS = { packBelowKb: 8 } as const;

const bigDocs = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `gid://shopify/Product/${7_086_727_600_000 + i * 7919}`);

export const runScenario = async (env: ArchiverEnv): Promise<Scenario> => {
  const at = (day: number, hour = 9) => inMonth(2, day, hour * 60);
  const big = await seedBigJob(env, OWN, at(3), bigDocs(2500));
  const retried = await seedTerminalJob(env, {
    shopId: OWN,
    completedAt: at(4),
    platformData: { indexer: { batch_size: 50, big: rawJsonNumber('9223372036854775807') } },
  });
  const a1 = await seedTerminalJob(env, { shopId: SMALL_A, completedAt: at(5), status: 'CONFLICT' });
  const a2 = await seedTerminalJob(env, {
    shopId: SMALL_A,
    completedAt: at(6),
    status: 'COMPLETED',
    withDetails: false,
    platformData: null,
  });
  const b1 = await seedTerminalJob(env, { shopId: SMALL_B, completedAt: at(5, 10) });
  const orphan = await seedTerminalJob(env, { shopId: SMALL_B, completedAt: at(7), platformData: { x: 1 } });
  await env.ddb.send(
    new DeleteCommand({ TableName: env.table, Key: { pk: `SHOP#${SMALL_B}`, sk: `JOB#${orphan.jobId}` } }),
  );
  const first = await runMachine(env, { input: { olderThanDays: 30, graceHours: 0 } });
  if (first.run.status !== 'SUCCEEDED') throw new Error(`scenario run 1: ${first.run.status}`);

  // Retried after archival, in the same month: archived again (a second, small part).
  await retryJob(env, retried, at(8));
  const second = await runMachine(env, { input: { olderThanDays: 30, graceHours: 0 } });
  if (second.run.status !== 'SUCCEEDED') throw new Error(`scenario run 2: ${second.run.status}`);

  // A document redacted: the own part that lists it is replaced by a copy without it.
  const redacted = await redactCommand(
    cliContextFor(env),
    parseRedactOptions({ shop: OWN, doc: REDACTED_DOC }),
    memoryOutput(),
  );
  if (redacted.exitCode !== 0) throw new Error('scenario redaction failed');

  // The orphan's row is gone; its objects, older than the jobs' TTL, are swept and archived.
  env.advance(120 * DAY);
  const third = await runMachine(env, { input: { olderThanDays: 30, graceHours: 0 } });
  if (third.run.status !== 'SUCCEEDED') throw new Error(`scenario run 3: ${third.run.status}`);

  // Retried once more, archived again with its hot copy kept (a long grace): a part with entries.
  await retryJob(env, retried, at(9), 'retry-2');
  const fourth = await runMachine(env, { input: { olderThanDays: 30, graceHours: 8760 } });
  if (fourth.run.status !== 'SUCCEEDED') throw new Error(`scenario run 4: ${fourth.run.status}`);
  // Every deleted own part settled (its entries leave the index for its block directory; once the
  // delete step settles parts itself this changes nothing): the orphan's month is an index with no
  // entries, the own month mixes settled parts and the undeleted part with entries.
  await settleOwnMonths(env);

  const job = (j: SeededJob, what: string): ScenarioJob => ({ shopId: j.shopId, jobId: j.jobId, case: what });
  return {
    jobs: [
      job(big, 'own part, 2,500 document ids, one redacted'),
      job(
        retried,
        'own parts, retried twice after archival: two archivals in settled parts, the third in a part with entries (hot copy kept: a mixed month), merged; platform data with a 64-bit integer',
      ),
      job(a1, 'shared part, conflict items'),
      job(a2, 'shared part, no details: reads as null'),
      job(b1, 'shared part, second shop'),
      job(
        orphan,
        'row expired before archival (orphan sweep): row null, whole meta in the record; its month settled, an index with no entries',
      ),
    ],
    docs: [
      { shopId: OWN, docId: `${OWN}-0-doc-0a` },
      { shopId: OWN, docId: bigDocs(2500)[1234] as string },
      { shopId: OWN, docId: `${retried.jobId}-r` },
      { shopId: SMALL_A, docId: `${SMALL_A}-0-doc-0` },
      { shopId: SMALL_B, docId: `${SMALL_B}-1-doc-1b` },
    ],
  };
};

/**
 * Settles the parts of every own month index that meet the condition (format settlePart: deleted, one
 * entry per record, no sources), as the delete step does. A part already settled is left as it is.
 */
const settleOwnMonths = async (env: ArchiverEnv): Promise<void> => {
  for await (const o of listAll(env.s3, env.bucket, INDEX_PREFIX)) {
    const at = parseMonthIndexKey(o.key);
    if (!at) continue;
    const got = await env.s3.send(new GetObjectCommand({ Bucket: env.bucket, Key: o.key }));
    const index = parseMonthIndex((await got.Body?.transformToByteArray()) ?? new Uint8Array(0), o.key);
    const settled = index.parts.reduce((i, p) => settlePart(i, p.name), index);
    if (settled === index) continue;
    await env.s3.send(
      new PutObjectCommand({
        Bucket: env.bucket,
        Key: o.key,
        Body: serializeMonthIndex(settled),
        ...MONTH_INDEX_HEADERS,
      }),
    );
  }
};

/**
 * What a lookup of the job must answer, language-neutral (docs/archive-format.md, "Reading a job"):
 * details (null: no details), platform data, the newest archival's row (null: expired before
 * archival), every archival, hot keys and where each part came from. Numbers keep their exact text.
 */
export const expectedLookup = (j: ScenarioJob, l: JobLookup): Record<string, unknown> => ({
  shop_id: j.shopId,
  job_id: j.jobId,
  details: l.details,
  platform_data: l.platformData,
  archived_row: l.archivedRow,
  archivals: l.archivals.map((a) => ({
    month: a.month,
    part_key: a.partKey,
    status: a.status,
    completed_at: a.entry.completed_at,
    committed_at: a.entry.committed_at,
    deleted_at: a.entry.deleted_at,
  })),
  hot_keys: l.hotKeys,
  details_source: l.detailsSource,
  platform_data_source: l.platformDataSource,
});

/** The comparable part of a lookup as canonical JSON (what the Python reader prints, less provenance). */
export const lookupJson = (v: Record<string, unknown>): string => {
  const { provenance: _p, ...rest } = v;
  return canonicalJson(rest as JsonValue);
};

export const lookupAll = async (reader: JobDetailsReader, s: Scenario) =>
  Promise.all(
    s.jobs.map(async (j) => ({
      job: j,
      expected: expectedLookup(j, await reader.lookup({ shopId: j.shopId, jobId: j.jobId })),
    })),
  );

export { JobDetailsReader };

/** What a search of each scenario document must answer: the archived jobs listing it, newest first. */
export const expectedSearch = async (reader: JobDetailsReader, s: Scenario) =>
  Promise.all(
    s.docs.map(async (d) => ({
      shop_id: d.shopId,
      doc_id: d.docId,
      jobs: (await reader.findDocument({ shopId: d.shopId, docId: d.docId })).jobs.map((j) => ({
        job_id: j.jobId,
        status: j.status,
        completed_at: j.completedAt,
        month: j.month,
        part_key: j.partKey,
        listings: j.listings,
      })),
    })),
  );
