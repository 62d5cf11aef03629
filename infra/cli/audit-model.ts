import { type IndexedSource, type MonthIndex, parseSharedPartKey, SHARED } from '../../shared/archive/format';
import { LATE_ROW_BOUND_DAYS } from '../../shared/archive/steps/plan/late-rows';
import { TERMINAL_STATUSES } from '../../shared/jobs/schema';
import { normalizeEtag } from '../../shared/s3/objects';
import { checkTimestamp } from '../../shared/time';
import { EXIT_FINDINGS, EXIT_OK } from './args';

/**
 * What `jobarchive audit` concludes from what it read (pure: audit.ts does the reads). Everything is
 * keyed by Map, never by plain object, so ids like `constructor` are data, not prototype members.
 */

/** A row of the jobs table, as GSI_JobsByStatus_v2 projects it. */
export interface AuditRow {
  readonly shopId: string;
  readonly jobId: string;
  readonly status: string;
  /** The row's completed_at as stored (anything: a date the archiver cannot read is a finding). */
  readonly completedAt: unknown;
}

/** A terminal row whose completed_at is missing or not a timestamp: never archived, never a month. */
export interface UndatedRow {
  readonly shopId: string;
  readonly jobId: string;
  readonly status: string;
  /** Why, with the value quoted (as the archiver's quarantine says it). */
  readonly reason: string;
}

/** The hot objects of one job prefix `job-details/{job}/`. */
export interface HotPrefix {
  readonly jobId: string;
  /** key → unquoted ETag. */
  readonly objects: Map<string, string>;
  /** key → LastModified (ISO), where the listing gave one. */
  readonly modified?: Map<string, string>;
  readonly bytes: number;
  /** Newest LastModified (ISO) of the prefix: the orphan's month. */
  readonly newest: string | undefined;
}

export interface ColdPart {
  readonly key: string;
  readonly shopId: string;
  readonly month: string;
  readonly partName: string;
  /** From the listing (no extra request): checked against the size and ETag recorded at commit. */
  readonly size?: number;
  readonly etag?: string;
}

/** A job row the archiver cannot plan: not in GSI_JobsByStatus_v2 (it has no status_created_at). */
export interface UnplannableRow {
  readonly shopId: string;
  readonly jobId: string;
  readonly reason: string;
}

export interface AuditInputs {
  readonly rows: readonly AuditRow[];
  readonly hot: ReadonlyMap<string, HotPrefix>;
  readonly indexes: readonly MonthIndex[];
  readonly coldParts: readonly ColdPart[];
  /** `job-details-index/{shop}/{month}/pending/{part}.json` seen: part name → true, per `shop/month`. */
  readonly pending: ReadonlySet<string>;
  /** Shop of an orphan prefix from its objects' `shop-id` metadata (undefined: not looked up / none). */
  readonly orphanShops: ReadonlyMap<string, string | undefined>;
  /** Month indexes that exist but do not parse. */
  readonly corruptIndexes: readonly { key: string; shopId: string; month: string; reason: string }[];
  /** Committed parts whose blocks do not all inflate (`--deep`), part key → why. */
  readonly damagedParts?: ReadonlyMap<string, string>;
  /** Hot prefixes whose base-table row exists but is not in the status GSI (job id → row). */
  readonly unplannable?: ReadonlyMap<string, UnplannableRow>;
  /**
   * For a terminal job with hot objects past the archiver's bound (docs/steady-state.md, "Late rows"):
   * the cutoff of the last run (its watermark; absent when no run wrote one) and the grace period.
   */
  readonly due?: { readonly cutoff: number; readonly graceHours: number };
  /**
   * Hot prefixes whose job a settled part in a restore class may hold (its directory covers the id;
   * no entry left to say): not checked without a restore, each named (audit.ts withSettledHot).
   */
  readonly settledUnread?: ReadonlyArray<{ shopId: string; month: string; jobId: string; part: string }>;
}

export type MismatchKind =
  | 'source-present-after-delete'
  | 'hidden-hot-object'
  | 'uncommitted-part'
  | 'missing-part'
  | 'damaged-part'
  | 'lost-index'
  | 'corrupt-index'
  | 'unplannable-row'
  | 'overdue-hot-job'
  | 'split-shop-month'
  | 'unchecked-settled-job';

