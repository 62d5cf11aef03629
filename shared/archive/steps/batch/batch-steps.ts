import { randomUUID } from 'node:crypto';
import {
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mapLimit } from '../../../concurrency';
import type { JobObject } from '../../../details';
import { listJobsObjects } from '../../../details/hot-listing';
import { type ErasureSummary, forgottenAtOf, isForgottenIn } from '../../../erasure/summary';
import { readErasureSummary } from '../../../erasure/summary-store';
import { ShopForgottenError } from '../../../errors';
import { addCounts, zeroCounts } from '../../../metrics';
import { SENDS_GETS_TO } from '../../../s3/lean-get';
import { putJson } from '../../../s3/objects';
import { COLD_PREFIX, failedAttemptsPrefix, INDEX_PREFIX } from '../../format';
import { archiveGroup } from '../archive/archive-group';
import type { StagedPart } from '../archive/staged';
import { commitPartStep } from '../commit/commit-part';
import { type LoadedShared, loadSharedIndex } from '../commit/shared-store';
import { forRun, type StepDeps } from '../context';
import { deleteMatching } from '../delete/delete-objects';
import { chunks } from '../delete/delete-plan';
import { deleteSources } from '../delete/delete-sources';
import { readBatchJobs } from '../run-files/planned-jobs';
import type {
  ArchiveResult,
  ArchiveStaged,
  ArchiveSummary,
  BatchEvent,
  BatchResult,
  CommitResult,
  DeleteResult,
  DeleteSummary,
  GroupFailed,
  GroupRef,
  GroupResult,
  PlannedGroup,
  PlannedJob,
  VerifyResult,
} from '../types';
import { verifyPart } from '../verify/verify-part';
import { collectAbandonedShared, type MonthPack, packMonth } from './pack-month';
import { fail, type GroupStage, type Prepared } from './prepared';

/**
 * ArchiveBatch: one child execution of the page's Distributed Map, one invocation for a batch of
 * shop-months. Each group goes through the same steps as ever — archive (stage a part), verify (read
 * it back whole), commit (conditional index write), delete (hot objects of committed jobs past the
 * grace period) — in one process, so what a step learned is handed to the next instead of re-read:
 * the index the archive step read is the commit's starting point (its ETag guards the write), the
 * manifest it staged is what verify checks the stored bytes against (the ETag it read is what the
 * commit records and delete HEADs the part against), and the listing of the archived jobs is what delete removes from; the hot objects of
 * all the batch's groups go in shared DeleteObjects calls (1,000 keys each). A crash anywhere
 * leaves what a crash between the old separate steps left; the next run converges the same way.
 *
 * A group's failure is caught and reported (its hot data stays); one bad shop-month never fails its
 * batch. What escapes is a batch-level fault (bad event, unreadable plan): the Task retries it and,
 * if it persists, the ResultWriter records the child as failed and Tally counts its groups failed.
 */

/** Groups of a batch worked on at once (each streams its own part; memory stays a few groups' worth). */
export const BATCH_GROUP_CONCURRENCY = 4;

export type { GroupStage } from './prepared';

/** Where a group's stage is about to start: what the stages before it produced. */
export interface StageContext {
  readonly group: PlannedGroup;
  readonly archive?: ArchiveResult;
  /** Before 'verify': the manifest the stored part is checked against (in memory, never in S3). */
  readonly staged?: StagedPart;
}

/** A group as the batch finished it, before its requests move to the batch's overhead. */
type GroupFinished =
  | GroupFailed
  | { readonly group: GroupRef; readonly archive: ArchiveSummary; readonly delete: DeleteSummary };

/** Everything a group's stages returned (its `GroupResult` carries only the summaries). */
export interface GroupDetail {
  readonly group: PlannedGroup;
  readonly archive?: ArchiveResult;
  readonly delete?: DeleteResult;
}

/**
 * Injection points of the per-group body, for tests that mean one stage of one group (production
 * passes none). What `before` throws is that stage's own failure: the group fails, the batch goes on.
 */
export interface BatchHooks {
  readonly before?: (stage: GroupStage, at: StageContext) => Promise<void>;
  /** The dependencies one stage uses instead of the batch's (e.g. a client that fails some calls). */
  readonly depsFor?: (stage: GroupStage) => StepDeps | undefined;
  readonly groupDone?: (detail: GroupDetail) => void;
}

/**
 * One group's archive → verify → commit, and the hot objects its delete may remove (the batch deletes
 * those of all its groups together, then each group's `del.finish` marks what is gone). The staging
 * docs of a committed part go to `staging`, deleted by the batch at the end.
 */
