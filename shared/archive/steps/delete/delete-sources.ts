import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { JobObject } from '../../../details';
import { listJobsObjects } from '../../../details/hot-listing';
import { META_SHOP_ID } from '../../../details/store';
import { VerificationError } from '../../../errors';
import { addCounts, type RequestCounts, zeroCounts } from '../../../metrics';
import {
  type IndexedPart,
  latestEntry,
  type MonthIndex,
  markDeleted,
  markRearchive,
  partByName,
} from '../../format';
import { headCheck } from '../../part-integrity';
import { changedSincePlan } from '../archive/classify';
import { readJobRows } from '../archive/job-rows';
import { CAPS } from '../caps';
import { type LoadedIndex, updateMonthIndex } from '../commit/index-store';
import type { StepDeps } from '../context';
import { type DeleteErrorItem, writeGroupFindings } from '../run-files/findings';
import type { DeleteInput, DeleteResult, PlannedJob } from '../types';
import type { deleteMatching } from './delete-objects';
import {
  deletedByRun,
  eligibleForDelete,
  matchSources,
  settledByRun,
  settleParts,
  waitingForGrace,
} from './delete-plan';

/**
 * What the steps before this one in the same invocation know: the index as the commit wrote it (with
 * its ETag), the parts verify read back whole a moment ago (still HEADed: see below), and the hot objects the
 * archive step listed (used when they cover every eligible job; otherwise the prefix is listed).
 */
export interface DeleteHandoff {
  readonly index: LoadedIndex;
  readonly checkedParts: ReadonlySet<string>;
  readonly listed?: ReadonlyMap<string, readonly JobObject[]>;
  /**
   * Where the index is rewritten (default: the group's month index, conditionally). A packed group's
   * view goes into its month's shared index, written once for all the batch's packed groups
   * (pack-month.ts); `change` must be a pure function of the index it is given.
   */
  readonly update?: (
    change: (current: MonthIndex) => MonthIndex | null,
    base: LoadedIndex,
  ) => Promise<LoadedIndex>;
  /** The part check before any deletion (default: headCheck); a shared part is HEADed once per batch. */
  readonly head?: (part: IndexedPart) => Promise<void>;
}

export type DeleteOutcome = Awaited<ReturnType<typeof deleteMatching>>;

/**
 * A group's delete stage, in two halves so a batch deletes the sources of all its groups in shared
 * DeleteObjects calls. It removes the hot objects of planned jobs whose latest archival is committed
 * (and past the grace period), but only objects whose key, size AND ETag are what that archival
 * recorded — anything written since (a retry) is kept. `toDelete` are the objects to remove
 * (conditional on their ETags); `finish` takes what the deletion did to them, marks the entries whose
 * objects are all gone (otherwise a later run finishes the job) and builds the result (`deletion` =
 * the requests of the deletion, whoever made it).
 *
 * "Now" for the grace period is the later of the run's logical `now` and the real clock: a job
 * committed in this run is compared with the clock that stamped it, and Plan refuses a `now` more than
 * MAX_NOW_AHEAD_MS (5 min) past the execution's start, so the input can shorten the grace by at most that.
 */
export interface PreparedDelete {
  readonly toDelete: ReadonlyArray<{ key: string; etag: string }>;
  finish(outcome: DeleteOutcome, deletion?: RequestCounts): Promise<DeleteResult>;
}