/** What repairs each kind of finding (printed under its heading). */
export const REPAIR: Readonly<Record<MismatchKind, (shopId: string, month: string, key: string) => string>> =
  {
    'source-present-after-delete': () =>
      'jobarchive run --replan (re-plans archived jobs past the watermark: the delete step removes what still matches its archive; the rest is archived again)',
    'hidden-hot-object': () =>
      'jobarchive run --replan (re-plans archived jobs past the watermark and archives this one again, hot prefix included; readers skip it until then)',
    'uncommitted-part': () =>
      'none needed with a staging manifest (a later run collects it after 12 h); without one: jobarchive reindex --force on its month, then remove the part if reindex excludes it',
    'missing-part': (s, m) =>
      `jobarchive reindex --shop ${s} --month ${m} --force, then jobarchive run --replan (hot copies of its jobs were kept only if never deleted)`,
    'damaged-part': (s, m, key) =>
      parseSharedPartKey(key)
        ? `none yet for a shared part (reindex refuses packed shop-months): the shop's hot copies stay while its segment is damaged (deletes never touch them); restore the part's bytes from a copy, or keep them hot`
        : `jobarchive reindex --shop ${s} --month ${m} --force, then jobarchive run --replan (drops the unreadable part; that run archives its jobs again from their hot copies, which deletes never touch while it is damaged)`,
    'lost-index': (s, m) =>
      s === SHARED
        ? `none yet for a shared index (reindex rebuilds a shop's own index only): restore job-details-index/_shared/${m}/shared.json (e.g. from a bucket version); until then readers name it and the packed shops' jobs cannot be read`
        : `jobarchive reindex --shop ${s} --month ${m}`,
    'corrupt-index': (s, m) => `jobarchive reindex --shop ${s} --month ${m} --force`,
    'overdue-hot-job': () =>
      'see the run reports for this job (quarantined? a failed group?) and fix what they name; then jobarchive run --replan archives every due job still hot',
    'split-shop-month': (s, m) =>
      `none automatic: the shop-month's own index hides its jobs in the month's shared index from lookup and search (jobarchive sql reads both); runs since issue 31 never split one (docs/archive-format.md). Note the jobs of ${s} ${m} in the shared view before any repair`,
    'unchecked-settled-job': () =>
      'restore the part (it is in a restore class) and audit again: its records say whether the hot prefix is a newer completion or objects written after the delete',
    'unplannable-row': () =>
      "set status_created_at on the row (the indexer's terminal write does; = completed_at): the archiver plans from GSI_JobsByStatus_v2",
  };

export interface Mismatch {
  readonly kind: MismatchKind;
  readonly shopId: string;
  readonly month: string;
  /** The object the finding is about (hot source, part key). */
  readonly key: string;
  readonly jobId?: string;
  readonly detail: string;
}

export interface Orphan {
  readonly jobId: string;
  /** `unknown` when the objects carry no `shop-id` metadata (or the lookup bound was reached). */
  readonly shopId: string;
  readonly month: string;
  readonly objects: number;
  readonly bytes: number;
}

export interface AuditGroup {
  readonly shopId: string;
  readonly month: string;
  /** Terminal rows (completed in this month) whose hot objects still exist. */
  hotJobs: number;
  /** Of hotJobs: also committed in an index and not yet marked deleted (normal during grace). */
  awaitingDelete: number;
  /** Distinct jobs in this month's index. */
  archivedJobs: number;
  /** Of archivedJobs: every entry marked deleted (hot objects removed). */
  archivedDeleted: number;
  orphans: number;
  mismatches: number;
}

export interface AuditFindings {
  readonly groups: AuditGroup[];
  readonly orphans: Orphan[];
  readonly mismatches: Mismatch[];
  readonly undated: UndatedRow[];
  readonly totals: {
    readonly rows: number;
    readonly hotPrefixes: number;
    readonly hotJobs: number;
    readonly archivedJobs: number;
    readonly orphans: number;
    readonly mismatches: number;
    readonly undated: number;
  };
}

export const UNKNOWN_SHOP = 'unknown';

const DAY_MS = 86_400_000;