export const prepareGroup = async (
  deps: StepDeps,
  item: { run: BatchEvent['run']; group: PlannedGroup },
  allPlanned: readonly PlannedJob[],
  listing: ReadonlyMap<string, readonly JobObject[]>,
  staging: string[],
  hooks: BatchHooks = {},
  /** The erasure summary as the batch read it (docs/erasure.md): a forgotten shop's jobs are skipped. */
  erasure?: ErasureSummary,
): Promise<Prepared> => {
  const { group } = item;
  const ref = { shopId: group.shopId, month: group.month };
  const planned = allPlanned.filter((j) => !isForgottenIn(erasure, group.shopId, j.completed_at));
  const refused = allPlanned.length - planned.length;
  const stage = async (name: GroupStage, at: Omit<StageContext, 'group'> = {}) => {
    await hooks.before?.(name, { group, ...at });
    return hooks.depsFor?.(name) ?? deps;
  };
  let full: ArchiveResult | undefined;
  try {
    const a = await archiveGroup(await stage('archive'), item, planned, listing);
    const r =
      refused === 0
        ? a.result
        : { ...a.result, summary: { ...a.result.summary, skipped: a.result.summary.skipped + refused } };
    full = r;
    const archive: ArchiveStaged = {
      ...(r.partKey ? { partKey: r.partKey, partName: r.partName, pendingKey: r.pendingKey } : {}),
      summary: r.summary,
    };
    let index = a.index;
    let verify: VerifyResult | undefined;
    let commit: CommitResult | undefined;
    const checkedParts = new Set<string>();
    if (a.staged && archive.partName) {
      const v = await verifyPart(
        await stage('verify', { archive: r, staged: a.staged }),
        { ...item, archive },
        planned,
        a.staged,
      );
      verify = v.result;
      const commitDeps = await stage('commit', { archive: r });
      // The shop may have been forgotten since the batch read the summary: checked again just before
      // the index write (1 GET of the watermark); then the part (never committed) goes, with its filter
      // and intent.
      const guard = async () => {
        const now = await readErasureSummary(commitDeps);
        const at = forgottenAtOf(now, group.shopId);
        if (at !== undefined && planned.some((j) => isForgottenIn(now, group.shopId, j.completed_at)))
          throw new ShopForgottenError(group.shopId, at);
      };
      const c = await commitPartStep(
        commitDeps,
        { ...item, archive, verify },
        { verified: v.verified, index: a.index, rearchived: a.rearchived, guard },
      ).catch(async (err: unknown) => {
        if (err instanceof ShopForgottenError && archive.partKey && archive.partName) {
          for (const Key of [archive.partKey, archive.pendingKey])
            if (Key) await commitDeps.s3.send(new DeleteObjectCommand({ Bucket: commitDeps.bucket, Key }));
        }
        throw err;
      });
      commit = c.result;
      index = c.index;
      staging.push(...c.staging);
      checkedParts.add(archive.partName);
    }
    const del = await deleteSources(
      await stage('delete', { archive: r }),
      { ...item, archive, ...(verify ? { verify } : {}), ...(commit ? { commit } : {}) },
      planned,
      { index, checkedParts, ...(a.listed ? { listed: a.listed } : {}) },
    );
    return { group, ref, archive: r, del };
  } catch (err) {
    hooks.groupDone?.({ group, ...(full ? { archive: full } : {}) });
    throw err;
  }
};

/**
 * The deps an attempt's work goes through: before the first write of a part's staging (its intent, the
 * first thing staged of any part: `pending/` under the index prefix) or of a part, `mark()` runs once
 * (the attempt's marker), on the same client. Nothing else changes: every other request goes through
 * as it is.
 */
const markingBeforeStaging = (deps: StepDeps, mark: (s3: S3Client) => Promise<void>): StepDeps => {
  const stages = (command: unknown): boolean => {
    if (!(command instanceof PutObjectCommand || command instanceof CreateMultipartUploadCommand))
      return false;
    const key = command.input.Key ?? '';
    return key.startsWith(COLD_PREFIX) || (key.startsWith(INDEX_PREFIX) && key.includes('/pending/'));
  };
  const s3 = new Proxy(deps.s3, {
    get(target, prop, receiver) {
      // A GET goes through unchanged: the hot reads may take the lean path (s3/lean-get.ts).
      if (prop === SENDS_GETS_TO) return target;
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: unknown, ...rest: unknown[]) => {
        if (stages(command)) await mark(target);
        return (target.send as (...a: unknown[]) => unknown).apply(target, [command, ...rest]);
      };
    },
  });
  return { ...deps, s3 };
};

/**
 * ArchiveBatch, its requests counted once each across Task retries: an attempt that throws (the Task
 * retries it) records what it sent under the run's `attempts/`, and Tally adds those to the run.
 * (An invocation that is killed or times out takes its counts with it.)
 */
