import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { mapLimit } from '../../../concurrency';
import type { JobObject } from '../../../details';
import { forgottenAtOf, isForgottenIn } from '../../../erasure/summary';
import { readErasureSummary } from '../../../erasure/summary-store';
import { ShopForgottenError, VerificationError } from '../../../errors';
import { addCounts, type RequestCounts, zeroCounts } from '../../../metrics';
import { getObjectBytes, listAllArray, putJson } from '../../../s3/objects';
import {
  applyCommit,
  BlockSlicer,
  blockRanges,
  type IndexedPart,
  inflateBlock,
  type MonthIndex,
  newIntent,
  newPartName,
  type PartIntent,
  parseSharedFiltersMember,
  reblockSegments,
  type SharedIndex,
  type SharedPart,
  sharedPartKey,
  sharedPendingKey,
  sharedPendingPrefix,
  sharedView,
  storedDocFilters,
  type VerifiedPart,
  withViews,
} from '../../format';
import { headCheck } from '../../part-integrity';
import { type ArchiveHandoff, archiveGroup } from '../archive/archive-group';
import { PartUpload } from '../archive/part-upload';
import { ABANDONED_AFTER_MS } from '../archive/pending-gc';
import type { LoadedIndex } from '../commit/index-store';
import { type LoadedShared, loadSharedIndex, updateSharedIndex } from '../commit/shared-store';
import type { StepDeps } from '../context';
import { deleteSources } from '../delete/delete-sources';
import type { BatchEvent, GroupFailed, PlannedGroup, PlannedJob } from '../types';
import { partBlocks, planProblem, toVerifiedPart } from '../verify/verify-checks';
import { checkPartBytes } from '../verify/verify-part';
import { relocatedManifest } from '../verify/verify-shared';
import { fail, type Prepared, type StageHooks } from './prepared';

/**
 * The packed groups of one month in one batch (docs/archive-format.md, "Shared parts"): each group
 * goes through the same archive → verify → commit → delete as a group with a part of its own, but
 * their records are segments of ONE shared part, and their index is the month's shared index — one
 * GET, one intent, one part PUT, one read-back, one commit write, one HEAD at delete and one write of
 * the deletion marks for them all. A group's failure is its own (its segment is left out of the
 * commit, its hot data stays); a failure of the shared steps fails every group of the month here.
 */
export interface MonthPack {
  readonly prepared: Array<Prepared | GroupFailed>;
  /** Writes the deletion marks of every group (after the batch's DeleteObjects and each `finish`). */
  readonly flush: () => Promise<void>;
  /** Requests of the shared steps (each group's own are in its summaries). */
  readonly overhead: RequestCounts;
}

const intentOf = (run: BatchEvent['run'], month: string, name: string, at: Date): PartIntent =>
  newIntent({
    shop_id: '_shared',
    month,
    part: name,
    part_key: sharedPartKey(month, name),
    run_id: run.runId,
    created_at: at.toISOString(),
  });

/** Shifts a segment's verified records to where the segment lies in the shared part. */
const placed = (v: VerifiedPart, start: number, size: number): VerifiedPart => ({
  ...v,
  part: {
    ...v.part,
    size,
    shared: true,
    ...(v.part.filters ? { filters: { ...v.part.filters, offset: v.part.filters.offset + start } } : {}),
  },
  jobs: Object.fromEntries(
    Object.entries(v.jobs).map(([id, e]) => [
      id,
      {
        ...e,
        offset: e.offset + start,
        platform_data: e.platform_data
          ? { ...e.platform_data, offset: e.platform_data.offset + start }
          : null,
      },
    ]),
  ),
});

/**
 * Collects what dead runs left under the month's shared staging: intents of parts the shared index
 * lists (a commit that died before its cleanup) and, older than ABANDONED_AFTER_MS and of another
 * run, parts never committed. Nothing without a shared index (a lost one must not make committed
 * parts look abandoned; packMonth creates it before the month's first intent, so a shared index
 * always exists where an intent does). 1 LIST, by one batch of the page (PlannedBatch.collectShared),
 * also when that batch packs nothing there (archiveBatch): the revisit of a dead batch's groups sends
 * them to parts of their own, and would otherwise never collect what the dead batch staged.
 */