/**
 * Whole days a hot terminal job completed at `completedMs` is past the archiver's bound, or null: it
 * was due at every run whose cutoff passed it, and the last run's cutoff is more than
 * LATE_ROW_BOUND_DAYS and the grace period past it. (A row that reached the GSI late is measured from
 * its due date too: audit cannot see when a row arrived.)
 */
const overdueBy = (completedMs: number, d: NonNullable<AuditInputs['due']>): number | null => {
  const bound = completedMs + LATE_ROW_BOUND_DAYS * DAY_MS + d.graceHours * 3_600_000;
  return d.cutoff > bound ? Math.floor((d.cutoff - bound) / DAY_MS) : null;
};

/** `audit`'s exit code: 0 when clean, EXIT_FINDINGS (4) when it found orphans, mismatches or undated rows. */
export const auditExitCode = (
  f: Pick<AuditFindings, 'totals'> & {
    readonly erasure?: {
      readonly overdue: readonly unknown[];
      readonly forgottenLeftovers: readonly unknown[];
    };
  },
): number =>
  f.totals.orphans > 0 ||
  f.totals.mismatches > 0 ||
  f.totals.undated > 0 ||
  (f.erasure?.overdue.length ?? 0) > 0 ||
  (f.erasure?.forgottenLeftovers.length ?? 0) > 0
    ? EXIT_FINDINGS
    : EXIT_OK;
const TERMINAL = new Set<string>(TERMINAL_STATUSES);

export const pendingId = (shopId: string, month: string, partName: string): string =>
  `${shopId}/${month}/${partName}`;