export const archiveBatch = async (
  stepDeps: StepDeps,
  event: BatchEvent,
  hooks: BatchHooks = {},
): Promise<BatchResult> => {
  const base = forRun(stepDeps, event.run);
  const key = `${failedAttemptsPrefix(event.run.runId, event.batch.page)}${event.batch.batch}-${randomUUID()}.json`;
  const put = { ...zeroCounts(), s3: 1, byType: { 's3.PutObject': 1 } };
  // The attempt's marker, before the first byte it stages: an attempt that is killed (timeout, out of
  // memory) after that leaves it, so Tally knows the batch was interrupted and its groups are revisited
  // once their leftovers are collectable. An attempt that stages nothing (a delete run's batch) leaves
  // nothing to collect and writes none. Its PUT is counted where it is sent (the staging group's step).
  let marked: Promise<void> | undefined;
  const mark = (s3: S3Client): Promise<void> => {
    marked ??= putJson({ s3, bucket: base.bucket }, key, {
      format: FAILED_ATTEMPT_FORMAT,
      requests: put,
      interrupted: true,
    }).catch((err: unknown) => {
      marked = undefined;
      throw err;
    });
    return marked;
  };
  const dryRun = event.run.dryRun;
  const deps = dryRun ? base : markingBeforeStaging(base, mark);
  const stageDeps = hooks.depsFor;
  const marking: BatchHooks =
    dryRun || !stageDeps
      ? hooks
      : {
          ...hooks,
          depsFor: (stage) => {
            const d = stageDeps(stage);
            return d && markingBeforeStaging(d, mark);
          },
        };
  const attempt = await deps.meter.settle(() =>
    archiveBatchOnce(deps, event, marking, dryRun ? undefined : { key, written: () => marked !== undefined }),
  );
  if ('value' in attempt) {
    const { markerRemoved, ...value } = attempt.value;
    if (dryRun) return value;
    // Normally gone with the batch's last DeleteObjects (archiveBatchOnce); alone only if that failed for
    // it, or the attempt staged a part it did not commit.
    const { requests: done } =
      markerRemoved || marked === undefined
        ? { requests: undefined }
        : await deps.meter.measure(() =>
            deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key })),
          );
    return { ...value, overhead: addCounts(value.overhead, done) };
  }
  // The record's own PUT is among the attempt's requests too (the marker's, if sent, already is).
  const requests = addCounts(attempt.requests, dryRun ? undefined : put);
  await putJson(base, key, { format: FAILED_ATTEMPT_FORMAT, requests, interrupted: true }).catch(
    () => undefined,
  );
  throw attempt.error;
};

export const FAILED_ATTEMPT_FORMAT = 'job-details-archive/failed-attempt@1';

