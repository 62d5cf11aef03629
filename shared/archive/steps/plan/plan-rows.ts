import { validateJobId, validateShopId } from '../../../ids';
import { TERMINAL_STATUSES } from '../../../jobs/schema';
import { checkTimestamp } from '../../../time';
import { reasonOf, reportableId } from '../caps';
import type { PlannedJob, PlannedObject, QuarantinedJob } from '../types';
import type { GsiStartKey } from './cursor';

/**
 * Pure part of Plan: what one GSI_JobsByStatus_v2 item becomes (a planned job in a shop × month
 * group, or a quarantine with a reason) and the page being assembled. No keys are built from ids that
 * fail validation.
 */
export type RowVerdict =
  | { readonly kind: 'plan'; readonly shopId: string; readonly month: string; readonly job: PlannedJob }
  | { readonly kind: 'quarantine'; readonly entry: QuarantinedJob }
  /** Terminal, but its completed_at is not before the cutoff yet: a later run plans it. */
  | { readonly kind: 'later' }
  /** Below the watermark and due at the previous cutoff: an earlier run planned it. */
  | { readonly kind: 'seen' };

type Item = Record<string, unknown>;

const optStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const optNum = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const optBool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

/**
 * How far past the cutoff the GSI key condition reaches. `status_created_at` is at most
 * `completed_at` (the writer sets it at completion, the Python indexer at IN_PROGRESS), so
 * `status_created_at < cutoff` would find every due job — if every writer wrote UTC. A key written
 * with an offset (`…+14:00`) sorts as its local time, up to 14 h away from its instant; a day of slack
 * covers any offset, and the exact test is `completed_at < cutoff` on the parsed value.
 */
export const KEY_CONDITION_SLACK_MS = 24 * 3600 * 1000;

export const keyConditionBound = (cutoff: string): string =>
  new Date(Date.parse(cutoff) + KEY_CONDITION_SLACK_MS).toISOString();

/** The item's GSI key: Plan's cursor resumes after it. */
export const startKeyOf = (item: Item): GsiStartKey => ({
  pk: String(item.pk),
  sk: String(item.sk),
  job_status: String(item.job_status),
  status_created_at: String(item.status_created_at),
});

/**
 * Eligibility is the design's rule, `completed_at < cutoff`, on the parsed timestamp (shared/time.ts),
 * whatever `status_created_at` says. A terminal row with no completed_at, or one that does not parse,
 * is quarantined with the value quoted: never guessed from another attribute.
 */
export const classifyPlanRow = (item: Item, status: string, cutoff: string): RowVerdict => {
  const rawShop = typeof item.pk === 'string' && item.pk.startsWith('SHOP#') ? item.pk.slice(5) : item.pk;
  const rawJob = typeof item.sk === 'string' && item.sk.startsWith('JOB#') ? item.sk.slice(4) : item.sk;
  const quarantine = (reason: string): RowVerdict => ({
    kind: 'quarantine',
    entry: { shopId: reportableId(rawShop), jobId: reportableId(rawJob), reason },
  });
  if (typeof item.pk !== 'string' || !item.pk.startsWith('SHOP#'))
    return quarantine('pk is not SHOP#{shop_id}');
  if (typeof item.sk !== 'string' || !item.sk.startsWith('JOB#')) return quarantine('sk is not JOB#{job_id}');
  let shopId: string;
  let jobId: string;
  try {
    shopId = validateShopId(rawShop);
    jobId = validateJobId(rawJob);
  } catch (err) {
    return quarantine(reasonOf(err));
  }
  if (item.job_id !== undefined && item.job_id !== jobId)
    return quarantine('job_id attribute does not match sk');
  if (item.job_status !== status || !(TERMINAL_STATUSES as readonly string[]).includes(status)) {
    return quarantine(`status ${String(item.job_status)} is not the terminal status queried`);
  }
  if (item.completed_at === undefined || item.completed_at === null) {
    return quarantine(
      `terminal row has no completed_at (status_created_at ${JSON.stringify(item.status_created_at)})`,
    );
  }
  const { time: completed, problem } = checkTimestamp(item.completed_at);
  if (completed === null) return quarantine(`completed_at: ${problem}`);
  if (completed.iso >= cutoff) return { kind: 'later' };
  return {
    kind: 'plan',
    shopId,
    month: completed.month,
    job: plannedJob(jobId, status, completed.iso, item),
  };
};