export const collectAbandonedShared = async (
  deps: StepDeps,
  run: BatchEvent['run'],
  loaded: LoadedShared,
) => {
  if (loaded.etag === null || run.dryRun) return;
  const { month } = loaded.index;
  const prefix = sharedPendingPrefix(month);
  const oldEnough = deps.clock().getTime() - ABANDONED_AFTER_MS;
  for (const o of await listAllArray(deps.s3, deps.bucket, prefix)) {
    const name = o.key.slice(prefix.length).replace(/\.json$/, '');
    const del = (key: string) => deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));
    if (loaded.index.parts.some((p) => p.name === name)) {
      await del(o.key);
      continue;
    }
    if ((o.lastModified?.getTime() ?? Number.POSITIVE_INFINITY) > oldEnough) continue;
    const got = await getObjectBytes(deps.s3, deps.bucket, o.key).catch(() => null);
    const runId = got
      ? (JSON.parse(Buffer.from(got.bytes).toString('utf8')) as { run_id?: string }).run_id
      : null;
    if (runId === run.runId) continue;
    try {
      await del(sharedPartKey(month, name));
    } catch {
      continue;
    }
    await del(o.key);
  }
};

export const packMonth = async (
  deps: StepDeps,
  run: BatchEvent['run'],
  loaded: LoadedShared,
  groups: readonly PlannedGroup[],
  jobsOf: (g: PlannedGroup) => readonly PlannedJob[],
  listing: ReadonlyMap<string, readonly JobObject[]>,
  staging: string[],
  hooks: StageHooks,
  /** Whether this batch collects the month's shared staging first (PlannedBatch.collectShared). */
  collect: boolean,
): Promise<MonthPack> => {
  const { month } = loaded.index;
  const name = newPartName(deps.clock());
  const key = sharedPartKey(month, name);
  const pendingKey = sharedPendingKey(month, name);
  const ref = (g: PlannedGroup) => ({ shopId: g.shopId, month: g.month });
  const results = new Map<PlannedGroup, GroupFailed>();
  const failGroup = (g: PlannedGroup, err: unknown) => {
    if (!results.has(g)) results.set(g, fail(ref(g), err));
  };
  const stage = async (g: PlannedGroup, s: 'archive' | 'verify' | 'commit' | 'delete') => {
    await hooks.before?.(s, { group: g });
  };
  let overhead = collect
    ? (await deps.meter.measure(() => collectAbandonedShared(deps, run, loaded))).requests
    : zeroCounts();

  // Archive: every group's segment, in memory, against its shop's view of the shared index.
  const viewOf = (index: SharedIndex, shop: string): LoadedIndex => ({
    index: sharedView(index, shop),
    etag: loaded.etag,
  });
  const archived = new Map<PlannedGroup, ArchiveHandoff>();
  await mapLimit(groups, 4, async (g) => {
    try {
      await stage(g, 'archive');
      const a = await archiveGroup(deps, { run, group: g }, jobsOf(g), listing, {
        view: viewOf(loaded.index, g.shopId),
        partName: name,
        partKey: key,
        reload: async () => sharedView((await loadSharedIndex(deps, month)).index, g.shopId),
      });
      archived.set(g, a);
    } catch (err) {
      failGroup(g, err);
    }
  });

  // Upload, read back and check every segment, commit: the shared steps.
  let after: LoadedShared = loaded;
  let base: LoadedShared = loaded;
  const verified = new Map<PlannedGroup, VerifiedPart>();
  const withSegment = groups.filter((g) => archived.get(g)?.segment && !results.has(g));
  if (withSegment.length > 0 && !run.dryRun) {
    const shared = await deps.meter.measure(async () => {
      const segments: Array<{ g: PlannedGroup; bytes: Buffer }> = withSegment.map((g) => ({
        g,
        bytes: archived.get(g)?.segment as Buffer,
      }));
      let at = 0;
      try {
        // One stream of the segments' lines, cut into blocks across shops (shared-blocks.ts).
        // Each segment's blocks; its own filters member is left out (the part gets one for every shop).
        const packed = reblockSegments(
          segments.map((s) => {
            const tail = archived.get(s.g)?.staged?.filters;
            return { shopId: s.g.shopId, bytes: tail ? s.bytes.subarray(0, tail.offset) : s.bytes };
          }),
          key,
        );
        at = packed.bytes.length;
        // The month's shared index before its first intent (an empty one, 1 PUT once per month): pending
        // GC collects only where a shared index exists, so without it a batch that died before the
        // month's first shared commit would leave its part and intent forever — the runs after send
        // those shops to parts of their own and never commit a shared part of the month again.
        if (base.etag === null)
          after = base = await updateSharedIndex(deps, month, (c) => (c === base.index ? c : null), base);
        // Intent before effect, as for every part: a crash leaves a doc naming the part.
        await putJson(deps, pendingKey, intentOf(run, month, name, deps.clock()));
        const upload = new PartUpload(deps.s3, deps.bucket, key);
        await upload.write(packed.bytes);
        const stored = await upload.finish();
        if (stored.size !== at) throw new VerificationError(key, `stored ${stored.size} bytes, built ${at}`);
        // One read-back of the whole part; each shop's records are checked in the stored blocks.
        const got = await getObjectBytes(deps.s3, deps.bucket, key);
        if (!got) throw new VerificationError(key, 'part object is missing');
        if (got.etag !== stored.etag)
          throw new VerificationError(key, `ETag ${got.etag} is not the uploaded ${stored.etag}`);
        if (got.bytes.length !== at)
          throw new VerificationError(key, `size ${got.bytes.length} is not ${at}`);
        const back = Buffer.from(got.bytes);
        if (createHash('sha256').update(back).digest('hex') !== packed.sha256)
          throw new VerificationError(key, 'sha256 of the stored part differs from the built one');
        const blocks = blockRanges(packed.blocks);
        // The stored filters member, parsed once for every shop's check (not once per shop: it holds
        // all of them); what it throws fails each group that asks, as before.
        let storedShared: ReturnType<typeof parseSharedFiltersMember> | { failed: unknown } | undefined;
        const storedFiltersOf = (shopId: string) => {
          const at = packed.filters;
          if (!at) return undefined;
          if (storedShared === undefined) {
            try {
              storedShared = parseSharedFiltersMember(back.subarray(at.offset, at.offset + at.length), key);
            } catch (err) {
              storedShared = { failed: err };
            }
          }
          if (!(storedShared instanceof Map)) throw storedShared.failed;
          return storedShared.get(shopId);
        };
        const inflatedBlocks = new Map<number, Buffer>();
        const inflated = (b: { offset: number; length: number }) => {
          const seen = inflatedBlocks.get(b.offset);
          if (seen) return seen;
          const text = inflateBlock(back.subarray(b.offset, b.offset + b.length), `${key}@${b.offset}`);
          inflatedBlocks.set(b.offset, text);
          return text;
        };
        for (const s of segments) {
          try {
            await stage(s.g, 'verify');
            const staged = {
              ...(archived.get(s.g)?.staged as NonNullable<ArchiveHandoff['staged']>),
              etag: stored.etag,
            };
            const bad = (reason: string): never => {
              throw new VerificationError(`${key} (${s.g.shopId})`, reason);
            };
            if (
              staged.shop_id !== s.g.shopId ||
              staged.month !== month ||
              staged.part !== name ||
              staged.run_id !== run.runId
            )
              bad('manifest describes another segment');
            const plan = planProblem(staged, jobsOf(s.g), archived.get(s.g)?.result.summary.archived ?? -1);
            if (plan) bad(plan);
            const tiling = BlockSlicer.tilingProblem(partBlocks(staged), staged.size);
            if (tiling) bad(tiling);
            // The segment as built against its manifest (its framing: blocks, lines, sha256), then its
            // records where they are stored, each decoded once (relocatedManifest).
            await checkPartBytes(staged, key, [s.bytes], bad, { records: false });
            const moved = relocatedManifest(
              staged,
              { size: at, sha256: packed.sha256, blocks, filters: packed.filters },
              inflated,
              (r) => packed.relocate(s.g.shopId, r),
              key,
              bad,
            );
            // The stored filters member holds exactly the shop's filters rebuilt from its stored records.
            const storedFilters = storedFiltersOf(s.g.shopId);
            const want = moved.doc_filters ?? { k: 0, blocks: [] };
            if (
              want.blocks.length + (storedFilters?.blocks.length ?? 0) > 0 &&
              !isDeepStrictEqual(
                storedFilters && storedDocFilters(storedFilters),
                moved.doc_filters && storedDocFilters(moved.doc_filters),
              )
            )
              bad('the stored document filters of the shop differ from its stored records');
            verified.set(s.g, placed(toVerifiedPart(moved), 0, at));
          } catch (err) {
            failGroup(s.g, err);
          }
        }
        const committing = segments.filter((s) => verified.has(s.g));
        for (const s of committing) await stage(s.g, 'commit').catch((err) => failGroup(s.g, err));
        // A shop forgotten since the batch read the erasure summary (docs/erasure.md): its segment is in
        // this part, so nothing of the part is committed (it is deleted below); the other groups are
        // retried. One GET of the watermark for the whole part, just before its index write.
        const waiting = committing.filter((x) => !results.has(x.g));
        const now = waiting.length > 0 ? await readErasureSummary(deps) : undefined;
        for (const s of waiting) {
          const at = forgottenAtOf(now, s.g.shopId);
          if (at !== undefined && jobsOf(s.g).some((j) => isForgottenIn(now, s.g.shopId, j.completed_at))) {
            const err = new ShopForgottenError(s.g.shopId, at);
            for (const x of segments) failGroup(x.g, err);
            break;
          }
        }
        // All or nothing: a part with a segment left out (failed verify or commit) would keep that shop's
        // lines where no index names them — where forget and redact could not find them. The other
        // groups are retried; their hot copies are all there.
        const left = segments.find((x) => results.has(x.g));
        if (left) {
          const err = new VerificationError(
            key,
            `the segment of ${left.g.shopId} was not committed: nothing of the shared part is`,
          );
          for (const x of segments) if (!results.has(x.g)) failGroup(x.g, err);
        }
        const commitNow = committing.filter((s) => !results.has(s.g));
        if (commitNow.length > 0) {
          const part: SharedPart = {
            name,
            size: at,
            etag: stored.etag,
            run_id: run.runId,
            committed_at: deps.clock().toISOString(),
            segments: Object.fromEntries(
              commitNow.map((s) => [s.g.shopId, packed.segments[s.g.shopId] as readonly [number, number]]),
            ),
            blocks: packed.blocks,
            ...(packed.filters ? { filters_bytes: packed.filters.length } : {}),
          };
          after = await updateSharedIndex(
            deps,
            month,
            (current) => {
              if (current.parts.some((p) => p.name === name)) return null;
              const views = new Map<string, MonthIndex>();
              for (const s of commitNow) {
                const view = sharedView(current, s.g.shopId, part.committed_at);
                const c = applyCommit(
                  view,
                  verified.get(s.g) as VerifiedPart,
                  part.committed_at,
                  archived.get(s.g)?.rearchived,
                );
                views.set(s.g.shopId, c.index ?? view);
              }
              return withViews(current, views, part.committed_at, part);
            },
            base,
          );
          staging.push(pendingKey);
        } else {
          // Nothing of it is committed: the part goes (its intent after it).
          await deps.s3
            .send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }))
            .catch(() => undefined);
          await deps.s3
            .send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: pendingKey }))
            .catch(() => undefined);
        }
      } catch (err) {
        for (const s of segments) failGroup(s.g, err);
      }
    });
    overhead = addCounts(overhead, shared.requests);
  }

  // Delete: each group's plan against its view as committed; the part HEADed once; the marks of all
  // the groups written together by `flush`.
  const heads = new Map<string, Promise<void>>();
  const head = (part: IndexedPart) => {
    const seen = heads.get(part.key) ?? headCheck(deps.s3, deps.bucket, part);
    heads.set(part.key, seen);
    return seen;
  };
  const changes = new Map<string, Array<(current: MonthIndex) => MonthIndex | null>>();
  const prepared = await mapLimit(groups, 4, async (g): Promise<Prepared | GroupFailed> => {
    const failed = results.get(g);
    if (failed) return failed;
    const a = archived.get(g) as ArchiveHandoff;
    try {
      await stage(g, 'delete');
      const r = a.result;
      const archive = {
        ...(r.partKey ? { partKey: r.partKey, partName: r.partName, pendingKey: r.pendingKey } : {}),
        summary: r.summary,
      };
      const v = verified.get(g);
      const del = await deleteSources(
        deps,
        {
          run,
          group: g,
          archive,
          ...(v
            ? { verify: { verified: true as const, jobs: v.part.job_count, requests: zeroCounts() } }
            : {}),
        },
        jobsOf(g),
        {
          index: viewOf(after.index, g.shopId),
          checkedParts: new Set(v ? [name] : []),
          ...(a.listed ? { listed: a.listed } : {}),
          head,
          update: async (change, base) => {
            changes.set(g.shopId, [...(changes.get(g.shopId) ?? []), change]);
            return { index: change(base.index) ?? base.index, etag: base.etag };
          },
        },
      );
      return { group: g, ref: ref(g), archive: r, del };
    } catch (err) {
      return fail(ref(g), err);
    }
  });

  const flush = async () => {
    if (changes.size === 0) return;
    const at = deps.clock().toISOString();
    await updateSharedIndex(
      deps,
      month,
      (current) => {
        const views = new Map<string, MonthIndex>();
        for (const [shop, list] of changes) {
          let view = sharedView(current, shop);
          for (const change of list) view = change(view) ?? view;
          views.set(shop, view);
        }
        return withViews(current, views, at);
      },
      after,
    );
  };
  return { prepared, flush, overhead };
};
