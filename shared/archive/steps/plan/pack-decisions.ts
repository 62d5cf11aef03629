import { ConcurrentModificationError } from '../../../errors';
import { validateMonth } from '../../../ids';
import { getObjectBytes, putConditional } from '../../../s3/objects';
import { PACK_DECISIONS_KEY } from '../../format';
import type { StepDeps } from '../context';
import { isObj } from '../shape';
import type { PlannedGroup } from '../types';
import type { PageGroup } from './plan-rows';

/**
 * Own or shared, decided once per shop-month (docs/archive-format.md, "Shared parts"). A shop-month
 * of a month archived for the first time is packed when its hot bytes are below `packBelowKb` — but
 * its jobs may come on several plan pages (the GSI is read in key order, not by shop), or again in a
 * run after one that died before Report (the watermark did not move): each part alone would be judged
 * by its own bytes, and a small later part of a shop-month that went to its own index would go to the
 * shared one (or the reverse), where readers, which consult the own index first, never look.
 *
 * So the first decision holds: every decision for a month archived for the first time is kept in
 * PACK_DECISIONS_KEY (a page with such groups reads it and writes it back: 1 GET + 1 PUT), and a later
 * part of a decided shop-month follows it whatever its bytes. Months before the run's `packFrom` are
 * dropped from the document: their groups are `'if-packed'` (routed by the shared index's views),
 * which is consistent with whatever was committed. A document that cannot be read is replaced, and
 * that page's groups are `'if-packed'` too (never a halt: that routing is always consistent).
 */
export const PACK_DECISIONS_FORMAT = 'job-details-archive/pack-decisions@1';

type Decision = 'own' | 'shared';
/** month → shop → decision; BY_VIEW: every group of the month is routed by the shared index's views. */
type Decisions = Map<string, Map<string, Decision> | typeof BY_VIEW>;
const BY_VIEW = 'by-view';

const isMonth = (month: string): boolean => {
  try {
    validateMonth(month);
    return true;
  } catch {
    return false;
  }
};

const parse = (bytes: Uint8Array): Decisions | null => {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return null;
  }
  if (!isObj(v) || v.format !== PACK_DECISIONS_FORMAT || !isObj(v.months)) return null;
  const out: Decisions = new Map();
  for (const [month, shops] of Object.entries(v.months)) {
    if (!isMonth(month)) return null; // month 13 is damage too: the document is unreadable
    if (shops === BY_VIEW) {
      out.set(month, BY_VIEW);
      continue;
    }
    if (!isObj(shops)) return null;
    const m = new Map<string, Decision>();
    for (const [shop, d] of Object.entries(shops)) {
      if (d !== 'own' && d !== 'shared') return null;
      m.set(shop, d);
    }
    out.set(month, m);
  }
  return out;
};

const monthStart = (month: string): number => Date.parse(`${month}-01T00:00:00.000Z`);

/** Bytes of a group's listed hot objects. */
const hotBytes = (g: PageGroup): number =>
  g.jobs.reduce((n, j) => n + (j.objects ?? []).reduce((m, o) => m + o.size, 0), 0);

/**
 * How each group of the page is routed (PlannedGroup.pack): reads and updates the decisions only when
 * the page holds a group of a month archived for the first time.
 */
