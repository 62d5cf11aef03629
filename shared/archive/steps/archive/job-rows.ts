import { pause } from '../../../concurrency';
import { JobArchiveError } from '../../../errors';
import { ExactBatchGetCommand } from '../../../jobs/exact-commands';
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

const s = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/**
 * Rows of the given jobs of one shop (eventually consistent, see below); a job whose row is gone (TTL) is absent
 * from the map. Unprocessed keys are retried with backoff, then it throws (the group retries later).
 */
export const readJobRows = async (
  deps: StepDeps,
  shopId: string,
  jobIds: readonly string[],
): Promise<Map<string, JobRowSnapshot>> => {
  const out = new Map<string, JobRowSnapshot>();
  for (let i = 0; i < jobIds.length; i += BATCH) {
    let keys: Record<string, unknown>[] = jobIds
      .slice(i, i + BATCH)
      .map((id) => ({ pk: jobPk(shopId), sk: jobSk(id) }));
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
        out.set(sk.slice(4), {
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
      }
      keys = (res.UnprocessedKeys?.[deps.table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
    }
  }
  return out;
};