/**
 * A planned job from what the GSI projected of its row (absent attributes → null); with no row (the
 * orphan sweep's jobs), every projected attribute is null.
 */
export const plannedJob = (
  jobId: string,
  status: string,
  completedAt: string,
  item: Item = {},
): PlannedJob => ({
  job_id: jobId,
  status,
  completed_at: completedAt,
  created_at: optStr(item.created_at),
  started_at: optStr(item.started_at),
  job_type: optStr(item.job_type),
  platform: optStr(item.platform),
  error_message: optStr(item.error_message),
  retry_count: optNum(item.retry_count),
  is_internal: optBool(item.is_internal),
  initiator_user_id: optStr(item.initiator_user_id),
  estimated_time_minutes: optNum(item.estimated_time_minutes),
  ttl: optNum(item.ttl),
});

const groupId = (shopId: string, month: string): string => `${shopId}\u0000${month}`;

/**
 * One page being planned: groups (bounded by `maxGroups`) and every quarantine (a page reads at most
 * `planPageJobs` rows; the list goes to the page's findings document, not into the state).
 */
export class PlanPage {
  private readonly groups = new Map<
    string,
    { shopId: string; month: string; jobs: Map<string, PlannedJob> }
  >();
  readonly quarantined: QuarantinedJob[] = [];
  private readonly quarantinedIds = new Set<string>();
  jobsPlanned = 0;
  /** Jobs of forgotten shops completed before their forget (shared/erasure/tombstone.ts): never planned. */
  forgotten = 0;

  constructor(
    private readonly maxGroups: number,
    private readonly refuse: (shopId: string, completedAt: string | null) => boolean = () => false,
  ) {}

  /** False when taking this row would open a group beyond the page's limit (Plan stops before it). */
  fits(v: RowVerdict): boolean {
    return (
      v.kind !== 'plan' || this.groups.has(groupId(v.shopId, v.month)) || this.groups.size < this.maxGroups
    );
  }

  add(v: RowVerdict): void {
    if (v.kind === 'later' || v.kind === 'seen') return;
    if (v.kind === 'plan' ? this.refuse(v.shopId, v.job.completed_at) : this.refuse(v.entry.shopId, null)) {
      this.forgotten++;
      return;
    }
    if (v.kind === 'quarantine') {
      // A retried job can also be read from the GSI: listed once.
      const id = `${v.entry.shopId}\u0000${v.entry.jobId}`;
      if (!this.quarantinedIds.has(id)) this.quarantined.push(v.entry);
      this.quarantinedIds.add(id);
      return;
    }
    const id = groupId(v.shopId, v.month);
    let g = this.groups.get(id);
    if (!g) {
      g = { shopId: v.shopId, month: v.month, jobs: new Map() };
      this.groups.set(id, g);
    }
    // A job whose status changed while Plan read the GSI can show up under two statuses: keep its
    // latest completion, so a group never holds one job twice.
    const seen = g.jobs.get(v.job.job_id);
    if (!seen) this.jobsPlanned++;
    if (!seen || seen.completed_at < v.job.completed_at) g.jobs.set(v.job.job_id, v.job);
  }

  /** Groups sorted by shop then month, jobs by id: the same input plans the same page. */
  result(): PageGroup[] {
    return [...this.groups.values()]
      .sort((a, b) => (a.shopId === b.shopId ? a.month.localeCompare(b.month) : a.shopId < b.shopId ? -1 : 1))
      .map((g) => ({
        shopId: g.shopId,
        month: g.month,
        jobs: [...g.jobs.values()].sort((a, b) => (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0)),
      }));
  }
}

export interface PageGroup {
  readonly shopId: string;
  readonly month: string;
  /** With `objects` once Plan has listed the page's hot objects. */
  readonly jobs: Array<PlannedJob & { readonly objects?: PlannedObject[] }>;
}