const archiveBatchOnce = async (
  deps: StepDeps,
  event: BatchEvent,
  hooks: BatchHooks,
  /** The attempt's marker, if written: removed in the batch's last DeleteObjects, once everything else is done. */
  marker: { readonly key: string; readonly written: () => boolean } | undefined,
): Promise<BatchResult & { markerRemoved: boolean }> => {
  const { run } = event;
  // The batch's planned jobs and their hot objects (Plan listed the whole page in one walk) in one
  // ranged GET; only jobs of a plan without a listing are listed here.
  const { value: batchInput, requests: readPlan } = await deps.meter.measure(async () => {
    const jobs = await readBatchJobs(deps, run, event.batch.groups);
    // Forgotten shops (docs/erasure.md): the watermark's erasure summary, one GET for the batch.
    const erasure = await readErasureSummary(deps);
    const ids = event.batch.groups.flatMap((g) => jobs.get(g).map((j) => j.job_id));
    const unlisted = ids.filter((id) => !jobs.listed.has(id));
    const listing = new Map(jobs.listed);
    if (unlisted.length > 0) {
      for (const [id, objects] of (await listJobsObjects(deps.s3, deps.bucket, unlisted)).objects)
        listing.set(id, objects);
    }
    return { jobs, listing, erasure };
  });
  const { jobs, listing, erasure } = batchInput;
  const del = hooks.depsFor?.('delete') ?? deps;
  const staging: string[] = [];
  // Packed groups (and later groups of shop-months packed before) go into one shared part per month
  // (pack-month.ts); the month's shared index is read once, only for months with such groups.
  const { value: routed, requests: sharedReads } = await deps.meter.measure(async () => {
    const months = [...new Set(event.batch.groups.filter((g) => g.pack).map((g) => g.month))].sort();
    const shared = new Map<string, LoadedShared>();
    for (const m of months) shared.set(m, await loadSharedIndex(deps, m));
    const packed = (g: PlannedGroup): boolean =>
      g.pack === true ||
      (g.pack === 'if-packed' && (shared.get(g.month)?.index.views.has(g.shopId) ?? false));
    return { shared, packed };
  });
  const own = event.batch.groups.filter((g) => !routed.packed(g));
  // A forgotten shop's jobs completed before its forget are never archived (docs/erasure.md).
  const kept = (g: PlannedGroup) =>
    jobs.get(g).filter((j) => !isForgottenIn(erasure, g.shopId, j.completed_at));
  // Not measured as a whole: each group's stages count their own requests, the shared steps theirs.
  const packs: MonthPack[] = [];
  let collecting = zeroCounts();
  // One batch of the page collects a month's shared staging (PlannedBatch.collectShared).
  const collects = (month: string): boolean => event.batch.collectShared?.includes(month) ?? false;
  for (const [month, loaded] of routed.shared) {
    const groups = event.batch.groups.filter((g) => g.month === month && routed.packed(g));
    if (groups.length === 0) {
      // Groups of a month with a shared index that all go to parts of their own: among them the revisit
      // of a batch that died before its shared commit (its shops are in no view). packMonth is never
      // called for them, so what that batch staged is collected here (1 LIST), as a group's own
      // staging is by its own archive step.
      if (!run.dryRun && collects(month)) {
        const gc = await deps.meter.measure(() => collectAbandonedShared(deps, run, loaded));
        collecting = addCounts(collecting, gc.requests);
      }
      continue;
    }
    packs.push(await packMonth(deps, run, loaded, groups, kept, listing, staging, hooks, collects(month)));
  }
  const packing = packs.reduce((n, p) => addCounts(n, p.overhead), collecting);
  const prepared = [
    ...(await mapLimit(own, BATCH_GROUP_CONCURRENCY, async (group) => {
      try {
        return await prepareGroup(deps, { run, group }, jobs.get(group), listing, staging, hooks, erasure);
      } catch (err) {
        return fail({ shopId: group.shopId, month: group.month }, err);
      }
    })),
    ...packs.flatMap((p) => p.prepared),
  ];

  // The hot objects of every group in as few DeleteObjects calls as the batch allows (1,000 keys a
  // call, each conditional on its ETag), then each group marks what is gone.
  const ready = prepared.filter((p): p is Prepared => 'del' in p);
  const { value: outcome, requests: deletion } = await deps.meter.measure(() =>
    deleteMatching(
      del,
      ready.flatMap((p) => p.del.toDelete),
    ),
  );
  let results = await mapLimit(prepared, BATCH_GROUP_CONCURRENCY, async (p): Promise<GroupFinished> => {
    if (!('del' in p)) return p;
    try {
      const d = await p.del.finish(outcome);
      hooks.groupDone?.({ group: p.group, archive: p.archive, delete: d });
      return { group: p.ref, archive: p.archive.summary, delete: d.summary };
    } catch (err) {
      hooks.groupDone?.({ group: p.group, archive: p.archive });
      return fail(p.ref, err);
    }
  });
  // The deletion marks of packed groups, one shared-index write per month; if it fails, its groups
  // fail (their objects may be gone: the next run finds them so and marks the entries).
  const { requests: marking } = await deps.meter.measure(async () => {
    for (const p of packs) {
      try {
        await p.flush();
      } catch (err) {
        const shops = new Set(p.prepared.map((x) => ('ref' in x ? `${x.ref.shopId}/${x.ref.month}` : '')));
        results = results.map((r) =>
          !('failed' in r) && shops.has(`${r.group.shopId}/${r.group.month}`) ? fail(r.group, err) : r,
        );
      }
    }
  });
  // The pending docs of the parts committed above, all of the batch at once (a leftover one is
  // removed by the next archive of its group: its part is in the index), and last the attempt's
  // marker in the same call (its work is done): one request fewer per batch that staged a part.
  const { value: markerRemoved, requests: cleanup } = await deps.meter.measure(async () => {
    if (staging.length === 0) return false;
    const last = marker?.written() ? marker.key : undefined;
    const all = last === undefined ? staging : [...staging, last];
    let removed = false;
    for (const keys of chunks(all)) {
      const res = await deps.s3.send(
        new DeleteObjectsCommand({
          Bucket: deps.bucket,
          Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      if (last !== undefined && keys.includes(last))
        removed = !(res.Errors ?? []).some((e) => e.Key === last);
    }
    return removed;
  });
  const shared = addCounts(addCounts(sharedReads, packing), marking);
  // A done group's requests leave the batch in its overhead, its result keeps the counts (GroupDone).
  let groupRequests = zeroCounts();
  const counted = results.map((r): GroupResult => {
    if ('failed' in r) return r;
    const { requests: archived, ...archive } = r.archive;
    const { requests: deleted, ...del } = r.delete;
    groupRequests = addCounts(addCounts(groupRequests, archived), deleted);
    return { group: r.group, archive, delete: del };
  });
  return {
    results: counted,
    overhead: addCounts(addCounts(addCounts(addCounts(readPlan, deletion), cleanup), shared), groupRequests),
    markerRemoved,
  };
};
