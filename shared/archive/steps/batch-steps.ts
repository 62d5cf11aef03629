import { mapLimit } from '../../concurrency';
import { addCounts, type RequestCounts, zeroCounts } from '../../metrics';
import { archiveGroup } from './archive-group';
import { commitPartStep } from './commit-part';
import type { StepDeps } from './context';
import { deleteSources } from './delete-sources';
import { type BatchJobs, readBatchJobs } from './planned-jobs';
import { CAPS } from './run';
import { truncate } from './shape';
import type { ArchiveStaged, BatchEvent, BatchResult, BatchState, GroupResult, GroupSlot } from './types';
import { verifyPart } from './verify-part';

/**
 * The four steps of one batch (a child execution of the page's Distributed Map): each runs its
 * per-group step for every group of the batch still in play. A group's failure is caught and carried
 * in its slot (its later steps skip it, Tally reports it), so one bad shop-month never fails its batch;
 * what escapes is a batch-level fault (bad event, unreadable plan), retried by the Task and, if it
 * persists, recorded by the ResultWriter as a failed child whose groups Tally counts as failed.
 */

/** Groups of a batch worked on at once (each streams its own part; memory stays a few groups' worth). */
export const BATCH_GROUP_CONCURRENCY = 4;

const failure = (err: unknown): { error: string; cause: string } => {
  const e = err instanceof Error ? err : new Error(String(err));
  return { error: truncate(e.name, 100), cause: truncate(e.message, CAPS.reason * 2) };
};

/** The batch's planned jobs, read once per step (one ranged GET), counted as batch overhead. */
const withJobs = async (deps: StepDeps, event: BatchEvent) =>
  deps.meter.measure(() => readBatchJobs(deps, event.run, event.batch.groups));

const overheadOf = (state: BatchEvent | BatchState): RequestCounts =>
  'overhead' in state && state.overhead ? state.overhead : zeroCounts();

const eachSlot = async (
  deps: StepDeps,
  slots: readonly GroupSlot[],
  work: (slot: GroupSlot) => Promise<GroupSlot>,
): Promise<GroupSlot[]> =>
  mapLimit(slots, BATCH_GROUP_CONCURRENCY, async (slot) => {
    if (slot.failed) return slot;
    try {
      return await work(slot);
    } catch (err) {
      return { group: slot.group, failed: failure(err) };
    }
  });

/** ArchiveParts: one new part per group (ArchiveGroup), streamed and staged. */
export const archiveParts = async (deps: StepDeps, event: BatchEvent): Promise<BatchState> => {
  const { value: jobs, requests } = await withJobs(deps, event);
  const slots = await eachSlot(
    deps,
    event.batch.groups.map((group) => ({ group })),
    async ({ group }) => {
      const r = await archiveGroup(deps, { run: event.run, group }, jobs.get(group));
      const archive: ArchiveStaged = {
        ...(r.partKey ? { partKey: r.partKey, partName: r.partName, pendingKey: r.pendingKey } : {}),
        summary: r.summary,
      };
      return { group, archive };
    },
  );
  return { run: event.run, batch: event.batch, slots, overhead: addCounts(overheadOf(event), requests) };
};

const partOf = (slot: GroupSlot) => (slot.archive?.partKey ? slot.archive : undefined);

/** VerifyParts: every staged part checked against its manifest before anything is committed. */
export const verifyParts = async (deps: StepDeps, state: BatchState): Promise<BatchState> => {
  const staged = state.slots.some((s) => !s.failed && partOf(s));
  const read = staged ? await withJobs(deps, state) : null;
  const jobs = read?.value as BatchJobs | undefined;
  const slots = await eachSlot(deps, state.slots, async (slot) => {
    const archive = partOf(slot);
    if (!archive || !jobs) return slot;
    const verify = await verifyPart(deps, { run: state.run, group: slot.group, archive }, jobs.get(slot.group));
    return { ...slot, verify };
  });
  return { ...state, slots, overhead: addCounts(overheadOf(state), read?.requests) };
};

/** CommitParts: each verified part into its month index (the conditional write readers see). */
export const commitParts = async (deps: StepDeps, state: BatchState): Promise<BatchState> => {
  const slots = await eachSlot(deps, state.slots, async (slot) => {
    const archive = partOf(slot);
    if (!archive || !slot.verify) return slot;
    const commit = await commitPartStep(deps, {
      run: state.run,
      group: slot.group,
      archive,
      verify: slot.verify,
    });
    return { ...slot, commit };
  });
  return { ...state, slots };
};

/**
 * DeleteSources: the hot objects of committed, verified jobs past the grace period. Its output is
 * the child execution's output: per group, counts only (or the failure), plus the batch's overhead.
 */
export const deleteBatchSources = async (deps: StepDeps, state: BatchState): Promise<BatchResult> => {
  const { value: jobs, requests } = await withJobs(deps, state);
  const results = await mapLimit(state.slots, BATCH_GROUP_CONCURRENCY, async (slot): Promise<GroupResult> => {
    const ref = { shopId: slot.group.shopId, month: slot.group.month };
    if (slot.failed) return { group: ref, failed: true, ...slot.failed };
    const archive = slot.archive;
    if (!archive) return { group: ref, failed: true, error: 'InvalidInputError', cause: 'no archive step result' };
    try {
      const d = await deleteSources(
        deps,
        {
          run: state.run,
          group: slot.group,
          archive,
          ...(slot.verify ? { verify: slot.verify } : {}),
          ...(slot.commit ? { commit: slot.commit } : {}),
        },
        jobs.get(slot.group),
      );
      return { group: ref, archive: archive.summary, delete: d.summary };
    } catch (err) {
      return { group: ref, failed: true, ...failure(err) };
    }
  });
  return { results, overhead: addCounts(overheadOf(state), requests) };
};
