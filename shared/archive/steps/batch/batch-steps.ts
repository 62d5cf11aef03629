import { DeleteObjectCommand, DeleteObjectsCommand } from '@aws-sdk/client-s3';
import { mapLimit } from '../../../concurrency';
import { addCounts, zeroCounts } from '../../../metrics';
import { randomUUID } from 'node:crypto';
import { failedAttemptsPrefix } from '../../format/keys';
import { putJson } from '../../../s3/objects';
import { archiveGroupInMemory } from '../archive/archive-group';
import { commitPartInMemory } from '../commit/commit-part';
import type { StepDeps } from '../context';
import { chunks } from '../delete/delete-plan';
import { deleteMatching } from '../delete/delete-objects';
import { type PreparedDelete, prepareDelete } from '../delete/delete-sources';
import { readBatchJobs } from '../plan/planned-jobs';
import { listJobsObjects } from '../../../details/hot-listing';
import { CAPS } from '../run';
import { truncate } from '../shape';
import type {
  ArchiveStaged,
  BatchEvent,
  BatchResult,
  CommitResult,
  GroupResult,
  VerifyResult,
} from '../types';
import { verifyPartInMemory } from '../verify/verify-part';

/**
 * ArchiveBatch: one child execution of the page's Distributed Map, one invocation for a batch of
 * shop-months. Each group goes through the same steps as ever — archive (stage a part), verify (read
 * it back whole), commit (conditional index write), delete (hot objects of committed jobs past the
 * grace period) — in one process, so what a step learned is handed to the next instead of re-read:
 * the index the archive step read is the commit's starting point (its ETag guards the write), the
 * manifest it staged is what verify checks the stored bytes against, the part verify read back is not
 * HEADed again, and the listing of the archived jobs is what delete removes from; the hot objects of
 * all the batch's groups go in shared DeleteObjects calls (1,000 keys each). A crash anywhere
 * leaves what a crash between the old separate steps left; the next run converges the same way.
 *
 * A group's failure is caught and reported (its hot data stays); one bad shop-month never fails its
 * batch. What escapes is a batch-level fault (bad event, unreadable plan): the Task retries it and,
 * if it persists, the ResultWriter records the child as failed and Tally counts its groups failed.
 */

/** Groups of a batch worked on at once (each streams its own part; memory stays a few groups' worth). */
export const BATCH_GROUP_CONCURRENCY = 4;

const failure = (err: unknown): { error: string; cause: string } => {
  const e = err instanceof Error ? err : new Error(String(err));
  return { error: truncate(e.name, 100), cause: truncate(e.message, CAPS.reason * 2) };
};

/**
 * ArchiveBatch, its requests counted once each across Task retries: an attempt that throws (the Task
 * retries it) records what it sent under the run's `attempts/`, and Tally adds those to the run.
 * (An invocation that is killed or times out takes its counts with it.)
 */
export const archiveBatch = async (deps: StepDeps, event: BatchEvent): Promise<BatchResult> => {
  const key = `${failedAttemptsPrefix(event.run.runId, event.batch.page)}${event.batch.batch}-${randomUUID()}.json`;
  const put = { ...zeroCounts(), s3: 1, byType: { 's3.PutObject': 1 } };
  // The attempt's marker first: an attempt that is killed (timeout, out of memory) leaves it, so Tally
  // knows the batch was interrupted and its groups are revisited once their leftovers are collectable.
  if (!event.run.dryRun) {
    await deps.meter.measure(() =>
      putJson(deps, key, { format: FAILED_ATTEMPT_FORMAT, requests: put, interrupted: true }),
    );
  }
  const attempt = await deps.meter.settle(() => archiveBatchOnce(deps, event));
  if ('value' in attempt) {
    if (event.run.dryRun) return attempt.value;
    const { requests: done } = await deps.meter.measure(() =>
      deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key })),
    );
    const overhead = addCounts(addCounts(attempt.value.overhead, put), done);
    return { ...attempt.value, overhead };
  }
  // The record's own PUTs (marker and this one) are among the attempt's requests too.
  const requests = addCounts(addCounts(attempt.requests, put), event.run.dryRun ? undefined : put);
  await putJson(deps, key, { format: FAILED_ATTEMPT_FORMAT, requests, interrupted: true }).catch(
    () => undefined,
  );
  throw attempt.error;
};