export const classifyAudit = (inp: AuditInputs): AuditFindings => {
  const groups = new Map<string, AuditGroup>();
  const group = (shopId: string, month: string): AuditGroup => {
    const id = `${shopId}\u0000${month}`;
    let g = groups.get(id);
    if (!g) {
      g = {
        shopId,
        month,
        hotJobs: 0,
        awaitingDelete: 0,
        archivedJobs: 0,
        archivedDeleted: 0,
        orphans: 0,
        mismatches: 0,
      };
      groups.set(id, g);
    }
    return g;
  };
  const mismatches: Mismatch[] = [];
  const mismatch = (m: Mismatch): void => {
    mismatches.push(m);
    group(m.shopId, m.month).mismatches++;
  };

  // Which jobs the indexes know, and whether their newest entry still waits for the delete step.
  const indexed = new Set<string>();
  const undeleted = new Set<string>();
  const committedParts = new Set<string>();
  const coldByKey = new Map(inp.coldParts.map((p) => [p.key, p]));
  // The row's completion per job: objects of a newer completion (a retry) are read by every reader.
  const rowCompletion = new Map<string, number>();
  for (const r of inp.rows) {
    const t = checkTimestamp(r.completedAt).time;
    if (t) rowCompletion.set(r.jobId, t.ms);
  }
  const seenMonths = new Set<string>();
  for (const idx of inp.indexes) {
    const g = group(idx.shop_id, idx.month);
    // An own index and a view in the month's shared index: readers consult the own one only.
    const sm = `${idx.shop_id}/${idx.month}`;
    if (seenMonths.has(sm)) {
      mismatch({
        kind: 'split-shop-month',
        shopId: idx.shop_id,
        month: idx.month,
        key: `job-details-index/${idx.shop_id}/${idx.month}/index.json`,
        detail: `jobs in both its own index and the month's shared index (job-details-index/_shared/${idx.month}/shared.json): lookup and search read only the own one`,
      });
    }
    seenMonths.add(sm);
    for (const p of idx.parts) {
      committedParts.add(p.key);
      const cold = coldByKey.get(p.key);
      if (!cold) {
        mismatch({
          kind: 'missing-part',
          shopId: idx.shop_id,
          month: idx.month,
          key: p.key,
          detail: `index lists part ${p.name} (${p.job_count} jobs) but the object is gone`,
        });
        continue;
      }
      // Against what the commit recorded: the size, and the ETag that any rewrite changes.
      const problem =
        cold.size !== undefined && cold.size !== p.size
          ? `stored ${cold.size} bytes, committed ${p.size}`
          : p.etag !== undefined && cold.etag !== undefined && cold.etag !== p.etag
            ? `stored ETag ${cold.etag}, committed ${p.etag}: rewritten after its commit`
            : inp.damagedParts?.get(p.key);
      if (problem) {
        mismatch({
          kind: 'damaged-part',
          shopId: idx.shop_id,
          month: idx.month,
          key: p.key,
          detail: `part ${p.name} (${p.job_count} jobs): ${problem}`,
        });
      }
    }
    // A settled part's jobs (no entries left) count by its job_count, all deleted. A job whose newer
    // archival a settled part holds (audit.ts read it back from its record, after the job's entries)
    // is checked below, not counted again for its older entries.
    const settledParts = new Set<string>();
    for (const p of idx.parts) {
      if (!p.settled) continue;
      settledParts.add(p.name);
      g.archivedJobs += p.job_count;
      g.archivedDeleted += p.job_count;
    }
    for (const [jobId, entries] of Object.entries(idx.jobs)) {
      if (!Array.isArray(entries) || entries.length === 0) continue;
      indexed.add(jobId);
      if (!entries.some((e) => settledParts.has(e.part))) {
        g.archivedJobs++;
        if (entries.every((e) => e.deleted_at !== null)) g.archivedDeleted++;
      }
      const latest = entries[entries.length - 1];
      if (latest?.deleted_at === null) undeleted.add(jobId);
      const hot = inp.hot.get(jobId);
      if (!hot || !latest) continue;
      for (const e of entries) {
        for (const s of e.sources) {
          // Same key and same bytes: the delete step said it removed this object, yet it is there.
          if (e.deleted_at !== null && hot.objects.get(s.key) === normalizeEtag(s.etag)) {
            mismatch({
              kind: 'source-present-after-delete',
              shopId: idx.shop_id,
              month: idx.month,
              key: s.key,
              jobId,
              detail: `entry in ${e.part} marked deleted at ${e.deleted_at}, source still present`,
            });
          }
        }
      }
      // The latest archival of the row's own completion is marked deleted, so readers that know the
      // completion skip the hot prefix: whatever is there now (written after that delete) is hidden
      // until a run archives it again. No timestamps involved: the entry's state decides.
      const completion = rowCompletion.get(jobId);
      // (No row: the archived completion is the only one known, and no run plans the job again.)
      if (latest.deleted_at === null) continue;
      if (completion !== undefined && completion !== checkTimestamp(latest.completed_at).time?.ms) continue;
      for (const key of hot.objects.keys()) {
        if (latest.sources.some((s: IndexedSource) => s.key === key)) continue; // reported above
        mismatch({
          kind: 'hidden-hot-object',
          shopId: idx.shop_id,
          month: idx.month,
          key,
          jobId,
          detail: `entry in ${latest.part} marked deleted at ${latest.deleted_at}; this object is not in any archive and readers skip the hot prefix`,
        });
      }
    }
  }

  for (const u of inp.settledUnread ?? []) {
    indexed.add(u.jobId);
    mismatch({
      kind: 'unchecked-settled-job',
      shopId: u.shopId,
      month: u.month,
      key: u.part,
      jobId: u.jobId,
      detail: `hot prefix of a job settled part ${u.part} may hold; the part is in a restore class: not checked without a restore`,
    });
  }

  // A group whose index does not parse is reported once, not once per part; a month with committed
  // parts (no staging manifest) but no index once, as a lost index.
  const corrupt = new Set(inp.corruptIndexes.map((c) => `${c.shopId}/${c.month}`));
  const withIndex = new Set(inp.indexes.map((i) => `${i.shop_id}/${i.month}`));
  const lost = new Map<string, ColdPart[]>();
  for (const p of inp.coldParts) {
    if (committedParts.has(p.key) || corrupt.has(`${p.shopId}/${p.month}`)) continue;
    const staged = inp.pending.has(pendingId(p.shopId, p.month, p.partName));
    if (!staged && !withIndex.has(`${p.shopId}/${p.month}`)) {
      const id = `${p.shopId}/${p.month}`;
      lost.set(id, [...(lost.get(id) ?? []), p]);
      continue;
    }
    mismatch({
      kind: 'uncommitted-part',
      shopId: p.shopId,
      month: p.month,
      key: p.key,
      detail: staged
        ? 'not in the month index; a staging manifest exists (run in flight, or abandoned: a later run removes it)'
        : 'not in the month index and no staging manifest',
    });
  }
  for (const parts of lost.values()) {
    const first = parts[0] as ColdPart;
    mismatch({
      kind: 'lost-index',
      shopId: first.shopId,
      month: first.month,
      key: `job-details-index/${first.shopId}/${first.month}/index.json`,
      detail: `no month index, but ${parts.length} committed part(s) (no staging manifest): the archiver refuses this month until it is rebuilt`,
    });
  }

  for (const c of inp.corruptIndexes) {
    mismatch({ kind: 'corrupt-index', shopId: c.shopId, month: c.month, key: c.key, detail: c.reason });
  }

  const withRow = new Set<string>();
  const undated: UndatedRow[] = [];
  let hotJobs = 0;
  for (const r of inp.rows) {
    withRow.add(r.jobId);
    if (!TERMINAL.has(r.status)) continue;
    // The row's own timestamp, parsed like the archiver parses it (a Python offset included); one it
    // cannot read goes under its own heading, never into a month named after it.
    const parsed = checkTimestamp(r.completedAt);
    if (parsed.time === null) {
      const reason =
        r.completedAt === undefined || r.completedAt === null
          ? 'terminal row has no completed_at'
          : `completed_at: ${parsed.problem}`;
      undated.push({ shopId: r.shopId, jobId: r.jobId, status: r.status, reason });
      continue;
    }
    if (!inp.hot.has(r.jobId)) continue;
    const g = group(r.shopId, parsed.time.month);
    g.hotJobs++;
    hotJobs++;
    if (undeleted.has(r.jobId)) g.awaitingDelete++;
    // An archived job's hot objects are the delete step's (awaiting delete) or other findings'.
    const late = inp.due && !indexed.has(r.jobId) ? overdueBy(parsed.time.ms, inp.due) : null;
    if (late !== null) {
      mismatch({
        kind: 'overdue-hot-job',
        shopId: r.shopId,
        month: parsed.time.month,
        key: `job-details/${r.jobId}/`,
        jobId: r.jobId,
        detail: `terminal (${r.status}) since ${parsed.time.iso}, not archived ${late} days past the archiver's bound (the last run's cutoff passed it by more than ${LATE_ROW_BOUND_DAYS} days + grace: docs/steady-state.md, "Late rows")`,
      });
    }
  }

  const orphans: Orphan[] = [];
  for (const [jobId, h] of inp.hot) {
    if (withRow.has(jobId) || indexed.has(jobId)) continue;
    const row = inp.unplannable?.get(jobId);
    if (row) {
      mismatch({
        kind: 'unplannable-row',
        shopId: row.shopId,
        month: (h.newest ?? '').slice(0, 7) || 'unknown',
        key: `job-details/${jobId}/`,
        jobId,
        detail: row.reason,
      });
      continue;
    }
    const shopId = inp.orphanShops.get(jobId) ?? UNKNOWN_SHOP;
    const month = (h.newest ?? '').slice(0, 7) || 'unknown';
    orphans.push({ jobId, shopId, month, objects: h.objects.size, bytes: h.bytes });
    group(shopId, month).orphans++;
  }

  const sorted = [...groups.values()].sort((a, b) =>
    a.shopId === b.shopId ? a.month.localeCompare(b.month) : a.shopId.localeCompare(b.shopId),
  );
  return {
    groups: sorted,
    orphans,
    mismatches,
    undated,
    totals: {
      rows: inp.rows.length,
      hotPrefixes: inp.hot.size,
      hotJobs,
      archivedJobs: sorted.reduce((n, g) => n + g.archivedJobs, 0),
      orphans: orphans.length,
      mismatches: mismatches.length,
      undated: undated.length,
    },
  };
};

/** Job ids of hot prefixes that are orphans before shop attribution (the ones audit.ts HEADs). */
export const orphanCandidates = (
  hot: ReadonlyMap<string, HotPrefix>,
  rows: readonly AuditRow[],
  indexes: readonly MonthIndex[],
): string[] => {
  const known = new Set(rows.map((r) => r.jobId));
  for (const idx of indexes) for (const jobId of Object.keys(idx.jobs)) known.add(jobId);
  return [...hot.keys()].filter((j) => !known.has(j));
};
