import type { S3Client } from '@aws-sdk/client-s3';
import { type ErasureSummary, isEmptySummary, parseSummary, sameSummary } from '../../../erasure/summary';
import { ConcurrentModificationError, CorruptObjectError } from '../../../errors';
import { validateJobId, validateShopId } from '../../../ids';
import { TERMINAL_STATUSES } from '../../../jobs/schema';
import { getJson, getObjectBytes, putConditional, putJson } from '../../../s3/objects';
import { checkTimestamp } from '../../../time';
import { runPrefix, WATERMARK_KEY } from '../../format';
import type { StepDeps } from '../context';
import { isObj } from '../shape';

/**
 * The plan watermark (docs/steady-state.md): per terminal status, the GSI sort key
 * (`status_created_at`) below which every row present when a run read it has been planned, and the
 * cutoff that run planned with. A run reads from `watermark − LATENESS_MS` and, in that window, plans
 * only rows not due at the previous cutoff (they cannot have been planned before). Jobs a run could
 * not finish (quarantined, in a failed group) go to `retry`, which the next run reads by key.
 */
export const WATERMARK_FORMAT = 'job-details-archive/watermark@1';

/**
 * How far below the watermark a run still reads. A row enters a terminal status's partition of the GSI
 * when it turns terminal, with the key its writer set: this library's `completed_at`, the Python
 * indexer's IN_PROGRESS time. Such a row lands below the watermark by up to its job's duration (plus
 * the key's offset slack); two days cover jobs running up to a day. At least KEY_CONDITION_SLACK_MS
 * (a day): rows in the band a run reads past its cutoff never hold the watermark down.
 */
export const LATENESS_MS = 2 * 24 * 3600 * 1000;

export interface RetryJob {
  readonly shopId: string;
  readonly jobId: string;
  /** Not planned before this time (ISO): carried over by the runs before it. */
  readonly notBefore?: string;
  /**
   * Waits for the grace period that began at this time (ISO; its group's commit or delete pass): due
   * once the PLANNING run's graceHours have passed since, so a run with another grace decides for itself.
   */
  readonly graceFrom?: string;
  /**
   * The committed completion a job waiting for its grace period was archived as (with `graceFrom`,
   * both or neither): the run after the grace plans it from these, without reading its row — the
   * archive step finds it committed and the delete step deletes only objects matching the committed
   * entry, reading the row only where the prefix changed (delete-sources.ts).
   */
  readonly completedAt?: string;
  readonly status?: string;
  /**
   * Planned once more after this, when what a failed or interrupted attempt left is collectable
   * (ABANDONED_AFTER_MS): a group's abandoned parts are collected only by an archive that finds its
   * index, which the first retry may be the one to write.
   */
  readonly revisit?: true;
}

export interface WatermarkDoc {
  readonly format: typeof WATERMARK_FORMAT;
  /** The cutoff every key below holds for (the smallest, when two runs' documents were merged). */
  readonly cutoff: string;
  /** Terminal status → GSI sort key. */
  readonly keys: Readonly<Record<string, string>>;
  readonly retry: readonly RetryJob[];
  readonly runId: string;
  /** When the last orphan sweep ran (plan/orphans.ts); absent: never. */
  readonly sweptAt?: string;
  /**
   * Forgotten shops and open erasure requests (shared/erasure/summary.ts): written by forget and the
   * ledger only; a run's write carries over the document's as it finds it. Absent: none.
   */
  readonly erasure?: ErasureSummary;
}

export interface ReadWatermark {
  readonly doc: WatermarkDoc | null;
  /** The ETag the next write is conditional on (null: write only if still absent). */
  readonly etag: string | null;
}

/** What a corrupt watermark's error names: the repair (docs/operations.md, "A corrupt watermark"). */
export const WATERMARK_REPAIR = 'repair: jobarchive repair-watermark (docs/operations.md)';

