import { EXIT_FINDINGS, EXIT_OK } from './args';
import { checkTimestamp } from '../../shared/time';
import type { MonthIndex } from '../../shared/archive/format/month-index';
import { normalizeEtag } from '../../shared/s3/objects';
import { TERMINAL_STATUSES } from '../../shared/jobs/schema';

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
}

export type MismatchKind =
  | 'source-present-after-delete'
  | 'uncommitted-part'
  | 'missing-part'
  | 'corrupt-index';

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

/** `audit`'s exit code: 0 when clean, EXIT_FINDINGS (4) when it found orphans, mismatches or undated rows. */
export const auditExitCode = (f: Pick<AuditFindings, 'totals'>): number =>
  f.totals.orphans > 0 || f.totals.mismatches > 0 || f.totals.undated > 0 ? EXIT_FINDINGS : EXIT_OK;
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
  const coldKeys = new Set(inp.coldParts.map((p) => p.key));
  const committedParts = new Set<string>();
  for (const idx of inp.indexes) {
    const g = group(idx.shop_id, idx.month);
    for (const p of idx.parts) {
      committedParts.add(p.key);
      if (!coldKeys.has(p.key)) {
        mismatch({
          kind: 'missing-part',
          shopId: idx.shop_id,
          month: idx.month,
          key: p.key,
          detail: `index lists part ${p.name} (${p.job_count} jobs) but the object is gone`,
        });
      }
    }
    for (const [jobId, entries] of Object.entries(idx.jobs)) {
      if (!Array.isArray(entries) || entries.length === 0) continue;
      indexed.add(jobId);
      g.archivedJobs++;
      if (entries.every((e) => e.deleted_at !== null)) g.archivedDeleted++;
      if (entries[entries.length - 1]?.deleted_at === null) undeleted.add(jobId);
      const hot = inp.hot.get(jobId);
      for (const e of entries) {
        if (e.deleted_at === null || !hot) continue;
        // The delete step drops a deleted entry's manifest: an object of the job written no later than
        // the entry's commit existed when it was archived, so the delete should have removed it.
        if (e.sources.length === 0) {
          for (const [key, at] of hot.modified ?? []) {
            if (at > e.committed_at) continue; // written later: a retry's object, not a mismatch
            mismatch({
              kind: 'source-present-after-delete',
              shopId: idx.shop_id,
              month: idx.month,
              key,
              jobId,
              detail: `entry in ${e.part} marked deleted at ${e.deleted_at}, an object from before its commit is still present`,
            });
          }
        }
        for (const s of e.sources) {
          // Same key and same bytes: the delete step said it removed this object, yet it is there.
          // (A different ETag is a newer write — a retried job — and is not a mismatch.)
          if (hot.objects.get(s.key) === normalizeEtag(s.etag)) {
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
    }
  }

  // A group whose index does not parse is reported once, not once per part.
  const corrupt = new Set(inp.corruptIndexes.map((c) => `${c.shopId}/${c.month}`));
  for (const p of inp.coldParts) {
    if (committedParts.has(p.key) || corrupt.has(`${p.shopId}/${p.month}`)) continue;
    const staged = inp.pending.has(pendingId(p.shopId, p.month, p.partName));
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
  }

  const orphans: Orphan[] = [];
  for (const [jobId, h] of inp.hot) {
    if (withRow.has(jobId) || indexed.has(jobId)) continue;
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