export const deleteSources = async (
  deps: StepDeps,
  event: DeleteInput,
  planned: readonly PlannedJob[],
  known: DeleteHandoff,
): Promise<PreparedDelete> => {
  const { run, group } = event;
  const { value: plan, requests: before } = await deps.meter.measure(async () => {
    const { index } = known.index;
    const asOf = Math.max(Date.parse(run.now), deps.clock().getTime());
    const eligible = eligibleForDelete(index, planned, asOf, run.graceHours);
    const waiting = waitingForGrace(index, planned, asOf, run.graceHours);
    if (eligible.length === 0)
      return { eligible, matched: [], changed: [], objectsKept: 0, planned, index, waiting };

    // Last line of defence: never delete sources whose archive is not provably the bytes committed.
    // 1 HEAD per part against the size and ETag recorded at commit — even for a part verify read back
    // moments ago in this invocation, so nothing that happened to it since the commit goes unseen. A
    // damaged part throws: its group fails and every hot copy stays.
    for (const name of new Set(eligible.map((e) => e.entry.part))) {
      const part = partByName(index, name);
      if (!part) throw new VerificationError(name, 'index entry points at a part the index does not list');
      await (known.head ?? ((p) => headCheck(deps.s3, deps.bucket, p)))(part);
    }

    const handedOver = known.listed;
    const listed =
      handedOver && eligible.every((e) => handedOver.has(e.jobId))
        ? handedOver
        : (
            await listJobsObjects(
              deps.s3,
              deps.bucket,
              eligible.map((e) => e.jobId),
            )
          ).objects;
    const all = eligible.map((e) => ({ ...e, ...matchSources(e.entry, listed.get(e.jobId) ?? []) }));
    // A job whose prefix holds anything its entry does not cover (rewritten or added since the commit)
    // keeps ALL its objects and its entry stays undeleted, so every reader still reads its hot prefix;
    // the entry is marked `rearchive` and the next archive of the group archives the prefix again —
    // unless its row moved on (a retry: a new completion, whose own archival takes the new objects
    // and which readers of the new completion read hot): then what this entry archived goes as usual.
    // The rows are read (one BatchGetItem) only when some prefix changed.
    // Objects another shop's `shop-id` names (job ids are unique per shop only) are not this job's
    // changes: 1 HEAD per unmatched object, only for prefixes that hold any.
    const foreign = new Set<string>();
    for (const m of all.filter((x) => x.kept > 0)) {
      const removing = new Set(m.remove.map((o) => o.key));
      for (const o of listed.get(m.jobId) ?? []) {
        if (removing.has(o.key)) continue;
        const head = await deps.s3
          .send(new HeadObjectCommand({ Bucket: deps.bucket, Key: o.key }))
          .catch(() => undefined);
        const owner = head?.Metadata?.[META_SHOP_ID];
        if (owner !== undefined && owner !== group.shopId) foreign.add(o.key);
      }
    }
    const ownKept = (m: (typeof all)[number]): number => {
      const removing = new Set(m.remove.map((o) => o.key));
      return (listed.get(m.jobId) ?? []).filter((o) => !removing.has(o.key) && !foreign.has(o.key)).length;
    };
    const kept = all.filter((m) => ownKept(m) > 0);
    const rows =
      kept.length > 0
        ? await readJobRows(
            deps,
            group.shopId,
            kept.map((m) => m.jobId),
          )
        : new Map();
    const byId = new Map(planned.map((j) => [j.job_id, j]));
    const retried = (jobId: string): boolean => {
      const job = byId.get(jobId);
      return job !== undefined && changedSincePlan(job, rows.get(jobId));
    };
    const matched = all.filter((m) => ownKept(m) === 0 || retried(m.jobId));
    const changed = all.filter((m) => ownKept(m) > 0 && !retried(m.jobId));
    const objectsKept =
      matched.reduce((n, m) => n + m.kept, 0) + changed.reduce((n, m) => n + m.kept + m.remove.length, 0);
    return { eligible, matched, changed, objectsKept, planned, index, waiting };
  });
  const { eligible, matched, changed, objectsKept, waiting } = plan;
  const toDelete = run.dryRun ? [] : matched.flatMap((m) => m.remove);

  const finish = async (outcome: DeleteOutcome, deletion?: RequestCounts): Promise<DeleteResult> => {
    const { value, requests: after } = await deps.meter.measure(async () => {
      if (run.dryRun) {
        const wouldDelete = matched.reduce((n, m) => n + m.remove.length, 0);
        return {
          objectsDeleted: wouldDelete,
          errors: [] as DeleteErrorItem[],
          jobsCompleted: eligible.length,
        };
      }
      const mine = new Set(toDelete.map((o) => o.key));
      const errors: DeleteErrorItem[] = outcome.errors.filter((e) => mine.has(e.key));
      const failedKeys = new Set(errors.map((e) => e.key));
      // Every error goes to the findings document; the result carries the count and a sample.
      if (errors.length > 0) await writeGroupFindings(deps, event, 'delete-errors', errors);
      // A job is done once every matching source is gone; its sources less those kept as changed are
      // what its entry records as deleted.
      const done = matched
        .filter((m) => m.remove.every((o) => !failedKeys.has(o.key)))
        .map((m) => ({ jobId: m.jobId, part: m.entry.part, objects: m.entry.sources.length - m.changed }));
      let after = plan.index;
      let lastEtag = known.index.etag ?? null;
      const write =
        known.update ??
        (async (
          change: (current: MonthIndex) => MonthIndex | null,
          base: LoadedIndex,
        ): Promise<LoadedIndex> => {
          const w = await updateMonthIndex(
            deps,
            group.shopId,
            group.month,
            (current) => {
              const next = change(current);
              return next ? { index: next, result: null } : { index: null, result: null };
            },
            undefined,
            base,
          );
          return { index: w.index, etag: w.etag };
        });
      if (changed.length > 0) {
        const at = deps.clock().toISOString();
        const marks = changed.map((m) => ({ jobId: m.jobId, part: m.entry.part }));
        const written = await write((current) => markRearchive(current, marks, at), known.index);
        after = written.index;
        lastEtag = written.etag;
      }
      // The index as marked, before its parts settle: what the report counts (a settled part's
      // entries leave the index, and with them the per-job deleted counts).
      let marked: MonthIndex | undefined;
      if (done.length > 0) {
        const at = deps.clock().toISOString();
        const written = await write(
          (current) => {
            // Re-read on every attempt: mark only entries that are still the latest and undeleted.
            const still = done.filter((d) => {
              const latest = latestEntry(current, d.jobId);
              return latest?.part === d.part && latest.deleted_at === null;
            });
            marked = undefined;
            if (still.length === 0) return null;
            marked = markDeleted(current, still, at, run.runId);
            // Every part whose last entry this delete marked turns settled (its entries become the
            // part's summary; a part that does not meet the condition keeps them): the index's bytes
            // at rest (docs/archive-format.md, "Settled part").
            return settleParts(marked, new Set(still.map((d) => d.part)));
          },
          changed.length > 0 ? { index: after, etag: lastEtag } : known.index,
        );
        after = written.index;
      }
      // Counted from the index: every entry this run marked, whichever attempt of it did the work. A
      // part settled by this run, but not in this attempt's write (`marked` holds its entries then),
      // was settled by an earlier attempt: its jobs count, its objects are that attempt's, named.
      const counted = deletedByRun(marked ?? after, planned, run.runId);
      const earlier = settledByRun(marked ?? after, run.runId);
      return {
        objectsDeleted: counted.objects,
        errors,
        jobsCompleted: counted.jobs + earlier.jobs,
        ...(earlier.parts > 0 ? { deletedEarlier: earlier } : {}),
      };
    });
    const { errors, ...counts } = value;
    return {
      summary: {
        ...counts,
        objectsKept,
        deleteErrorCount: errors.length,
        // Changed prefixes (kept, entry marked `rearchive`) wait like sources in their grace period:
        // the group goes on the watermark's retry list, so a later run archives them again.
        ...(waiting + changed.length > 0 && !run.dryRun ? { jobsWaiting: waiting + changed.length } : {}),
        requests: addCounts(
          addCounts(
            addCounts(addCounts(addCounts(zeroCounts(), before), deletion), after),
            event.verify?.requests,
          ),
          event.commit?.requests,
        ),
      },
      eligible: eligible.length,
      deleteErrors: errors.slice(0, CAPS.inline),
    };
  };
  return { toDelete, finish };
};
