import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { JobObject } from '../../../details';
import { listJobsObjects } from '../../../details/hot-listing';
import { type ErasureSummary, isForgottenIn, overdueIn, pendingRedactions } from '../../../erasure/summary';
import { readErasureSummary, readWatermarkWithSummary } from '../../../erasure/summary-store';
import { ExactQueryCommand } from '../../../jobs/exact-commands';
import { JOBS_TABLE, TERMINAL_STATUSES } from '../../../jobs/schema';
import { addCounts } from '../../../metrics';
import { putBytes } from '../../../s3/objects';
import { checkTimestamp } from '../../../time';
import { INDEX_PREFIX, mapResultsPrefix } from '../../format';
import { readJobRows } from '../archive/job-rows';
import { ABANDONED_AFTER_MS } from '../archive/pending-gc';
import { CAPS } from '../caps';
import type { StepDeps } from '../context';
import { buildRun } from '../run-context';
import { writePlanFindings } from '../run-files/findings';
import { writePageResults } from '../run-files/page-results';
import { layoutPlanFiles } from '../run-files/plan-files';
import { zeroTotals } from '../run-totals';
import type { PageState, PlanResult, RunContext, RunInput, ScanState } from '../types';
import { decodeCursor, encodeCursor, type PlanCursor } from './cursor';
import { findLateRows } from './late-rows';
import { SWEEP_EVERY_MS, SWEEP_WITH_WALK_MS, sweepHot } from './orphans';
import { packDecisions } from './pack-decisions';
import {
  classifyPlanRow,
  keyConditionBound,
  type PageGroup,
  PlanPage,
  plannedJob,
  type RowVerdict,
  startKeyOf,
} from './plan-rows';
import {
  type ReadWatermark,
  type RetryJob,
  retryNotDue,
  windowStart,
  writeCarried,
  writtenByRun,
} from './watermark';

/** Items asked of one Query call (DynamoDB also stops at 1 MB). */
const QUERY_LIMIT = 1000;

export type PlanCall =
  | {
      readonly kind: 'first';
      readonly input: RunInput;
      readonly execution: string;
      readonly startTime: string;
    }
  | { readonly kind: 'next'; readonly state: PageState };

/**
 * A job that waited for the grace period after its commit, planned from the completion its retry
 * entry names, without reading its row (its archive run read it): the archive step finds it committed
 * (or, its prefix changed, archives it again, reading the row then), and the delete step deletes only
 * objects matching the committed entry, reading the row only where the prefix holds anything else (a
 * retry: delete-sources.ts). Null: not due at this run's cutoff (as a row would be `later`);
 * undefined: an entry to plan from its row.
 */
const committedRetry = (r: RetryJob, cutoff: string): RowVerdict | null | undefined => {
  if (
    r.graceFrom === undefined ||
    r.revisit === true ||
    r.completedAt === undefined ||
    r.status === undefined
  )
    return undefined;
  const { time } = checkTimestamp(r.completedAt);
  if (time === null) return undefined;
  if (time.iso >= cutoff) return null;
  return { kind: 'plan', shopId: r.shopId, month: time.month, job: plannedJob(r.jobId, r.status, time.iso) };
};

/**
 * The first page reads the watermark and plans its retry list (jobs a run could not finish) by key:
 * a row still terminal is classified like a GSI row; a row gone or no longer terminal is dropped (its
 * next completion gets a new GSI key; hot objects of a row gone are the orphan sweep's). Jobs that
 * only waited for their grace period are planned from their entries (committedRetry).
 */
