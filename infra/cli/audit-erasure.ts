import { getRequest, listRequests, overdueRequests } from '../../shared/erasure/ledger';
import type { OverdueRequest } from '../../shared/erasure/summary';
import { readTombstones } from '../../shared/erasure/tombstone';
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
  for (const t of await readTombstones(target)) {
    // The tombstone names no shop: its request does (a GET; the ledger keeps it for good).
    const shopId = (await getRequest(target, t.requestId))?.request.shopId;
    if (shopId === undefined) continue;
    const stone = { ...t, shopId };
    const forgotten = (completedAt: unknown) =>
      !(typeof completedAt === 'string' && Date.parse(completedAt) > Date.parse(stone.forgottenAt));
    const rows = seen.rows.filter((r) => r.shopId === stone.shopId && forgotten(r.completedAt)).length;
    const left: ForgottenLeftover = {
      shopId: stone.shopId,
      forgottenAt: stone.forgottenAt,
      requestId: stone.requestId,
      rows,
      monthIndexes: count(seen.indexShops, stone.shopId),
      parts: count(seen.partShops, stone.shopId),
      hotPrefixes: count(seen.hotShops, stone.shopId),
    };
    // A shop that came back (jobs completed after its forget) has new data: only older rows count,
    // and archive objects only when it has no newer rows.
    const newer = seen.rows.some((r) => r.shopId === stone.shopId && !forgotten(r.completedAt));
    const found = newer ? left.rows : left.rows + left.monthIndexes + left.parts + left.hotPrefixes;
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
    for (const l of e.forgottenLeftovers)
      out.push(
        `  ${l.shopId} (forgotten ${l.forgottenAt}, request ${l.requestId}): ${l.rows} rows, ${l.monthIndexes} month indexes, ${l.parts} parts, ${l.hotPrefixes} hot prefixes`,
      );
    out.push('  repair: jobarchive forget --shop S (idempotent: removes what is left)');
  }
  return out;
};
