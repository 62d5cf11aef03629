import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { Semaphore } from '../../../concurrency';
import type { JobObject } from '../../../details';
import { VerificationError } from '../../../errors';
import { putJson } from '../../../s3/objects';
import {
  latestEntry,
  type MonthIndex,
  newIntent,
  newPartName,
  PartBuilder,
  partKey,
  pendingKey,
  SEGMENT_LEVEL,
  sharedPendingKey,
} from '../../format';
import { CAPS } from '../caps';
import { type LoadedIndex, loadMonthIndex } from '../commit/index-store';
import type { StepDeps } from '../context';
import { type QuarantineItem, writeGroupFindings } from '../run-files/findings';
import type { ArchiveResult, GroupItem, PlannedJob } from '../types';
import { archivedByRun, assembleJob, changedSincePlan, classifyPlanned, withRowAttributes } from './classify';
import { readJobRows } from './job-rows';
import { foreignReason, listingProblem, readJobSources } from './job-sources';
import { PartUpload } from './part-upload';
import { collectAbandonedParts, partsWithoutStaging, refuseLostIndex } from './pending-gc';
import { orderedPrefetch } from './prefetch';
import { settledArchivals } from './settled-archivals';
import type { StagedPart } from './staged';

/** Stored bytes of sources read ahead but not yet appended (decoded they are a few times larger). */
const READ_AHEAD_BYTES = 16 * 1024 * 1024;

interface OpenPart {
  readonly name: string;
  readonly key: string;
  /** Absent for a segment (its bytes go to `segment`, the batch uploads the shared part). */
  readonly upload?: PartUpload;
  readonly builder: PartBuilder;
  readonly segment?: Buffer[];
}

/**
 * A packed group's target (pack-month.ts): its records become one segment of the batch's shared part
 * of the month, built in memory, and the shop's view of the shared index stands in for its month index.
 */
export interface SegmentTarget {
  readonly view: LoadedIndex;
  readonly partName: string;
  readonly partKey: string;
  /** The shop's view as it is now (a source gone mid-read: did an overlapping run archive it?). */
  readonly reload: () => Promise<MonthIndex>;
}

const byJobId = (a: PlannedJob, b: PlannedJob): number =>
  a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0;

/** What the archive step saw and built, for the steps after it in the same invocation. */
export interface ArchiveHandoff {
  readonly result: ArchiveResult;
  /** The month index as read (its ETag for the commit's conditional write). */
  readonly index: LoadedIndex;
  /** The staged part's manifest, as written to its pending doc (absent: no part). */
  readonly staged?: StagedPart;
  /** The hot objects listed for the jobs it archived (what delete may remove of them). */
  readonly listed?: ReadonlyMap<string, readonly JobObject[]>;
  /** Jobs archived again (classify.ts `rearchive`) → the part of the entry each follows (for commit). */
  readonly rearchived: ReadonlyMap<string, string>;
  /** A packed group's segment bytes (its `staged` manifest's offsets are from the segment's start). */
  readonly segment?: Buffer;
}

/**
 * A group's archive stage: builds ONE new part for a shop × month from the planned jobs not yet
 * committed with the same completed_at, streaming it to S3 (its intent doc first), and hands the
 * manifest to verify in memory. Nothing here is visible to readers (only the index is) and nothing is
 * deleted but abandoned, uncommitted parts of dead runs.
 */
