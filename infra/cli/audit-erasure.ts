import { namesShop } from '../../shared/erasure/forget-shared';
import { getRequest, listRequests, overdueRequests } from '../../shared/erasure/ledger';
import type { OverdueRequest } from '../../shared/erasure/summary';
import { readTombstones } from '../../shared/erasure/tombstone';
import { getObjectBytes } from '../../shared/s3/objects';
import type { CliContext } from './context';

/**
 * `audit`'s erasure section (docs/erasure.md): requests past their deadline, and forgotten shops of
 * which something is still there — rows, month indexes, parts or hot prefixes the rest of the audit
 * already listed (a forget that crashed, or an archival that committed in the instant after the
 * forget's re-check). Costs a LIST of the ledger and of the tombstones, a GET per open request and per
 * tombstone.
 */
export interface ForgottenLeftover {
  readonly shopId: string;
  readonly forgottenAt: string;
  readonly requestId: string;
  readonly rows: number;
  readonly monthIndexes: number;
  readonly parts: number;
  readonly hotPrefixes: number;
  /** Archived jobs (month index entries, shared views included) completed at or before the forget. */
  readonly archivedJobs: number;
  /** Uncommitted shared parts (no shared index names them) holding the shop's records. */
  readonly uncommittedParts: readonly string[];
  /**
   * Jobs of the shop completed after its forget (the shop came back): not the erasure's to remove.
   * While there are any, `forget --shop S` would erase them too: audit does not advise it.
   */
  readonly newerJobs: number;
}

export interface ErasureAudit {
  readonly deadlineDays: number;
  readonly overdue: OverdueRequest[];
  readonly forgottenLeftovers: ForgottenLeftover[];
}

export interface SeenByAudit {
  readonly rows: ReadonlyArray<{ readonly shopId: string; readonly completedAt: unknown }>;
  readonly indexShops: readonly string[];
  readonly partShops: readonly string[];
  /** Shops of hot prefixes, where the audit knows them (rows, orphan HEADs). */
  readonly hotShops: readonly string[];
  /** Every archived job's shop and completion (month indexes and shared views). */
  readonly indexJobs: ReadonlyArray<{ readonly shopId: string; readonly completedAt: string }>;
  /** Keys of shared parts no shared index names (a dead run's, or one committing now). */
  readonly uncommittedShared: readonly string[];
}

export const auditErasure = async (
  ctx: CliContext,
  deadlineDays: number,
  seen: SeenByAudit,
  now: Date = new Date(),
): Promise<ErasureAudit> => {
  const target = { s3: ctx.s3, bucket: ctx.bucket };
  const open = await listRequests(target, { openOnly: true });
  const count = (list: readonly string[], shop: string) => list.filter((s) => s === shop).length;
  const forgottenLeftovers: ForgottenLeftover[] = [];
  const tombstones = await readTombstones(target);
  // Uncommitted shared parts, read once each only when some shop was forgotten.
  const uncommitted = new Map<string, Buffer | null>();
  if (tombstones.length > 0)
    for (const key of seen.uncommittedShared) {
      const got = await getObjectBytes(ctx.s3, ctx.bucket, key);
      uncommitted.set(key, got ? Buffer.from(got.bytes) : null);
    }
  for (const t of tombstones) {
    // The tombstone names no shop: its request does (a GET; the ledger keeps it for good).
    const shopId = (await getRequest(target, t.requestId))?.request.shopId;
    if (shopId === undefined) continue;
    const stone = { ...t, shopId };
    const forgotten = (completedAt: unknown) =>
      !(typeof completedAt === 'string' && Date.parse(completedAt) > Date.parse(stone.forgottenAt));
    const rows = seen.rows.filter((r) => r.shopId === stone.shopId && forgotten(r.completedAt)).length;
    const jobs = seen.indexJobs.filter((j) => j.shopId === stone.shopId);
    const archivedJobs = jobs.filter((j) => forgotten(j.completedAt)).length;
    // Jobs completed after the forget (the shop came back): its data now, archived or not.
    const newerJobs = new Set([
      ...seen.rows
        .filter((r) => r.shopId === stone.shopId && !forgotten(r.completedAt))
        .map((r) => `row ${String(r.completedAt)}`),
      ...jobs.filter((j) => !forgotten(j.completedAt)).map((j) => `job ${j.completedAt}`),
    ]).size;
    const newer = newerJobs > 0;
    const left: ForgottenLeftover = {
      shopId: stone.shopId,
      forgottenAt: stone.forgottenAt,
      requestId: stone.requestId,
      rows,
      monthIndexes: count(seen.indexShops, stone.shopId),
      parts: count(seen.partShops, stone.shopId),
      hotPrefixes: count(seen.hotShops, stone.shopId),
      archivedJobs,
      uncommittedParts: [...uncommitted]
        .filter(([, bytes]) => bytes !== null && namesShop(bytes, stone.shopId))
        .map(([key]) => key),
      newerJobs,
    };
    // A shop that came back has new data: only what its forget covered counts (older rows, archived
    // jobs completed before it, uncommitted parts naming it); its own archive objects only when it
    // has nothing newer.
    const found =
      left.rows +
      left.archivedJobs +
      left.uncommittedParts.length +
      (newer ? 0 : left.monthIndexes + left.parts + left.hotPrefixes);
    if (found > 0) forgottenLeftovers.push(left);
  }
  return { deadlineDays, overdue: overdueRequests(open, now, deadlineDays), forgottenLeftovers };
};

export const erasureLines = (e: ErasureAudit): string[] => {
  const out: string[] = [];
  if (e.overdue.length > 0) {
    out.push('', `erasure requests past their ${e.deadlineDays}-day deadline (${e.overdue.length}):`);
    for (const r of e.overdue)
      out.push(
        `  ${r.id} ${r.kind} ${r.shopId}: received ${r.receivedAt} (${r.ageDays} days), ${r.state}${r.pendingReason ? ` (${r.pendingReason})` : ''}`,
      );
    out.push('  repair: jobarchive forget --shop S (forget-shop); see docs/erasure.md');
  }
  if (e.forgottenLeftovers.length > 0) {
    out.push('', `forgotten shops with data still there (${e.forgottenLeftovers.length}):`);
    for (const l of e.forgottenLeftovers) {
      out.push(
        `  ${l.shopId} (forgotten ${l.forgottenAt}, request ${l.requestId}): ${l.rows} rows, ${l.archivedJobs} archived jobs completed before it, ${l.monthIndexes} month indexes, ${l.parts} parts, ${l.hotPrefixes} hot prefixes, ${l.uncommittedParts.length} uncommitted shared parts`,
      );
      for (const k of l.uncommittedParts) out.push(`    uncommitted shared part holding it: ${k}`);
      // Forget removes everything of the shop it finds: never the repair while the shop has newer jobs.
      out.push(
        l.newerJobs > 0
          ? `    repair: NOT forget (the shop has ${l.newerJobs} job(s) completed after its forget, which forget would erase too): redact the listed jobs' documents or delete their rows; see docs/erasure.md "Leftovers of a shop that came back"`
          : `    repair: jobarchive forget --shop ${l.shopId} --request-id ${l.requestId} (idempotent: removes what is left)`,
      );
    }
  }
  return out;
};