const startScan = async (
  deps: StepDeps,
  run: RunContext,
  page: PlanPage,
  replan: boolean,
  read: ReadWatermark,
): Promise<ScanState> => {
  const { etag } = read;
  // A document only an erasure wrote holds no claims to plan from (watermark.ts writtenByRun).
  const doc = read.doc && writtenByRun(read.doc) ? read.doc : null;
  const retry: readonly RetryJob[] = read.doc?.retry ?? [];
  const bound = keyConditionBound(run.cutoff);
  const next = Object.fromEntries(TERMINAL_STATUSES.map((s) => [s, bound]));
  const now = deps.clock();
  const notDue = (r: RetryJob): boolean => retryNotDue(r, now, run.graceHours);
  const carried = retry.filter(notDue);
  // Planned now, and once more when what a failed attempt left is collectable.
  const followUp = new Date(deps.clock().getTime() + ABANDONED_AFTER_MS).toISOString();
  const revisits = retry
    .filter((r) => r.revisit === true && !notDue(r))
    .map((r) => ({ shopId: r.shopId, jobId: r.jobId, notBefore: followUp }));
  if (carried.length + revisits.length > 0) await writeCarried(deps, run.runId, [...carried, ...revisits]);
  const byShop = new Map<string, string[]>();
  for (const r of retry) {
    if (notDue(r)) continue;
    const committed = committedRetry(r, run.cutoff);
    if (committed !== undefined) {
      if (committed !== null) page.add(committed);
      continue;
    }
    byShop.set(r.shopId, [...(byShop.get(r.shopId) ?? []), r.jobId]);
  }
  for (const [shopId, jobIds] of byShop) {
    const rows = await readJobRows(deps, shopId, jobIds);
    for (const row of rows.values()) {
      const status = row.item.job_status;
      if (typeof status !== 'string' || !(TERMINAL_STATUSES as readonly string[]).includes(status)) continue;
      const v = classifyPlanRow(row.item, status, run.cutoff);
      if (v.kind !== 'later') page.add(v);
    }
  }
  const sweptAt = doc?.sweptAt ?? null;
  // Which months this run archives first (packing needs it: a shop-month with an index of its own
  // must not gain a shared one). With a watermark, the months from its cutoff on; without one (or on
  // a replan), every month only while the bucket holds no index at all.
  const packFrom = doc && !replan ? doc.cutoff : (await indexesExist(deps)) ? null : '';
  const sweptAgo = sweptAt === null ? Number.POSITIVE_INFINITY : deps.clock().getTime() - Date.parse(sweptAt);
  const sweep = sweptAgo >= SWEEP_EVERY_MS;
  const overdue = overdueIn(read.doc?.erasure, deps.clock(), deps.settings.erasureDeadlineDays);
  const redactions = pendingRedactions(read.doc?.erasure);
  return {
    etag,
    // `replan` reads the GSI from the beginning, as the first run ever, keeping the retry list and the
    // sweep time; its Report writes the watermark as usual (docs/steady-state.md).
    from:
      doc && !replan
        ? {
            cutoff: doc.cutoff,
            keys: doc.keys,
            ...(doc.sweptAt !== undefined ? { sweptAt: doc.sweptAt } : {}),
          }
        : null,
    next,
    retried: retry.length - carried.length,
    carried: carried.length + revisits.length,
    // Set to the sweep's time by the page that sweeps (the first; with the walk, the first with jobs).
    sweptAt: sweep ? null : sweptAt,
    ...(!sweep && sweptAgo >= SWEEP_WITH_WALK_MS ? { sweepWithWalk: true as const } : {}),
    orphans: 0,
    packFrom,
    // What Report says of erasure requests (docs/erasure.md), from the summary this read brought.
    ...(overdue.length + redactions > 0
      ? {
          erasure: {
            overdueCount: overdue.length,
            overdue: overdue.slice(0, CAPS.report),
            pendingRedactions: redactions,
          },
        }
      : {}),
  };
};

/**
 * The hot objects of every job of the page in ONE walk over `job-details/` (hot-listing.ts: pages of
 * 1,000 keys, jumping over gaps), written into the planned-jobs lines: each batch reads them with its
 * jobs (the same ranged GET) instead of walking the prefix again for its own, scattered jobs. With
 * random job ids, a batch's jobs are spread over the whole prefix; the page's are dense in it.
 */
const withHotObjects = async (
  deps: StepDeps,
  groups: PageGroup[],
  swept?: ReadonlyMap<string, JobObject[]>,
): Promise<PageGroup[]> => {
  const ids = groups.flatMap((g) => g.jobs.map((j) => j.job_id));
  if (ids.length === 0) return groups;
  const objects = swept ?? (await listJobsObjects(deps.s3, deps.bucket, ids)).objects;
  return groups.map((g) => ({
    ...g,
    jobs: g.jobs.map((j) => ({
      ...j,
      objects: (objects.get(j.job_id) ?? []).map((o) => ({
        key: o.key,
        size: o.size,
        etag: o.etag ?? null,
        lastModified: o.lastModified?.toISOString() ?? null,
      })),
    })),
  }));
};

const after = (statusIndex: number): PlanCursor | null =>
  statusIndex + 1 < TERMINAL_STATUSES.length ? { statusIndex: statusIndex + 1, startKey: null } : null;