const parseDoc = (v: unknown): WatermarkDoc => {
  const bad = (why: string): never => {
    throw new CorruptObjectError(WATERMARK_KEY, `${why}; ${WATERMARK_REPAIR}`);
  };
  if (!isObj(v) || v.format !== WATERMARK_FORMAT) return bad(`not a ${WATERMARK_FORMAT} document`);
  if (typeof v.cutoff !== 'string' || Number.isNaN(Date.parse(v.cutoff))) return bad('cutoff is not a time');
  if (!isObj(v.keys)) return bad('keys is not an object');
  const keys: Record<string, string> = {};
  for (const [status, key] of Object.entries(v.keys)) {
    if (!(TERMINAL_STATUSES as readonly string[]).includes(status) || typeof key !== 'string' || key === '')
      return bad(`keys.${status} is not a terminal status's key`);
    keys[status] = key;
  }
  if (!Array.isArray(v.retry)) return bad('retry is not a list');
  const retry = v.retry.map((r): RetryJob => {
    if (!isObj(r)) return bad('a retry entry is not an object');
    const notBefore = r.notBefore;
    if (notBefore !== undefined && (typeof notBefore !== 'string' || Number.isNaN(Date.parse(notBefore))))
      return bad('a retry entry has a notBefore that is not a time');
    const graceFrom = r.graceFrom;
    if (graceFrom !== undefined && (typeof graceFrom !== 'string' || Number.isNaN(Date.parse(graceFrom))))
      return bad('a retry entry has a graceFrom that is not a time');
    const { completedAt, status } = r;
    if ((completedAt === undefined) !== (status === undefined))
      return bad('a retry entry has one of completedAt and status without the other');
    if (
      completedAt !== undefined &&
      (typeof completedAt !== 'string' || checkTimestamp(completedAt).time === null)
    )
      return bad('a retry entry has a completedAt that is not a time');
    if (status !== undefined && !(TERMINAL_STATUSES as readonly unknown[]).includes(status))
      return bad('a retry entry has a status that is not a terminal status');
    try {
      return {
        shopId: validateShopId(r.shopId),
        jobId: validateJobId(r.jobId),
        ...(notBefore !== undefined ? { notBefore } : {}),
        ...(graceFrom !== undefined ? { graceFrom } : {}),
        ...(typeof completedAt === 'string' && typeof status === 'string' ? { completedAt, status } : {}),
        ...(r.revisit === true ? { revisit: true as const } : {}),
      };
    } catch (err) {
      throw new CorruptObjectError(
        WATERMARK_KEY,
        `a retry entry: ${(err as Error).message}; ${WATERMARK_REPAIR}`,
      );
    }
  });
  const sweptAt =
    typeof v.sweptAt === 'string' && !Number.isNaN(Date.parse(v.sweptAt)) ? { sweptAt: v.sweptAt } : {};
  const erasure = parseSummary(v.erasure, bad);
  return {
    format: WATERMARK_FORMAT,
    cutoff: v.cutoff,
    keys,
    retry,
    runId: String(v.runId ?? ''),
    ...sweptAt,
    ...(isEmptySummary(erasure) ? {} : { erasure }),
  };
};

/**
 * Whether a run wrote the document: one that only carries the erasure summary (shared/erasure/
 * summary-store.ts, `runId` '') is no watermark to plan from.
 */
export const writtenByRun = (doc: WatermarkDoc | null): boolean => doc !== null && doc.runId !== '';

