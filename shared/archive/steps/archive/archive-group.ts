import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { VerificationError } from '../../../errors';
import { newPartName, partKey, pendingKey } from '../../format/keys';
import { PartBuilder } from '../../format/part-builder';
import { archivedByRun, assembleJob, changedSincePlan, classifyPlanned } from './classify';
import type { StepDeps } from '../context';
import { type QuarantineItem, writeGroupFindings } from '../report/findings';
import { type LoadedIndex, loadMonthIndex } from '../commit/index-store';
import { readJobRows } from './job-rows';
import { listJobsObjects } from '../../../details/hot-listing';
import type { JobObject } from '../../../details';
import { foreignReason, listingProblem, readJobSources } from './job-sources';
import { PartUpload } from './part-upload';
import { Semaphore } from '../../../concurrency';
import { orderedPrefetch } from './prefetch';
import { collectAbandonedParts } from './pending-gc';
import { readPlannedJobs } from '../plan/planned-jobs';
import { CAPS } from '../run';
import type { StagedPart } from './staged';
import { INTENT_FORMAT, type PartIntent } from '../../format/staging';
import { putJson } from '../../../s3/objects';
import type { ArchiveResult, GroupEvent, PlannedJob } from '../types';

/** Stored bytes of sources read ahead but not yet appended (decoded they are a few times larger). */
const READ_AHEAD_BYTES = 16 * 1024 * 1024;

interface OpenPart {
  readonly name: string;
  readonly key: string;
  readonly upload: PartUpload;
  readonly builder: PartBuilder;
}

const byJobId = (a: PlannedJob, b: PlannedJob): number =>
  a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0;

/**
 * ArchiveGroup: builds ONE new part for a shop × month from the planned jobs not yet committed with
 * the same completed_at, streaming it to S3, then writes the pending manifest verify checks it
 * against. Nothing here is visible to readers (only the index is) and nothing is deleted but
 * abandoned, uncommitted parts of dead runs.
 */
export const archiveGroup = async (
  deps: StepDeps,
  event: GroupEvent,
  plannedJobs?: readonly PlannedJob[],
): Promise<ArchiveResult> => (await archiveGroupInMemory(deps, event, plannedJobs)).result;

/** What the archive step saw and built, for the steps after it in the same invocation. */
export interface ArchiveHandoff {
  readonly result: ArchiveResult;
  /** The month index as read (its ETag for the commit's conditional write). */
  readonly index: LoadedIndex;
  /** The staged part's manifest, as written to its pending doc (absent: no part). */
  readonly staged?: StagedPart;
  /** The hot objects listed for the jobs it archived (what delete may remove of them). */
  readonly listed?: ReadonlyMap<string, readonly JobObject[]>;
}