export const FAILED_ATTEMPT_FORMAT = 'job-details-archive/failed-attempt@1';

const archiveBatchOnce = async (deps: StepDeps, event: BatchEvent): Promise<BatchResult> => {
  const { run } = event;
  // The batch's planned jobs and their hot objects (Plan listed the whole page in one walk) in one
  // ranged GET; only jobs of a plan without a listing are listed here.
  const { value: batchInput, requests: readPlan } = await deps.meter.measure(async () => {
    const jobs = await readBatchJobs(deps, run, event.batch.groups);
    const ids = event.batch.groups.flatMap((g) => jobs.get(g).map((j) => j.job_id));
    const unlisted = ids.filter((id) => !jobs.listed.has(id));
    const listing = new Map(jobs.listed);
    if (unlisted.length > 0) {
      for (const [id, objects] of (await listJobsObjects(deps.s3, deps.bucket, unlisted)).objects)
        listing.set(id, objects);
    }
    return { jobs, listing };
  });
  const { jobs, listing } = batchInput;
  const staging: string[] = [];
  type Prepared = { ref: GroupResult['group']; archive: ArchiveStaged; del: PreparedDelete };
  const fail = (ref: GroupResult['group'], err: unknown): GroupResult => ({
    group: ref,
    failed: true,
    ...failure(err),
  });

  // Archive, verify and commit every group, and work out which hot objects each may delete.
  const prepared = await mapLimit(event.batch.groups, BATCH_GROUP_CONCURRENCY, async (group) => {
    const ref = { shopId: group.shopId, month: group.month };
    try {
      const planned = jobs.get(group);
      const item = { run, group };
      const a = await archiveGroupInMemory(deps, item, planned, listing, { stageManifest: false });
      const r = a.result;
      const archive: ArchiveStaged = {
        ...(r.partKey ? { partKey: r.partKey, partName: r.partName, pendingKey: r.pendingKey } : {}),
        summary: r.summary,
      };
      let index = a.index;
      let verify: VerifyResult | undefined;
      let commit: CommitResult | undefined;
      const checkedParts = new Set<string>();
      if (a.staged && archive.partName) {
        const v = await verifyPartInMemory(deps, { ...item, archive }, planned, {
          staged: a.staged,
          persist: false,
        });
        verify = v.result;
        const c = await commitPartInMemory(
          deps,
          { ...item, archive, verify },
          { verified: v.verified, index: a.index },
        );
        commit = c.result;
        index = c.index;
        staging.push(...c.staging);
        checkedParts.add(archive.partName);
      }
      const del = await prepareDelete(
        deps,
        { ...item, archive, ...(verify ? { verify } : {}), ...(commit ? { commit } : {}) },
        planned,
        { index, checkedParts, ...(a.listed ? { listed: a.listed } : {}) },
      );
      return { ref, archive, del } satisfies Prepared;
    } catch (err) {
      return fail(ref, err);
    }
  });

  // The hot objects of every group in as few DeleteObjects calls as the batch allows (1,000 keys a
  // call, each conditional on its ETag), then each group marks what is gone.
  const ready = prepared.filter((p): p is Prepared => 'del' in p);
  const { value: outcome, requests: deletion } = await deps.meter.measure(() =>
    deleteMatching(
      deps,
      ready.flatMap((p) => p.del.toDelete),
    ),
  );
  const results = await mapLimit(prepared, BATCH_GROUP_CONCURRENCY, async (p): Promise<GroupResult> => {
    if (!('del' in p)) return p;
    try {
      const d = await p.del.finish(outcome);
      return { group: p.ref, archive: p.archive.summary, delete: d.summary };
    } catch (err) {
      return fail(p.ref, err);
    }
  });
  // The pending docs of the parts committed above, all of the batch at once (a leftover one is
  // removed by the next archive of its group: its part is in the index).
  const { requests: cleanup } = await deps.meter.measure(async () => {
    for (const keys of chunks(staging)) {
      await deps.s3.send(
        new DeleteObjectsCommand({
          Bucket: deps.bucket,
          Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
        }),
      );
    }
  });
  return { results, overhead: addCounts(addCounts(readPlan, deletion), cleanup) };
};