/**
 * Plans one page: terminal jobs completed before the cutoff, read from GSI_JobsByStatus_v2 one
 * status at a time, grouped by shop × UTC month of completion. Stops at `planPageJobs` items or before
 * the item that would open group `planPageGroups + 1`, and returns an item-level cursor; each group's
 * job list (and the page's quarantined rows) go to S3 so the state stays small whatever the page holds.
 */
export const plan = async (deps: StepDeps, call: PlanCall): Promise<PlanResult> => {
  const { settings } = deps;
  const run =
    call.kind === 'first' ? buildRun(call.input, call.execution, call.startTime, settings) : call.state.run;
  const pageNo = call.kind === 'first' ? 0 : call.state.page;
  const before = call.kind === 'first' ? zeroTotals() : call.state.totals;
  const start: PlanCursor =
    call.kind === 'first'
      ? { statusIndex: 0, startKey: null }
      : decodeCursor(call.state.cursor ?? '', 'state.cursor');

  const { value, requests } = await deps.meter.measure(async () => {
    // Forgotten shops (docs/erasure.md): their jobs completed before the forget are never planned —
    // GSI rows, retries and orphans alike. The watermark's erasure summary says which: the first page
    // reads the watermark anyway, a later page reads it again (1 GET).
    const prior = call.kind === 'next' ? call.state.scan : undefined;
    const begun: { prior: ScanState } | { read: ReadWatermark } = prior
      ? { prior }
      : { read: await readWatermarkWithSummary(deps) };
    const erasure: ErasureSummary | undefined =
      'read' in begun ? begun.read.doc?.erasure : await readErasureSummary(deps);
    const page = new PlanPage(settings.planPageGroups, (shopId, completedAt) =>
      isForgottenIn(erasure, shopId, completedAt),
    );
    const replan = call.kind === 'first' && call.input.replan === true;
    const scanState = 'read' in begun ? await startScan(deps, run, page, replan, begun.read) : begun.prior;
    const nextKeys: Record<string, string> = { ...scanState.next };
    let consumed = 0;
    let next: PlanCursor | null = start;
    rows: while (next !== null) {
      const here: PlanCursor = next;
      const status = TERMINAL_STATUSES[here.statusIndex] as string;
      const bound = keyConditionBound(run.cutoff);
      // From the watermark less the lateness window; the first run ever reads from the beginning.
      const start = windowStart(scanState.from, status);
      // (BETWEEN needs from ≤ bound: a run whose cutoff went back reads at most its own bound.)
      const from = start === null ? null : ([start, bound].sort()[0] as string);
      const watermark = scanState.from?.keys[status];
      const out = await deps.ddb.send(
        new ExactQueryCommand({
          TableName: deps.table,
          IndexName: JOBS_TABLE.gsiJobsByStatus.name,
          // A superset of the due jobs (see keyConditionBound); classifyPlanRow applies the exact rule.
          KeyConditionExpression:
            from === null
              ? 'job_status = :s AND status_created_at < :bound'
              : 'job_status = :s AND status_created_at BETWEEN :from AND :bound',
          ExpressionAttributeValues: {
            ':s': status,
            ':bound': bound,
            ...(from === null ? {} : { ':from': from }),
          },
          ...(here.startKey ? { ExclusiveStartKey: { ...here.startKey } } : {}),
          Limit: Math.min(settings.planPageJobs - consumed, QUERY_LIMIT),
        }),
      );
      const items = out.Items ?? [];
      let last = here.startKey;
      for (const [i, item] of items.entries()) {
        const key = String(item.status_created_at);
        let verdict = classifyPlanRow(item, status, run.cutoff);
        // Below the watermark (the lateness window) only a job not due at the previous cutoff is new:
        // the runs before planned the rest.
        if (
          verdict.kind === 'plan' &&
          watermark !== undefined &&
          scanState.from &&
          key < watermark &&
          verdict.job.completed_at < scanState.from.cutoff
        ) {
          verdict = { kind: 'seen' };
        }
        // A row not due yet keeps the watermark at or below its key, so a later run reads it again
        // (one keyed at or past the cutoff is inside every later run's window anyway).
        if (verdict.kind === 'later' && key < run.cutoff && key < (nextKeys[status] as string)) {
          nextKeys[status] = key;
        }
        if (!page.fits(verdict)) {
          next = { statusIndex: here.statusIndex, startKey: last };
          break rows;
        }
        page.add(verdict);
        consumed++;
        last = startKeyOf(item);
        if (consumed >= settings.planPageJobs) {
          const exhausted = i === items.length - 1 && out.LastEvaluatedKey === undefined;
          next = exhausted ? after(here.statusIndex) : { statusIndex: here.statusIndex, startKey: last };
          break rows;
        }
      }
      next = out.LastEvaluatedKey
        ? { statusIndex: here.statusIndex, startKey: startKeyOf(out.LastEvaluatedKey) }
        : after(here.statusIndex);
    }

    // The orphan sweep, when due, walks the whole hot prefix: that walk is the page's listing too.
    let scan: ScanState = { ...scanState, next: nextKeys };
    let swept: Map<string, JobObject[]> | undefined;
    const wanted = new Set(page.result().flatMap((g) => g.jobs.map((j) => j.job_id)));
    if (scanState.sweptAt === null || (scanState.sweepWithWalk && wanted.size > 0)) {
      const sweepAt = deps.clock().toISOString();
      const found = await sweepHot(deps, wanted);
      for (const o of found.orphans) page.add({ kind: 'plan', shopId: o.shopId, month: o.month, job: o.job });
      for (const q of found.unattributed) page.add({ kind: 'quarantine', entry: q });
      swept = found.listing;
      // Rows that entered the GSI below the watermark, among the hot jobs the walk saw (late-rows.ts).
      const late = await findLateRows(deps, run.cutoff, scan.from, found.others);
      const lateJobs: string[] = [];
      for (const v of late) {
        const before = page.jobsPlanned;
        page.add(v);
        if (v.kind === 'plan' && page.jobsPlanned > before) lateJobs.push(v.job.job_id);
      }
      if (lateJobs.length > 0) {
        // Their objects (the walk kept only the page's and the orphans'): a jump to each prefix.
        for (const [id, objects] of (await listJobsObjects(deps.s3, deps.bucket, lateJobs)).objects)
          swept.set(id, objects);
      }
      const { sweepWithWalk: _done, ...rest } = scan;
      scan = {
        ...rest,
        sweptAt: sweepAt,
        orphans: found.orphans.length,
        ...(lateJobs.length > 0 ? { lateRows: lateJobs.length } : {}),
      };
    }
    const groups = await withHotObjects(deps, page.result(), swept);
    const pack = await packDecisions(deps, run, groups, scan.packFrom);
    const files = layoutPlanFiles(run.runId, pageNo, groups, settings, pack);
    await writePlanFindings(deps, run.runId, pageNo, page.quarantined);
    if (files.batches.length > 0) {
      // The jobs first: a batches file only ever names ranges that exist.
      await putBytes(deps, files.jobsKey, files.jobsBody, 'application/gzip');
      await putBytes(deps, files.batchesKey, files.batchesBody, 'application/x-ndjson');
    } else if (page.quarantined.length > 0) {
      // Nothing to archive on this page: its results are Plan's to write (no Map, no Tally).
      await writePageResults(deps, run.runId, pageNo, page.quarantined.length, []);
    } else {
      // Nothing at all: no document; the state says so (ScanState.quietPages) and Report reads none.
      scan = { ...scan, quietPages: [...(scan.quietPages ?? []), pageNo] };
    }
    return { page, next, files, groupCount: groups.length, scan };
  });

  const { page, next, files, groupCount, scan } = value;
  return {
    run,
    page: files.batches.length > 0 ? pageNo : pageNo + 1,
    scan,
    cursor: next === null ? null : encodeCursor(next),
    batches: files.batches.length,
    groups: groupCount,
    batchesKey: files.batchesKey,
    resultsPrefix: mapResultsPrefix(run.runId, pageNo),
    planQuarantined: page.quarantined.length,
    totals: {
      ...before,
      jobsPlanned: before.jobsPlanned + page.jobsPlanned,
      jobsQuarantined: before.jobsQuarantined + page.quarantined.length,
      requests: addCounts(before.requests, requests),
    },
  };
};

const indexesExist = async (deps: StepDeps): Promise<boolean> => {
  const out = await deps.s3.send(
    new ListObjectsV2Command({ Bucket: deps.bucket, Prefix: INDEX_PREFIX, MaxKeys: 1 }),
  );
  return (out.Contents?.length ?? 0) > 0;
};
