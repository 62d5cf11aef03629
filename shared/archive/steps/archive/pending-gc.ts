import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { LostIndexError } from '../../../errors';
import { getObjectBytes, type ListedObject, listAllArray } from '../../../s3/objects';
import {
  groupPrefix,
  type MonthIndex,
  monthIndexKey,
  parseIntent,
  parsePartKey,
  partByName,
  partKey,
  pendingKey,
  pendingPrefix,
  type StagedDocs,
  stagedDocsByPart,
} from '../../format';
import type { StepDeps } from '../context';
import type { RunContext } from '../types';

/**
 * A pending part is abandoned when its run died between archive and commit. Only parts older than
 * this are collected: a concurrent run may be between its verify and its commit right now, and
 * deleting a part it is about to commit would leave an index entry without bytes (and its delete step
 * would then remove the only other copy). An archive → verify → commit chain takes minutes.
 */
export const ABANDONED_AFTER_MS = 12 * 3_600_000;

const runOf = async (deps: StepDeps, docs: StagedDocs): Promise<string | null> => {
  try {
    if (docs.pending) {
      const got = await getObjectBytes(deps.s3, deps.bucket, docs.pending.key);
      if (got) return parseIntent(got.bytes, docs.pending.key).run_id;
    }
  } catch {
    // An unreadable staging doc belongs to no run we know: treated as another run's.
  }
  return null;
};

/** When an object was written; unknown counts as "just now", so it is never taken for abandoned. */
const ageStamp = (o: ListedObject): number => o.lastModified?.getTime() ?? Number.POSITIVE_INFINITY;

const del = (deps: StepDeps, key: string) =>
  deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));

/**
 * Removes what dead runs left in this group's staging area: docs of parts already in the index (a
 * commit that died before its cleanup) and, for parts NOT in the index, from another run, and older
 * than ABANDONED_AFTER_MS, the part itself and its docs. Returns the number of abandoned parts removed.
 *
 * Only a part's own staging docs prove it was never committed (commit removes them after the index
 * write), so nothing is collected without them, and nothing at all when the month has no index: if an
 * index were lost, its committed parts would otherwise all look abandoned. Every part has such a doc
 * from before its first byte (the intent, staging.ts), so a crash at any point leaves one.
 */
export const collectAbandonedParts = async (
  deps: StepDeps,
  run: RunContext,
  shopId: string,
  month: string,
  index: MonthIndex | null,
): Promise<number> => {
  if (index === null) return 0;
  const prefix = pendingPrefix(shopId, month);
  const byPart = stagedDocsByPart(prefix, await listAllArray(deps.s3, deps.bucket, prefix));
  const oldEnough = deps.clock().getTime() - ABANDONED_AFTER_MS;
  let removed = 0;
  for (const [name, docs] of byPart) {
    if (partByName(index, name)) {
      if (run.dryRun) continue;
      if (docs.pending) await del(deps, pendingKey(shopId, month, name));
      continue;
    }
    const stamps = [docs.pending].flatMap((d) => (d ? [ageStamp(d)] : []));
    if (stamps.some((t) => t > oldEnough)) continue;
    if ((await runOf(deps, docs)) === run.runId) continue;
    if (run.dryRun) continue;
    // Part first, manifest last: if this dies midway, the manifest still marks what is left to collect.
    await del(deps, partKey(shopId, month, name));
    if (docs.pending) await del(deps, pendingKey(shopId, month, name));
    removed++;
  }
  return removed;
};

/**
 * For a month with no index: the names of parts under its prefix that no staging doc names — parts a
 * commit made visible, i.e. the index is lost (a part of a run that died before its first commit
 * still has its intent). 2 LISTs, paid once per new shop-month.
 */
export const partsWithoutStaging = async (
  deps: StepDeps,
  shopId: string,
  month: string,
): Promise<string[]> => {
  const parts = await listAllArray(deps.s3, deps.bucket, groupPrefix(shopId, month));
  if (parts.length === 0) return [];
  const prefix = pendingPrefix(shopId, month);
  const staged = stagedDocsByPart(prefix, await listAllArray(deps.s3, deps.bucket, prefix));
  return parts.flatMap((o) => {
    const p = parsePartKey(o.key);
    return p && !staged.has(p.partName) ? [p.partName] : [];
  });
};

/** LostIndexError when a month without an index has committed parts (see partsWithoutStaging). */
export const refuseLostIndex = async (deps: StepDeps, shopId: string, month: string): Promise<void> => {
  const parts = await partsWithoutStaging(deps, shopId, month);
  if (parts.length > 0) throw new LostIndexError(monthIndexKey(shopId, month), shopId, month, parts);
};