export const archiveGroupInMemory = async (
  deps: StepDeps,
  event: GroupEvent,
  plannedJobs?: readonly PlannedJob[],
  /** The hot objects of (at least) the planned jobs, listed by the caller for its whole batch. */
  batchListing?: ReadonlyMap<string, readonly JobObject[]>,
  /** stageManifest: write the manifest to S3 after the upload, for a verify step in another invocation. */
  opts: { readonly stageManifest: boolean } = { stageManifest: true },
): Promise<ArchiveHandoff> => {
  const { run, group } = event;
  const { shopId, month } = group;
  let loaded: LoadedIndex | undefined;
  let stagedOut: StagedPart | undefined;
  let listedOut: ReadonlyMap<string, readonly JobObject[]> | undefined;
  const { value, requests } = await deps.meter.measure(async () => {
    loaded = await loadMonthIndex(deps, shopId, month);
    const { index, etag } = loaded;
    // A batch step passes the jobs it read once for all its groups.
    const planned = plannedJobs ?? (await readPlannedJobs(deps, run, group));
    const abandonedPartsRemoved = await collectAbandonedParts(
      deps,
      run,
      shopId,
      month,
      etag === null ? null : index,
    );

    const toArchive = planned.filter((j) => classifyPlanned(j, index) === 'archive').sort(byJobId);
    const quarantined: QuarantineItem[] = [];
    // Committed by an earlier attempt of this very run (a retried Task): archived by this run, once.
    const earlier = archivedByRun(index, planned, run.runId);
    let skipped = planned.length - toArchive.length - earlier;
    let changed = 0;
    let archived = earlier;
    let bytesIn = 0;
    // Every quarantine goes to the findings document (written before the part is staged); the result
    // carries the count and a sample.
    const findings = () => writeGroupFindings(deps, event, 'quarantined', quarantined);
    const result = (bytesOut: number, partName: string | null) => ({
      summary: { archived, skipped, quarantinedCount: quarantined.length, bytesIn, bytesOut, partName },
      planned: planned.length,
      changedSincePlan: changed,
      abandonedPartsRemoved,
      quarantined: quarantined.slice(0, CAPS.inline),
    });

    // Reads run ahead (a window of jobs, one shared request gate) while records are appended one
    // job at a time in id order: the part's layout is stable and memory holds a bounded window.
    const gate = new Semaphore(deps.settings.readConcurrency);
    const ahead = { window: deps.settings.readConcurrency, maxBytes: READ_AHEAD_BYTES };

    // The caller's listing of its whole batch, or one walk over the hot prefix for these jobs
    // (hot-listing.ts), never a LIST per job.
    const listJobs = async (jobs: readonly PlannedJob[]) =>
      batchListing ??
      (
        await listJobsObjects(
          deps.s3,
          deps.bucket,
          jobs.map((j) => j.job_id),
        )
      ).objects;

    if (run.dryRun) {
      // Classify and count from listings only: no source reads, no writes but the run's findings.
      const objects = await listJobs(toArchive);
      for (const job of toArchive) {
        const listed = objects.get(job.job_id) ?? [];
        const problem = listingProblem(listed, Math.floor(deps.settings.maxSourceMb * 1024 * 1024));
        if (problem) quarantined.push({ jobId: job.job_id, reason: problem });
        else {
          archived++;
          bytesIn += listed.reduce((n, o) => n + o.size, 0);
        }
      }
      await findings();
      return result(0, null);
    }

    const rows = await readJobRows(
      deps,
      shopId,
      toArchive.map((j) => j.job_id),
    );
    const current = toArchive.filter((job) => {
      if (!changedSincePlan(job, rows.get(job.job_id))) return true;
      skipped++;
      changed++;
      return false;
    });
    const listed = await listJobs(current);
    listedOut = listed;
    let part: OpenPart | undefined;
    let uploaded = false;
    try {
      const reads = orderedPrefetch(
        current,
        async (job) => ({
          job,
          read: await readJobSources(deps, listed.get(job.job_id) ?? [], gate, shopId),
        }),
        { ...ahead, sizeOf: (r) => (r.read.kind === 'ok' ? r.read.bytesIn : 0) },
      );
      for await (const { job, read } of reads) {
        if (read.kind === 'quarantine') {
          quarantined.push({ jobId: job.job_id, reason: read.reason });
          continue;
        }
        // Another shop's objects under the same job id: reported, kept, never archived here.
        for (const o of read.foreign)
          quarantined.push({ jobId: job.job_id, reason: foreignReason(o, shopId) });
        const record = assembleJob(job, rows.get(job.job_id), read);
        if (record.kind === 'quarantine') {
          quarantined.push({ jobId: job.job_id, reason: record.reason });
          continue;
        }
        part ??= await openPart(deps, event);
        await part.builder.addJob({
          jobId: job.job_id,
          meta: record.meta,
          details: record.details,
          platformData: record.platformData,
          sources: read.sources,
          row: record.row,
          inline: record.inline,
        });
        archived++;
        bytesIn += read.bytesIn;
      }
      await findings();
      if (!part) return result(0, null);

      const manifest = await part.builder.finish();
      const stored = await part.upload.finish();
      uploaded = true;
      if (stored.size !== manifest.size) {
        throw new VerificationError(part.key, `stored ${stored.size} bytes, built ${manifest.size}`);
      }
      const pending = pendingKey(shopId, month, part.name);
      const staged: StagedPart = { ...manifest, etag: stored.etag };
      // The per-group steps hand the manifest to verify through S3; the batch step keeps it in memory
      // (the intent written before the upload is what a crash leaves for pending GC).
      if (opts.stageManifest) await putJson(deps, pending, staged);
      stagedOut = staged;
      return {
        partKey: part.key,
        partName: part.name,
        pendingKey: pending,
        ...result(manifest.size, part.name),
      };
    } catch (err) {
      // Leave nothing without a manifest behind (a crash here is what pending GC is for).
      if (part && !uploaded) await part.upload.abort();
      if (part && uploaded) {
        await deps.s3
          .send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: part.key }))
          .catch(() => undefined);
      }
      // Its intent last (best effort): if anything above failed, the intent still names the part.
      if (part) {
        await deps.s3
          .send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: pendingKey(shopId, month, part.name) }))
          .catch(() => undefined);
      }
      throw err;
    }
  });
  const { summary, ...rest } = value;
  if (!loaded) throw new VerificationError(`${shopId}/${month}`, 'the month index was not read');
  return {
    result: { ...rest, summary: { ...summary, requests } },
    index: loaded,
    ...(stagedOut ? { staged: stagedOut } : {}),
    ...(listedOut ? { listed: listedOut } : {}),
  };
};

const openPart = async (deps: StepDeps, event: GroupEvent): Promise<OpenPart> => {
  const now = deps.clock();
  const name = newPartName(now);
  const { shopId, month } = event.group;
  const key = partKey(shopId, month, name);
  // Intent before effect: the staging doc exists before the part's first byte.
  const intent: PartIntent = {
    format: INTENT_FORMAT,
    shop_id: shopId,
    month,
    part: name,
    part_key: key,
    run_id: event.run.runId,
    created_at: now.toISOString(),
  };
  await putJson(deps, pendingKey(shopId, month, name), intent);
  const upload = new PartUpload(deps.s3, deps.bucket, key);
  const builder = new PartBuilder(
    {
      shopId: event.group.shopId,
      month: event.group.month,
      partName: name,
      partKey: key,
      runId: event.run.runId,
      createdAt: now.toISOString(),
    },
    upload.write,
  );
  try {
    await builder.writeHeader();
  } catch (err) {
    await upload.abort();
    throw err;
  }
  return { name, key, upload, builder };
};