export const packDecisions = async (
  deps: StepDeps,
  run: { readonly runId: string; readonly dryRun: boolean },
  groups: readonly PageGroup[],
  packFrom: string | null | undefined,
): Promise<(g: PageGroup) => PlannedGroup['pack']> => {
  const { packBelowKb } = deps.settings;
  if (!(packBelowKb > 0)) return () => undefined;
  // A month archived before: its shop-month goes where its earlier archival went.
  if (packFrom === null || packFrom === undefined) return () => 'if-packed';
  const isNew = (month: string): boolean => packFrom === '' || monthStart(month) >= Date.parse(packFrom);
  const fresh = groups.filter((g) => isNew(g.month));
  if (fresh.length === 0) return () => 'if-packed';

  // Conditional on the ETag read (an overlapping run's page may write between): on a conflict, read
  // the other's decisions and decide again on top of them.
  for (let attempt = 0; ; attempt++) {
    const got = await getObjectBytes(deps.s3, deps.bucket, PACK_DECISIONS_KEY);
    const { routed, doc } = decide(got ? parse(got.bytes) : new Map(), fresh, isNew, packBelowKb);
    // A dry run commits nothing: it decides as a run would, and keeps nothing.
    if (doc === null || run.dryRun) return (g) => (routed.has(g) ? routed.get(g) : 'if-packed');
    try {
      await putConditional(
        deps.s3,
        {
          Bucket: deps.bucket,
          Key: PACK_DECISIONS_KEY,
          Body: JSON.stringify({ format: PACK_DECISIONS_FORMAT, run_id: run.runId, months: doc }),
          ContentType: 'application/json',
        },
        got?.etag ?? null,
      );
      return (g) => (routed.has(g) ? routed.get(g) : 'if-packed');
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt >= 4) throw err;
    }
  }
};

/** The page's routing over the stored decisions, and the document to store (null: unchanged). */
const decide = (
  stored: Decisions | null,
  fresh: readonly PageGroup[],
  isNew: (month: string) => boolean,
  packBelowKb: number,
): { routed: Map<PageGroup, PlannedGroup['pack']>; doc: Record<string, unknown> | null } => {
  const decisions: Decisions = new Map();
  for (const [month, shops] of stored ?? [])
    if (isNew(month)) decisions.set(month, shops === BY_VIEW ? BY_VIEW : new Map(shops));
  let changed = stored === null || decisions.size !== (stored?.size ?? 0);
  const routed = new Map<PageGroup, PlannedGroup['pack']>();
  for (const g of fresh) {
    // An unreadable document: this month is routed by the shared index's views from now on.
    if (stored === null) decisions.set(g.month, BY_VIEW);
    let shops = decisions.get(g.month);
    if (shops === BY_VIEW) {
      routed.set(g, 'if-packed');
      continue;
    }
    if (shops === undefined) {
      shops = new Map();
      decisions.set(g.month, shops);
    }
    let d = shops.get(g.shopId);
    if (d === undefined) {
      d = hotBytes(g) < packBelowKb * 1024 ? 'shared' : 'own';
      shops.set(g.shopId, d);
      changed = true;
    }
    routed.set(g, d === 'shared' ? true : undefined);
  }
  if (!changed) return { routed, doc: null };
  const sorted = <T>(m: Map<string, T>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    routed,
    doc: Object.fromEntries(
      sorted(decisions).map(([m, shops]) => [
        m,
        shops === BY_VIEW ? BY_VIEW : Object.fromEntries(sorted(shops)),
      ]),
    ),
  };
};

/**
 * Erasure (docs/erasure.md): the decisions document names shops, so forget removes a shop from it
 * (conditional PUT on the ETag read, re-read on a conflict). Returns whether it was there. An
 * unreadable document (it may name the shop) is replaced by an empty one: erasure first — the months
 * it held are decided again by bytes.
 */
export const forgetPackDecisions = async (
  deps: Pick<StepDeps, 's3' | 'bucket'>,
  shopId: string,
): Promise<boolean> => {
  for (let attempt = 0; ; attempt++) {
    const got = await getObjectBytes(deps.s3, deps.bucket, PACK_DECISIONS_KEY);
    if (!got) return false;
    const stored = parse(got.bytes);
    const named = stored === null || [...stored.values()].some((m) => m !== BY_VIEW && m.has(shopId));
    if (!named) return false;
    const months: Record<string, unknown> = {};
    for (const [month, shops] of stored ?? []) {
      if (shops === BY_VIEW) months[month] = BY_VIEW;
      else months[month] = Object.fromEntries([...shops].filter(([s]) => s !== shopId));
    }
    try {
      await putConditional(
        deps.s3,
        {
          Bucket: deps.bucket,
          Key: PACK_DECISIONS_KEY,
          Body: JSON.stringify({ format: PACK_DECISIONS_FORMAT, run_id: '', months }),
          ContentType: 'application/json',
        },
        got.etag,
      );
      return true;
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt >= 4) throw err;
    }
  }
};
