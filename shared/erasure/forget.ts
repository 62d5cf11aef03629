import { DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { COLD_PREFIX, INDEX_PREFIX, WATERMARK_KEY } from '../archive/format';
import type { StepDeps } from '../archive/steps/context';
import { forgetPackDecisions } from '../archive/steps/plan/pack-decisions';
import { readWatermark } from '../archive/steps/plan/watermark';
import { mapLimit, pause } from '../concurrency';
import { ConcurrentModificationError, ErasureIncompleteError, InvalidInputError } from '../errors';
import { validateShopId } from '../ids';
import { jobIdFromSk, jobPk, jobSk } from '../jobs/schema';
import { listAllArray, putConditional } from '../s3/objects';
import { RUN_TIMEOUT_MAX_DAYS } from '../settings';
import { formatTimestamp } from '../time';
import { findShopHotObjects } from './forget-hot';
import { forgetScratch } from './forget-scratch';
import { forgetSharedParts, type UncommittedPart } from './forget-shared';
import {
  type ErasureReceipt,
  type ErasureRequest,
  listRequests,
  markComplete,
  markPending,
  recordRequest,
  updateRequest,
} from './ledger';
import { withClosed, withForgotten } from './summary';
import { readErasureSummary, updateErasureSummary } from './summary-store';
import { writeTombstone } from './tombstone';

/**
 * Forget a shop (docs/erasure.md): every hot object, job row, archive part, month index, document
 * filter, staging doc and watermark retry entry of the shop goes; a receipt (counts, when, which runs —
 * no content, no document ids) completes its request in the ledger. Idempotent and resumable: each
 * stage lists what is still there and removes it, so a rerun after a crash anywhere does what is left.
 *
 * Order: the request and the shop's tombstone first (from then on the archiver refuses the shop's
 * jobs completed before the request), the watermark's retry entries, the archive (indexes first, so
 * readers stop seeing it at once), the hot objects (found through the rows, so before them), the rows;
 * then a re-check of all of it, repeated while a concurrent archival that passed its own tombstone
 * check before the tombstone existed still lands something; then the run scratch (forget-scratch.ts).
 */
export interface ForgetInput {
  readonly shopId: string;
  /** The caller's request id (a webhook id); default: the shop's open forget request, or a new one. */
  readonly requestId?: string;
  readonly receivedAt?: Date;
  /** The run doing it (execution name, CLI run id): noted on the request. */
  readonly runId: string;
  /**
   * Repair a damaged shared part by dropping its unreadable blocks even where they also hold other
   * shops' records (forget-shared.ts; docs/erasure.md "A damaged shared part"). Default: only blocks
   * of the forgotten shop alone are dropped, and others' stop the forget naming this option.
   */
  readonly dropDamaged?: boolean;
  /**
   * The state machine's execution timeout (the Forget Task's payload carries it): a run without a
   * report older than this has ended. Default: the longest a construct allows (RUN_TIMEOUT_MAX_DAYS,
   * 2 days).
   */
  readonly runTimeoutSeconds?: number;
}

export interface ForgetCounts {
  readonly hotObjects: number;
  readonly rowlessJobs: number;
  readonly foreignObjectsKept: number;
  readonly jobRows: number;
  readonly parts: number;
  readonly monthIndexes: number;
  readonly docFilters: number;
  readonly stagingDocs: number;
  readonly retryEntries: number;
  /** Shared parts (packed shop-months) the shop had a segment in: rewritten without it. */
  readonly sharedParts: number;
  /** Uncommitted shared parts a dead run left (never in a shared index) that held the shop: deleted. */
  readonly uncommittedParts: number;
  /** Blocks of damaged shared parts that did not inflate: dropped (the repair, docs/erasure.md). */
  readonly damagedBlocksDropped: number;
  /** Other shops' job entries whose records were in those blocks (dropDamaged): dropped with them. */
  readonly otherShopsEntriesDropped: number;
  /** Run scratch objects (`job-details-runs/`) that named the shop: rewritten without it, or deleted. */
  readonly scratchObjects: number;
  /** Runs still going when forget looked: their own Report scrubs their scratch (forget-scratch.ts). */
  readonly scratchRunsDeferred: number;
}

export interface ForgetResult {
  readonly requestId: string;
  readonly shopId: string;
  readonly receivedAt: string;
  readonly completedAt: string;
  readonly counts: ForgetCounts;
  /** Passes over the shop's data (2: the work and a clean re-check). */
  readonly passes: number;
  readonly requests: { readonly list: number; readonly head: number };
}

/** Stages, in order (tests crash between them). */
export type ForgetStage = 'tombstone' | 'watermark' | 'archive' | 'hot' | 'rows' | 'scratch' | 'receipt';

export interface ForgetHooks {
  readonly before?: (stage: ForgetStage, pass: number) => Promise<void>;
}

/** Passes before giving up on data that keeps reappearing (each is a full re-check). */
export const FORGET_PASSES = 4;

const zero: ForgetCounts = {
  hotObjects: 0,
  rowlessJobs: 0,
  foreignObjectsKept: 0,
  jobRows: 0,
  parts: 0,
  monthIndexes: 0,
  docFilters: 0,
  stagingDocs: 0,
  retryEntries: 0,
  sharedParts: 0,
  uncommittedParts: 0,
  damagedBlocksDropped: 0,
  otherShopsEntriesDropped: 0,
  scratchObjects: 0,
  scratchRunsDeferred: 0,
};

/**
 * The request to work on: the caller's, else the shop's oldest open one — in the ledger, or only in
 * the erasure summary (a forget that crashed between the two writes of recording it) — else a new one.
 */
const requestFor = async (deps: StepDeps, input: ForgetInput): Promise<ErasureRequest> => {
  const ctx = { s3: deps.s3, bucket: deps.bucket, clock: deps.clock };
  let unrecorded: { id: string; receivedAt: string } | undefined;
  if (input.requestId === undefined) {
    const open = (await listRequests(ctx, { kind: 'forget-shop', openOnly: true })).find(
      (r) => r.shopId === input.shopId,
    );
    if (open) return open;
    const [id, r] =
      Object.entries((await readErasureSummary(ctx)).open)
        .filter(([, r]) => r.kind === 'forget-shop' && r.shopId === input.shopId)
        .sort(([a, x], [b, y]) => x.receivedAt.localeCompare(y.receivedAt) || a.localeCompare(b))[0] ?? [];
    if (id !== undefined && r !== undefined) unrecorded = { id, receivedAt: r.receivedAt };
  }
  const receivedAt = unrecorded ? new Date(unrecorded.receivedAt) : input.receivedAt;
  return recordRequest(ctx, {
    kind: 'forget-shop',
    shopId: input.shopId,
    // A new request is named after the run, so a retried Task finds the one its first attempt made.
    requestId: input.requestId ?? unrecorded?.id ?? input.runId,
    ...(receivedAt !== undefined ? { receivedAt } : {}),
  });
};

/** DeleteObjects, 1,000 keys a call; a key already gone is deleted. Anything else left throws. */
const deleteKeys = async (deps: StepDeps, keys: readonly string[], requestId: string): Promise<void> => {
  let pending = [...keys];
  for (let attempt = 1; pending.length > 0; attempt++) {
    if (attempt > 3)
      throw new ErasureIncompleteError(
        requestId,
        `${pending.length} object(s) could not be deleted (first: ${pending[0]})`,
      );
    if (attempt > 1) await pause(100 * 2 ** attempt);
    const failed: string[] = [];
    for (let i = 0; i < pending.length; i += 1000) {
      const batch = pending.slice(i, i + 1000);
      const res = await deps.s3.send(
        new DeleteObjectsCommand({
          Bucket: deps.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      for (const e of res.Errors ?? [])
        if (e.Key && e.Code !== 'NoSuchKey' && e.Code !== 'NotFound') failed.push(e.Key);
    }
    pending = failed;
  }
};

/**
 * Removes the shop's entries from the watermark's retry list (If-Match; re-read on a conflict),
 * calling `found` with their number before the write.
 */
const forgetRetries = async (
  deps: StepDeps,
  shopId: string,
  found: (n: number) => Promise<void>,
): Promise<number> => {
  for (let attempt = 0; attempt < 8; attempt++) {
    const { doc, etag } = await readWatermark(deps);
    if (!doc) return 0;
    const keep = doc.retry.filter((r) => r.shopId !== shopId);
    const removed = doc.retry.length - keep.length;
    if (removed === 0) return 0;
    await found(removed);
    try {
      await putConditional(
        deps.s3,
        {
          Bucket: deps.bucket,
          Key: WATERMARK_KEY,
          Body: JSON.stringify({ ...doc, retry: keep }),
          ContentType: 'application/json',
        },
        etag,
      );
      return removed;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
    }
  }
  throw new ConcurrentModificationError(WATERMARK_KEY);
};

/** The shop's archive objects, by kind: indexes, parts, document filters, staging docs (and other). */
const archiveObjects = async (deps: StepDeps, shopId: string) => {
  const index = await listAllArray(deps.s3, deps.bucket, `${INDEX_PREFIX}${shopId}/`);
  const cold = await listAllArray(deps.s3, deps.bucket, `${COLD_PREFIX}${shopId}/`);
  const keys = index.map((o) => o.key);
  return {
    indexes: keys.filter((k) => k.endsWith('/index.json')),
    rest: [...keys.filter((k) => !k.endsWith('/index.json')), ...cold.map((o) => o.key)],
    counts: {
      monthIndexes: keys.filter((k) => k.endsWith('/index.json')).length,
      docFilters: keys.filter((k) => k.includes('/docs/')).length,
      stagingDocs: keys.filter((k) => k.includes('/pending/')).length,
      parts: cold.length,
    },
    lists: 2,
  };
};

/** Job ids of the shop's rows (the partition `SHOP#{shop}`, keys only). */
const shopJobIds = async (deps: StepDeps, shopId: string): Promise<string[]> => {
  const ids: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await deps.ddb.send(
      new QueryCommand({
        TableName: deps.table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': jobPk(shopId) },
        ProjectionExpression: 'sk',
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) if (typeof item.sk === 'string') ids.push(jobIdFromSk(item.sk));
    start = out.LastEvaluatedKey as Record<string, unknown> | undefined;
  } while (start);
  return ids;
};

/**
 * DeleteItem per row (the same write units as BatchWriteItem, whose permission would also allow
 * puts: the forget function may only delete rows). The SDK retries throttling.
 */
const deleteRows = async (deps: StepDeps, shopId: string, jobIds: readonly string[]): Promise<void> => {
  await mapLimit(jobIds, ROW_DELETE_CONCURRENCY, (id) =>
    deps.ddb.send(new DeleteCommand({ TableName: deps.table, Key: { pk: jobPk(shopId), sk: jobSk(id) } })),
  );
};

const ROW_DELETE_CONCURRENCY = 16;

/** Counts as recorded on the request so far (a resumed run continues them). */
const countsOf = (r: ErasureRequest): ForgetCounts => {
  const out: Record<string, number> = { ...zero };
  for (const k of Object.keys(zero)) {
    const v = r.receipt?.[k];
    if (typeof v === 'number') out[k] = v;
  }
  return out as unknown as ForgetCounts;
};

const receiptOf = (counts: ForgetCounts, passes: number, complete: boolean): ErasureReceipt => ({
  ...counts,
  passes,
  complete,
});

export const forgetShop = async (
  deps: StepDeps,
  input: ForgetInput,
  hooks: ForgetHooks = {},
): Promise<ForgetResult> => {
  const shopId = validateShopId(input.shopId);
  const ctx = { s3: deps.s3, bucket: deps.bucket, clock: deps.clock };
  const request = await requestFor(deps, { ...input, shopId });
  let counts = countsOf(request);
  // Progress is recorded on the request BEFORE each stage deletes (as the larger of what was recorded
  // and what is found now), so a run killed mid-stage neither loses nor doubles what it found.
  // `largest`: counts of a stage done once (the scratch), where what a rerun finds is what is left.
  const record = async (found: Partial<ForgetCounts>, pass: number, largest = pass === 1) => {
    const merged: Record<string, number> = { ...counts };
    for (const [k, v] of Object.entries(found))
      merged[k] = largest ? Math.max(merged[k] ?? 0, v ?? 0) : (merged[k] ?? 0) + (v ?? 0);
    counts = merged as unknown as ForgetCounts;
    await updateRequest(ctx, request.id, { runId: input.runId, receipt: receiptOf(counts, pass, false) });
  };
  await hooks.before?.('tombstone', 1);
  await updateRequest(ctx, request.id, { runId: input.runId });
  await writeTombstone(ctx, { shopId, forgottenAt: request.receivedAt, requestId: request.id });
  // The runs learn of it from the watermark's summary (one GET they make anyway), before anything goes.
  await updateErasureSummary(ctx, (s) => withForgotten(s, shopId, request.receivedAt));

  let lists = 0;
  let heads = 0;
  let pass = 1;
  let uncommittedLeft: readonly UncommittedPart[] = [];
  for (; ; pass++) {
    if (pass > FORGET_PASSES)
      throw new ErasureIncompleteError(
        request.id,
        `the shop's data was still there after ${FORGET_PASSES} passes`,
      );
    let found = 0;
    await hooks.before?.('watermark', pass);
    found += await forgetRetries(deps, shopId, (n) => record({ retryEntries: n }, pass));
    // Plan's own-or-shared decisions name shops (plan/pack-decisions.ts).
    await forgetPackDecisions(deps, shopId);

    await hooks.before?.('archive', pass);
    const archive = await archiveObjects(deps, shopId);
    lists += archive.lists;
    const archived = archive.indexes.length + archive.rest.length;
    found += archived;
    if (archived > 0) {
      await record(archive.counts, pass);
      // Indexes first: readers and the archiver stop seeing the shop's archive at once.
      await deleteKeys(deps, archive.indexes, request.id);
      await deleteKeys(deps, archive.rest, request.id);
    }

    // Packed shop-months: the shop's segments leave the shared parts they are in.
    const shared = await forgetSharedParts(
      deps,
      shopId,
      {
        requestId: request.id,
        runId: input.runId,
        ...(input.dropDamaged === true ? { dropDamaged: true } : {}),
      },
      (n) => record(n as Partial<ForgetCounts>, pass),
    );
    lists += shared.lists;
    found += shared.sharedParts + shared.uncommittedParts;
    uncommittedLeft = shared.uncommittedLeft;

    await hooks.before?.('hot', pass);
    const jobIds = await shopJobIds(deps, shopId);
    const hot = await findShopHotObjects(deps, shopId, new Set(jobIds));
    lists += hot.listRequests;
    heads += hot.headRequests;
    found += hot.keys.length;
    if (hot.keys.length > 0) {
      await record(
        { hotObjects: hot.keys.length, rowlessJobs: hot.rowlessJobs, foreignObjectsKept: hot.foreignKept },
        pass,
      );
      await deleteKeys(deps, hot.keys, request.id);
    }

    await hooks.before?.('rows', pass);
    found += jobIds.length;
    if (jobIds.length > 0) {
      await record({ jobRows: jobIds.length }, pass);
      await deleteRows(deps, shopId, jobIds);
    }
    // A pass that found nothing is the clean re-check (the first pass is always re-checked).
    if (found === 0 && pass > 1) break;
  }

  // Run scratch (plans, results, findings, reports of runs in the last 30 days) once the shop's data
  // is gone, so nothing a run still reads of it is scrubbed before its archive leaves.
  await hooks.before?.('scratch', pass);
  const scratch = await forgetScratch(
    deps,
    {
      shopId,
      requestId: request.id,
      runTimeoutMs:
        input.runTimeoutSeconds !== undefined
          ? input.runTimeoutSeconds * 1000
          : RUN_TIMEOUT_MAX_DAYS * 86_400_000,
    },
    (n) => record(n, pass, true),
  );
  lists += scratch.lists;

  await hooks.before?.('receipt', pass);
  if (uncommittedLeft.length > 0) {
    // A run's uncommitted part holding the shop, too young to take for abandoned: the request stays
    // pending, its receipt and reason naming what is left and from when the next forget removes it.
    const at = uncommittedLeft.map((u) => u.removableAt).sort()[uncommittedLeft.length - 1];
    const reason = `uncommitted shared part(s) ${uncommittedLeft.map((u) => u.key).join(', ')} hold the shop; they are abandoned, and forget removes them, from ${at}`;
    await updateRequest(ctx, request.id, {
      runId: input.runId,
      receipt: { ...receiptOf(counts, pass, false), uncommittedPartsLeft: uncommittedLeft.length },
    });
    await markPending(ctx, request.id, input.runId, reason);
    throw new ErasureIncompleteError(request.id, reason);
  }
  // The shop's open redactions have nothing left to redact: complete, superseded by this forget. Then
  // no entry of the summary names the shop (one a crash left without a ledger record included).
  for (const r of await listRequests(ctx, { kind: 'redact-doc', openOnly: true }))
    if (r.shopId === shopId) await markComplete(ctx, r.id, input.runId, { supersededByForget: request.id });
  const done = await markComplete(ctx, request.id, input.runId, receiptOf(counts, pass, true));
  await updateErasureSummary(ctx, (s) =>
    Object.entries(s.open).reduce((x, [id, r]) => (r.shopId === shopId ? withClosed(x, id) : x), s),
  );
  return {
    requestId: request.id,
    shopId,
    receivedAt: request.receivedAt,
    completedAt: done.completedAt ?? formatTimestamp(deps.clock()),
    counts,
    passes: pass,
    requests: { list: lists, head: heads },
  };
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `Forget` Task's event: `{forget: {shopId, requestId?, receivedAt?}, execution, runTimeoutSeconds?}`
 * (the state machine's input `{"forget": {...}}`; the definition adds its own timeout), checked
 * before anything is written.
 */
export const parseForgetEvent = (v: unknown, runIdOf: (execution: string) => string): ForgetInput => {
  if (!isObject(v)) throw new InvalidInputError('event', 'expected an object');
  const f = v.forget;
  if (!isObject(f))
    throw new InvalidInputError('forget', 'expected {"shopId": …, "requestId"?: …, "receivedAt"?: …}');
  const unknown = Object.keys(f).filter(
    (k) => !['shopId', 'requestId', 'receivedAt', 'dropDamaged'].includes(k),
  );
  if (f.dropDamaged !== undefined && typeof f.dropDamaged !== 'boolean')
    throw new InvalidInputError('forget.dropDamaged', 'expected true or false');
  if (unknown.length > 0) throw new InvalidInputError('forget', `unknown field(s) ${unknown.join(', ')}`);
  if (typeof v.execution !== 'string')
    throw new InvalidInputError('execution', 'expected the execution name');
  const receivedAt = f.receivedAt;
  if (receivedAt !== undefined && (typeof receivedAt !== 'string' || Number.isNaN(Date.parse(receivedAt))))
    throw new InvalidInputError(
      'forget.receivedAt',
      `expected an ISO time, got ${JSON.stringify(receivedAt)}`,
    );
  if (f.requestId !== undefined && typeof f.requestId !== 'string')
    throw new InvalidInputError('forget.requestId', 'expected a string');
  const timeout = v.runTimeoutSeconds;
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isInteger(timeout) && timeout > 0))
    throw new InvalidInputError(
      'runTimeoutSeconds',
      `expected a whole number of seconds, got ${JSON.stringify(timeout)}`,
    );
  return {
    shopId: validateShopId(f.shopId),
    ...(f.requestId !== undefined ? { requestId: f.requestId as string } : {}),
    ...(receivedAt !== undefined ? { receivedAt: new Date(receivedAt as string) } : {}),
    runId: runIdOf(v.execution),
    ...(f.dropDamaged === true ? { dropDamaged: true } : {}),
    ...(timeout !== undefined ? { runTimeoutSeconds: timeout as number } : {}),
  };
};
