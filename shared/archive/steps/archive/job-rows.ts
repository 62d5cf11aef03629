import { pause } from '../../../concurrency';
import { JobArchiveError } from '../../../errors';
import { ExactBatchGetCommand, ExactQueryCommand } from '../../../jobs/exact-commands';
import { jobPk, jobSk } from '../../../jobs/schema';
import { tryParseTimestamp } from '../../../time';
import type { StepDeps } from '../context';

/**
 * A job's row at archive time: the whole item (archived as is, see jobs/row-json.ts) and the few
 * fields the archive step decides with. `completed_at` is normalized (shared/time.ts; null when
 * absent or unparsable) so it compares with the planned value.
 */
export interface JobRowSnapshot {
  readonly job_status: string | null;
  readonly completed_at: string | null;
  readonly created_at: string | null;
  readonly started_at: string | null;
  readonly total_items: number | null;
  readonly processed_items: number | null;
  readonly failed_items: number | null;
  readonly skipped_items: number | null;
  readonly conflict_items: number | null;
  /** Every attribute, numbers exact (jobs/exact-commands.ts). */
  readonly item: Readonly<Record<string, unknown>>;
}

/** BatchGetItem takes at most 100 keys. */
const BATCH = 100;
const ATTEMPTS = 6;
/** Read units of an eventually consistent read of one 4 KB unit: BatchGetItem's price for a row up to 4 KB
 * (and for a missing one: each key is billed as a GetItem, at least one unit). */
const UNIT = 0.5;
/**
 * The Query's allowance over what BatchGetItem would cost, as a share of BatchGetItem's minimum for the
 * group (0.5 × n): the worst case (see readJobRows) is at most this much above today's cost.
 */
export const QUERY_SLACK = 0.2;

const s = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

const snapshot = (item: Record<string, unknown>): JobRowSnapshot => ({
  job_status: s(item.job_status),
  completed_at: tryParseTimestamp(item.completed_at)?.iso ?? null,
  created_at: s(item.created_at),
  started_at: s(item.started_at),
  total_items: n(item.total_items),
  processed_items: n(item.processed_items),
  failed_items: n(item.failed_items),
  skipped_items: n(item.skipped_items),
  conflict_items: n(item.conflict_items),
  item,
});

/** DynamoDB orders string sort keys by their UTF-8 bytes (not JavaScript's UTF-16 order). */
const byBytes = (a: string, b: string): number =>
  Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * Rows of the given jobs of one shop (eventually consistent, see below); a job whose row is gone (TTL) is absent
 * from the map, and only the given jobs are in it. Unprocessed keys are retried with backoff, then it throws (the
 * group retries later).
 *
 * Which read: the shop's rows live in one partition (`pk = SHOP#{shop}`, shared/jobs/schema.ts) until their TTL,
 * a few months of jobs. BatchGetItem bills each key 0.5 read units, whatever the row's size (4 KB minimum); a
 * Query bills 0.5 per 4 KB of ALL the rows it reads, wanted or not. So a Query over `sk BETWEEN` the smallest and
 * the largest wanted key (job ids are random: usually the whole partition) is cheaper when the partition holds
 * mostly the group's rows and they are small, and dearer when the group is a few rows in a big partition. The
 * choice is made from what DynamoDB reports: the Query runs in pages (ReturnConsumedCapacity), and each page may
 * spend only the credit earned so far — 0.5 per wanted row its pages found (what BatchGetItem would have billed
 * at least for it), less the units spent — plus a fixed slack σ = QUERY_SLACK × 0.5 × n. Its Limit is
 * (credit + σ) / 0.5 rows; when that is under one row, the keys the Query has not reached go to BatchGetItem.
 *
 * Bound: a page of L rows of at most 4 KB each costs at most 0.5 × L ≤ credit + σ, so after any page the Query has
 * spent at most 0.5 × (wanted rows found) + σ; the rest costs BatchGetItem's own price. In all: at most today's
 * cost + σ = (1 + QUERY_SLACK) × today's cost at worst. A row over 4 KB counts as one row in the Limit but bills
 * ⌈size / 4 KB⌉ units: such rows can push a page past its credit (a wanted one costs BatchGetItem as much).
 */
export const readJobRows = async (
  deps: StepDeps,
  shopId: string,
  jobIds: readonly string[],
): Promise<Map<string, JobRowSnapshot>> => {
  const out = new Map<string, JobRowSnapshot>();
  const wanted = [...new Set(jobIds)].map(jobSk).sort(byBytes);
  const want = new Set(wanted);
  const slack = QUERY_SLACK * UNIT * wanted.length;
  let covered = 0;
  let found = 0;
  let spent = 0;
  let start: Record<string, unknown> | undefined;
  for (;;) {
    const limit = Math.floor((UNIT * found - spent + slack) / UNIT);
    if (covered >= wanted.length || limit < 1) break;
    const res = await deps.ddb.send(
      new ExactQueryCommand({
        TableName: deps.table,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: {
          ':pk': jobPk(shopId),
          ':lo': wanted[0],
          ':hi': wanted[wanted.length - 1],
        },
        // Eventually consistent, as the BatchGetItem below (its comment says why that is safe).
        ConsistentRead: false,
        Limit: limit,
        ReturnConsumedCapacity: 'TOTAL',
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    // No figure, no credit: the rest goes to BatchGetItem.
    spent += res.ConsumedCapacity?.CapacityUnits ?? Number.POSITIVE_INFINITY;
    for (const item of res.Items ?? []) {
      // Rows of other jobs of the shop are read (and billed) but not kept.
      const sk = s(item.sk);
      if (sk === null || !want.has(sk)) continue;
      out.set(sk.slice(4), snapshot(item));
      found++;
    }
    start = res.LastEvaluatedKey;
    const reached = s(start?.sk);
    if (!start) covered = wanted.length;
    else if (reached === null) break;
    else while (covered < wanted.length && byBytes(wanted[covered] ?? '', reached) <= 0) covered++;
  }
  await batchGetRows(deps, wanted.slice(covered), shopId, out);
  return out;
};

/** BatchGetItem of the given sort keys of one shop into `out`. */
const batchGetRows = async (
  deps: StepDeps,
  sks: readonly string[],
  shopId: string,
  out: Map<string, JobRowSnapshot>,
): Promise<void> => {
  for (let i = 0; i < sks.length; i += BATCH) {
    let keys: Record<string, unknown>[] = sks.slice(i, i + BATCH).map((sk) => ({ pk: jobPk(shopId), sk }));
    for (let attempt = 1; keys.length > 0; attempt++) {
      if (attempt > ATTEMPTS)
        throw new JobArchiveError(`BatchGetItem left ${keys.length} job rows unprocessed`);
      if (attempt > 1) await pause(Math.min(50 * 2 ** attempt, 2000));
      const res = await deps.ddb.send(
        new ExactBatchGetCommand({
          RequestItems: {
            [deps.table]: {
              Keys: keys,
              // The whole item: the archive keeps every attribute once the row expires. Eventually
              // consistent (half the read units): the row was terminal before the run's cutoff and
              // its grace period, and what the read decides is guarded by writes that check — the
              // index commit (If-Match) and delete (each hot object's ETag against the manifest) —
              // so a stale row can only archive a job again later, never lose or delete data.
              ConsistentRead: false,
            },
          },
        }),
      );
      for (const item of res.Responses?.[deps.table] ?? []) {
        const sk = s(item.sk);
        if (!sk?.startsWith('JOB#')) continue;
        out.set(sk.slice(4), snapshot(item));
      }
      keys = (res.UnprocessedKeys?.[deps.table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
    }
  }
};