export const archiveGroup = async (
  deps: StepDeps,
  event: GroupItem,
  planned: readonly PlannedJob[],
  /** The hot objects of (at least) the planned jobs, listed by the caller for its whole batch (one
   * walk over the hot prefix, hot-listing.ts, never a LIST per job). */
  batchListing: ReadonlyMap<string, readonly JobObject[]>,
  target?: SegmentTarget,
): Promise<ArchiveHandoff> => {
  const { run, group } = event;
  const { shopId, month } = group;
  let loaded: LoadedIndex | undefined;
  let stagedOut: StagedPart | undefined;
  let listedOut: ReadonlyMap<string, readonly JobObject[]> | undefined;
  let rearchivedOut: ReadonlyMap<string, string> = new Map();
  let segmentOut: Buffer | undefined;
  const { value, requests } = await deps.meter.measure(async () => {
    loaded = target ? target.view : await loadMonthIndex(deps, shopId, month);
    // A lost index must not read as "nothing archived yet": the jobs' hot copies may be gone, and an
    // archive now would commit empty records for them. A concurrent first commit creates the index
    // before it removes its staging doc, so a part without one is seen only after the index exists.
    if (!target && loaded.etag === null && (await partsWithoutStaging(deps, shopId, month)).length > 0) {
      // Re-read: a concurrent run's first commit may have created it since (it writes the index, then
      // removes its staging doc). Still none: lost.
      loaded = await loadMonthIndex(deps, shopId, month);
      if (loaded.etag === null) await refuseLostIndex(deps, shopId, month);
    }
    const { index, etag } = loaded;
    // A packed group's leftovers are collected with its month's shared staging (pack-month.ts).
    const abandonedPartsRemoved = target
      ? 0
      : await collectAbandonedParts(deps, run, shopId, month, etag === null ? null : index);

    // Jobs archived again (their hot prefix changed after their archival): the entry each follows.
    // Planned jobs the month's settled parts may hold (no entry left): their records, read only for
    // such jobs (settled-archivals.ts).
    const settled = await settledArchivals(
      deps,
      index,
      planned.map((j) => j.job_id),
    );
    const rearchived = new Map<string, string>();
    // Every job archived again, its latest archival an entry or a settled part's record.
    const again = new Set<string>();
    const toArchive = planned
      .filter((j) => {
        const c = classifyPlanned(j, index, batchListing, settled);
        if (c === 'rearchive') again.add(j.job_id);
        // A settled archival has no entry to follow: the new one is committed as any new entry.
        const follows = latestEntry(index, j.job_id)?.part;
        if (c === 'rearchive' && follows !== undefined) rearchived.set(j.job_id, follows);
        return c !== 'skip';
      })
      .sort(byJobId);
    rearchivedOut = rearchived;
    const quarantined: QuarantineItem[] = [];
    // Committed by an earlier attempt of this very run (a retried Task): archived by this run, once.
    const earlier = archivedByRun(index, planned, run.runId, settled);
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

    if (run.dryRun) {
      // Classify and count from listings only: no source reads, no writes but the run's findings.
      const objects = batchListing;
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
    const current = toArchive
      .filter((job) => {
        if (!changedSincePlan(job, rows.get(job.job_id))) return true;
        skipped++;
        changed++;
        return false;
      })
      .map((job) => withRowAttributes(job, rows.get(job.job_id)));
    const listed = batchListing;
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
      const vanished: { job: PlannedJob; reason: string }[] = [];
      for await (const { job, read } of reads) {
        if (read.kind === 'quarantine') {
          if (read.vanished) vanished.push({ job, reason: read.reason });
          else quarantined.push({ jobId: job.job_id, reason: read.reason });
          continue;
        }
        // Another shop's objects under the same job id: reported, kept, never archived here.
        for (const o of read.foreign)
          quarantined.push({ jobId: job.job_id, reason: foreignReason(o, shopId) });
        // An archival of this completion again with nothing of this shop's in the prefix (only another
        // shop's objects, which made it look changed): nothing to add.
        if (again.has(job.job_id) && read.sources.length === 0) {
          skipped++;
          continue;
        }
        const record = assembleJob(job, rows.get(job.job_id), read);
        if (record.kind === 'quarantine') {
          quarantined.push({ jobId: job.job_id, reason: record.reason });
          continue;
        }
        part ??= target ? await openSegment(event, target, deps.clock()) : await openPart(deps, event);
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
      // A source gone mid-read: an overlapping run archived this completion and deleted it (runs need
      // no lease, docs/operations.md) — then the job is archived, here skipped. Anything else gone is
      // a quarantine: its remaining objects stay where they are. One index GET, only when it happens.
      if (vanished.length > 0) {
        const now = target ? await target.reload() : (await loadMonthIndex(deps, shopId, month)).index;
        // The overlapping run's part may have settled already (its delete ran): its records say.
        const then = await settledArchivals(
          deps,
          now,
          vanished.map((v) => v.job.job_id),
        );
        for (const { job, reason } of vanished) {
          const s = then.get(job.job_id);
          if (
            latestEntry(now, job.job_id)?.completed_at === job.completed_at ||
            (s?.kind === 'record' && s.completed_at === job.completed_at)
          )
            skipped++;
          else quarantined.push({ jobId: job.job_id, reason });
        }
      }
      await findings();
      if (!part) return result(0, null);

      const manifest = await part.builder.finish();
      if (part.segment) {
        // A segment: the batch uploads the shared part, verifies every segment and commits them.
        segmentOut = Buffer.concat(part.segment);
        stagedOut = { ...manifest, etag: '' };
        return {
          partKey: part.key,
          partName: part.name,
          pendingKey: sharedPendingKey(month, part.name),
          ...result(manifest.size, part.name),
        };
      }
      if (!part.upload) throw new VerificationError(part.key, 'no upload for an own part');
      const stored = await part.upload.finish();
      uploaded = true;
      if (stored.size !== manifest.size) {
        throw new VerificationError(part.key, `stored ${stored.size} bytes, built ${manifest.size}`);
      }
      const pending = pendingKey(shopId, month, part.name);
      const staged: StagedPart = { ...manifest, etag: stored.etag };
      // The manifest goes to verify in memory (the intent written before the upload is what a crash
      // leaves for pending GC).
      stagedOut = staged;
      return {
        partKey: part.key,
        partName: part.name,
        pendingKey: pending,
        ...result(manifest.size, part.name),
      };
    } catch (err) {
      // Leave nothing without a manifest behind (a crash here is what pending GC is for).
      if (part?.segment) throw err;
      if (part && !uploaded) await part.upload?.abort();
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
    rearchived: rearchivedOut,
    ...(segmentOut ? { segment: segmentOut } : {}),
  };
};

const openSegment = async (event: GroupItem, target: SegmentTarget, now: Date): Promise<OpenPart> => {
  const segment: Buffer[] = [];
  const builder = new PartBuilder(
    {
      shopId: event.group.shopId,
      month: event.group.month,
      partName: target.partName,
      partKey: target.partKey,
      runId: event.run.runId,
      createdAt: now.toISOString(),
      shopOnLines: true,
      // Inflated again when the batch cuts the shared part's blocks, never stored: deflated for speed,
      // and no filters (the batch builds them for the shared part's blocks, verify from what it stored).
      level: SEGMENT_LEVEL,
      filters: false,
    },
    async (member) => {
      segment.push(member);
    },
  );
  await builder.writeHeader();
  return { name: target.partName, key: target.partKey, builder, segment };
};

const openPart = async (deps: StepDeps, event: GroupItem): Promise<OpenPart> => {
  const now = deps.clock();
  const name = newPartName(now);
  const { shopId, month } = event.group;
  const key = partKey(shopId, month, name);
  // Intent before effect: the staging doc exists before the part's first byte.
  const intent = newIntent({
    shop_id: shopId,
    month,
    part: name,
    part_key: key,
    run_id: event.run.runId,
    created_at: now.toISOString(),
  });
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