export const readWatermark = async (deps: {
  readonly s3: S3Client;
  readonly bucket: string;
}): Promise<ReadWatermark> => {
  const got = await getObjectBytes(deps.s3, deps.bucket, WATERMARK_KEY);
  if (!got) return { doc: null, etag: null };
  let v: unknown;
  try {
    v = JSON.parse(got.bytes.toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(WATERMARK_KEY, `watermark is not JSON; ${WATERMARK_REPAIR}`, { cause: err });
  }
  return { doc: parseDoc(v), etag: got.etag };
};

/** Where a status's Query starts: the watermark less the lateness window (null: from the beginning). */
export const windowStart = (
  from: { readonly keys: Readonly<Record<string, string>> } | null,
  status: string,
): string | null => {
  const key = from?.keys[status];
  if (key === undefined) return null;
  const t = Date.parse(key);
  // A key that is not a time (never written by this library) reads from the beginning.
  return Number.isNaN(t) ? null : new Date(t - LATENESS_MS).toISOString();
};

/** Whether a retry entry waits beyond `at` for a run with this grace period. */
export const retryNotDue = (r: RetryJob, at: Date, graceHours: number): boolean =>
  (r.notBefore !== undefined && r.notBefore > at.toISOString()) ||
  (r.graceFrom !== undefined && Date.parse(r.graceFrom) + graceHours * 3_600_000 > at.getTime());

const retryId = (r: RetryJob): string => `${r.shopId}\u0000${r.jobId}`;

/** One entry per job; of two, the later notBefore (a revisit must not come before its leftovers are collectable). */
export const uniqueRetry = (list: readonly RetryJob[]): RetryJob[] => {
  const seen = new Map<string, RetryJob>();
  for (const r of list) {
    const had = seen.get(retryId(r));
    const when = (x: RetryJob): string => x.notBefore ?? x.graceFrom ?? '';
    const later = !had || when(r) > when(had) ? r : had;
    const revisit = r.revisit === true || had?.revisit === true;
    seen.set(retryId(r), revisit ? { ...later, revisit: true } : later);
  }
  return [...seen.values()].sort((a, b) => (retryId(a) < retryId(b) ? -1 : 1));
};

/**
 * Two runs' documents as one: every key's claim ("planned below me at my cutoff") holds for the
 * larger key at the smaller cutoff; retries of both are kept. `a` is the document as stored now: its
 * erasure summary is the one kept (runs never change it). A stored document no run wrote yet claims
 * nothing: `b`'s keys and cutoff stand.
 */
export const mergeWatermarks = (a: WatermarkDoc, b: WatermarkDoc, runId: string): WatermarkDoc => {
  const erasure = a.erasure ? { erasure: a.erasure } : {};
  if (!writtenByRun(a)) {
    const { erasure: _b, ...rest } = b;
    return { ...rest, retry: uniqueRetry([...a.retry, ...b.retry]), runId, ...erasure };
  }
  const keys: Record<string, string> = {};
  for (const status of TERMINAL_STATUSES) {
    const x = a.keys[status];
    const y = b.keys[status];
    // A status one document lacks was read from the beginning by that run: the other's key holds.
    const k = x === undefined ? y : y === undefined ? x : [x, y].sort()[1];
    if (k !== undefined) keys[status] = k;
  }
  return {
    format: WATERMARK_FORMAT,
    cutoff: [a.cutoff, b.cutoff].sort()[0] as string,
    keys,
    retry: uniqueRetry([...a.retry, ...b.retry]),
    runId,
    ...([a.sweptAt, b.sweptAt].sort().at(-1) ? { sweptAt: [a.sweptAt, b.sweptAt].sort().at(-1) } : {}),
    ...erasure,
  };
};

/** Retry entries not due at a run's start, kept in its scratch until Report writes them back. */
export const carriedKey = (runId: string): string => `${runPrefix(runId)}retry-carried.json`;

export const writeCarried = (deps: StepDeps, runId: string, carried: readonly RetryJob[]) =>
  putJson(deps, carriedKey(runId), { format: WATERMARK_FORMAT, retry: carried });

export const readCarried = async (deps: StepDeps, runId: string): Promise<RetryJob[]> => {
  const v = await getJson(deps, carriedKey(runId), 'carried retry entries');
  if (!isObj(v) || !Array.isArray(v.retry))
    throw new CorruptObjectError(carriedKey(runId), 'carried retry entries are missing');
  const epoch = new Date(0).toISOString();
  return [...parseDoc({ format: WATERMARK_FORMAT, cutoff: epoch, keys: {}, retry: v.retry }).retry];
};

const sameDoc = (a: WatermarkDoc, b: WatermarkDoc): boolean =>
  (a.runId !== '') === (b.runId !== '') &&
  sameSummary(a.erasure, b.erasure) &&
  a.cutoff === b.cutoff &&
  a.sweptAt === b.sweptAt &&
  TERMINAL_STATUSES.every((s) => a.keys[s] === b.keys[s]) &&
  JSON.stringify(uniqueRetry(a.retry)) === JSON.stringify(uniqueRetry(b.retry));

/**
 * Writes `next` over the document the run read (ETag `planEtag`): If-Match / If-None-Match, so two
 * overlapping runs cannot lose each other's claims; when the document changed since (another run, a
 * forget, an erasure request) the current one is merged. The stored erasure summary is carried over
 * as it is, and `drop` removes retry entries it rules out (a forgotten shop's). Reads the document
 * first (1 GET): only a run that has something to write gets here.
 * Returns what happened, for the report.
 */
export const writeWatermark = async (
  deps: StepDeps,
  planEtag: string | null,
  next: WatermarkDoc,
  drop: (r: RetryJob, erasure: ErasureSummary | undefined) => boolean = () => false,
  read: (deps: StepDeps) => Promise<ReadWatermark> = readWatermark,
): Promise<'unchanged' | 'written' | 'merged'> => {
  let base = await read(deps);
  let merged = base.etag !== planEtag;
  for (let attempt = 0; attempt < 5; attempt++) {
    const joined = base.doc && merged ? mergeWatermarks(base.doc, next, next.runId) : next;
    const erasure = base.doc?.erasure;
    const doc: WatermarkDoc = {
      ...joined,
      retry: joined.retry.filter((r) => !drop(r, erasure)),
      ...(erasure ? { erasure } : {}),
    };
    if (base.doc && sameDoc(base.doc, doc)) return 'unchanged';
    try {
      await putConditional(
        deps.s3,
        {
          Bucket: deps.bucket,
          Key: WATERMARK_KEY,
          Body: JSON.stringify(doc),
          ContentType: 'application/json',
        },
        base.etag,
      );
      return merged ? 'merged' : 'written';
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
      base = await read(deps);
      merged = true;
    }
  }
  throw new ConcurrentModificationError(WATERMARK_KEY);
};
