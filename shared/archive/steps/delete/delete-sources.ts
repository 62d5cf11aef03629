import { VerificationError } from '../../../errors';
import { addCounts, type RequestCounts, zeroCounts } from '../../../metrics';
import { latestEntry, markDeleted, partByName } from '../../format/month-index';
import { assertPartStored } from '../commit/commit-part';
import type { StepDeps } from '../context';
import { deleteMatching } from './delete-objects';
import { type DeleteErrorItem, writeGroupFindings } from '../report/findings';
import { deletedByRun, eligibleForDelete, matchSources, waitingForGrace } from './delete-plan';
import { type LoadedIndex, loadMonthIndex, updateMonthIndex } from '../commit/index-store';
import type { JobObject } from '../../../details';
import { listJobsObjects } from '../../../details/hot-listing';
import { readPlannedJobs } from '../plan/planned-jobs';
import { CAPS } from '../run';
import type { DeleteEvent, DeleteResult, PlannedJob } from '../types';

/**
 * What the steps before this one in the same invocation know: the index as the commit wrote it (with
 * its ETag), the parts verify read back whole a moment ago (not HEADed again), and the hot objects the
 * archive step listed (used when they cover every eligible job; otherwise the prefix is listed).
 */
export interface DeleteHandoff {
  readonly index: LoadedIndex;
  readonly checkedParts: ReadonlySet<string>;
  readonly listed?: ReadonlyMap<string, readonly JobObject[]>;
}

/**
 * DeleteSources: removes the hot objects of planned jobs whose latest archival is committed (and past
 * the grace period), but only objects whose key, size AND ETag are what that archival recorded —
 * anything written since (a retry) is kept. An entry is marked deleted only once all its matched
 * objects are gone; otherwise a later run finishes the job.
 *
 * "Now" for the grace period is the later of the run's logical `now` and the real clock: a job
 * committed in this run is compared with the clock that stamped it, and Plan refuses a `now` more than
 * MAX_NOW_AHEAD_MS (5 min) past the execution's start, so the input can shorten the grace by at most that.
 */
export const deleteSources = async (
  deps: StepDeps,
  event: DeleteEvent,
  plannedJobs?: readonly PlannedJob[],
  known?: DeleteHandoff,
): Promise<DeleteResult> => {
  const prepared = await prepareDelete(deps, event, plannedJobs, known);
  const { value: result, requests } = await deps.meter.measure(() => deleteMatching(deps, prepared.toDelete));
  return prepared.finish(result, requests);
};

export type DeleteOutcome = Awaited<ReturnType<typeof deleteMatching>>;

/**
 * The delete step in two halves, so a batch can delete the sources of all its groups in one
 * DeleteObjects call: `toDelete` are the objects to remove (conditional on their ETags), `finish`
 * takes what the deletion did to them, marks the entries whose objects are all gone and builds the
 * result (`deletion` = the requests of the deletion, whoever made it).
 */
export interface PreparedDelete {
  readonly toDelete: ReadonlyArray<{ key: string; etag: string }>;
  finish(outcome: DeleteOutcome, deletion?: RequestCounts): Promise<DeleteResult>;
}

export const prepareDelete = async (
  deps: StepDeps,
  event: DeleteEvent,
  plannedJobs?: readonly PlannedJob[],
  known?: DeleteHandoff,
): Promise<PreparedDelete> => {
  const { run, group } = event;
  const { value: plan, requests: before } = await deps.meter.measure(async () => {
    const loaded = known?.index ?? (await loadMonthIndex(deps, group.shopId, group.month));
    const { index } = loaded;
    // A batch step passes the jobs it read once for all its groups.
    const planned = plannedJobs ?? (await readPlannedJobs(deps, run, group));
    const asOf = Math.max(Date.parse(run.now), deps.clock().getTime());
    const eligible = eligibleForDelete(index, planned, asOf, run.graceHours);
    const waiting = waitingForGrace(index, planned, asOf, run.graceHours);
    if (eligible.length === 0) return { eligible, matched: [], objectsKept: 0, planned, index, waiting };

    // Last line of defence: never delete sources whose archive is not stored as committed.
    for (const name of new Set(eligible.map((e) => e.entry.part))) {
      const part = partByName(index, name);
      if (!part) throw new VerificationError(name, 'index entry points at a part the index does not list');
      if (!known?.checkedParts.has(name)) await assertPartStored(deps, part.key, part);
    }

    const handedOver = known?.listed;
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
    const matched = eligible.map((e) => ({ ...e, ...matchSources(e.entry, listed.get(e.jobId) ?? []) }));
    const objectsKept = matched.reduce((n, m) => n + m.kept, 0);
    return { eligible, matched, objectsKept, planned, index, waiting };
  });
  const { eligible, matched, objectsKept, planned, waiting } = plan;
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
      if (done.length > 0) {
        const at = deps.clock().toISOString();
        const written = await updateMonthIndex(
          deps,
          group.shopId,
          group.month,
          (current) => {
            // Re-read on every attempt: mark only entries that are still the latest and undeleted.
            const still = done.filter((d) => {
              const latest = latestEntry(current, d.jobId);
              return latest?.part === d.part && latest.deleted_at === null;
            });
            return still.length > 0
              ? { index: markDeleted(current, still, at, run.runId), result: null }
              : { index: null, result: null };
          },
          undefined,
          known?.index,
        );
        after = written.index;
      }
      // Counted from the index: every entry this run marked, whichever attempt of it did the work.
      const counted = deletedByRun(after, planned, run.runId);
      return { objectsDeleted: counted.objects, errors, jobsCompleted: counted.jobs };
    });
    const { errors, ...counts } = value;
    return {
      summary: {
        ...counts,
        objectsKept,
        deleteErrorCount: errors.length,
        ...(waiting > 0 && !run.dryRun ? { jobsWaiting: waiting } : {}),
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
