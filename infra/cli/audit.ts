import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import {
  COLD_PREFIX,
  HOT_PREFIX,
  INDEX_PREFIX,
  type IndexedJob,
  jobEntries,
  latestEntry,
  type MonthIndex,
  parseMonthIndex,
  parseMonthIndexKey,
  parsePartKey,
  parseSharedIndex,
  parseSharedIndexKey,
  SHARED,
  settledCandidates,
  validatePartName,
} from '../../shared/archive/format';
import { blockCheck, pointedBlocks } from '../../shared/archive/part-integrity';
import { settledArchivals } from '../../shared/archive/steps/archive/settled-archivals';
import { readWatermark, writtenByRun } from '../../shared/archive/steps/plan/watermark';
import { mapLimit } from '../../shared/concurrency';
import { META_SHOP_ID } from '../../shared/details/store';
import { isNamedError } from '../../shared/errors';
import { ExactGetCommand, ExactQueryCommand } from '../../shared/jobs/exact-commands';
import { JOB_STATUSES, JOBS_TABLE, jobIdFromSk, shopIdFromPk } from '../../shared/jobs/schema';
import { getObjectBytes, normalizeEtag } from '../../shared/s3/objects';
import { boolFlag, type CommandSpec, type Flags, settingFlag, settingOption, wholeNumberFlag } from './args';
import { auditErasure, type ErasureAudit, erasureLines } from './audit-erasure';
import {
  type AuditFindings,
  type AuditRow,
  type ColdPart,
  classifyAudit,
  type HotPrefix,
  orphanCandidates,
  pendingId,
  REPAIR,
  type UnplannableRow,
} from './audit-model';
import { type SharedJobId, sharedJobIds } from './audit-shared-ids';
import type { CliContext } from './context';
import { formatBytes, type Output, printJson, table } from './output';

export const auditSpec: CommandSpec = {
  name: 'audit',
  short: 'per shop × month: hot, archived, orphaned jobs and mismatches',
  summary:
    'Per shop × month: hot jobs, archived jobs, orphans (hot prefixes with no row and in no index) and ' +
    'mismatches (sources present past deletion, uncommitted parts, index entries pointing at missing parts).',
  options: {
    'max-heads': {
      type: 'string',
      value: 'N',
      help: 'at most N HeadObject calls to attribute orphans to a shop (default 1000); the rest are "unknown"',
    },
    concurrency: { type: 'string', value: 'N', help: 'parallel GET/HEAD requests (default 8)' },
    'erasure-deadline-days': settingOption('erasureDeadlineDays', 'N'),
    deep: {
      type: 'boolean',
      help: 'also GET every committed part and inflate every block (a damaged block that kept size and ETag)',
    },
  },
  notes: [
    'Reads, all paginated, none of them scans the table:',
    '  DynamoDB  1 Query page per ≤1 MB of GSI_JobsByStatus_v2 per status (5 statuses; INCLUDE projection, ~0.5 RCU per 4 KB)',
    '  S3 LIST   ⌈objects / 1000⌉ for each of job-details/, job-details-index/, job-details-cold/',
    '  S3 GET    1 per month index and 1 per month with a shared index (Standard storage, never Glacier), 1 of the watermark',
    '  S3 HEAD   1 per orphan job prefix, capped by --max-heads (+1 DynamoDB GetItem each: a row the GSI misses)',
    '  parts are checked against the size and ETag their commit recorded from the LIST itself (no request);',
    '  --deep adds 1 GET per committed part (every byte read: costly for parts in Glacier — not restored, reported)',
    'At us-east-1 list prices a million hot objects cost ~1,000 LISTs ≈ $0.005. Memory grows with the',
    'number of hot objects and rows (~200 bytes each).',
    'Erasure (docs/erasure.md): requests older than the deadline and not complete, and forgotten shops with data',
    'still there, are findings too (1 LIST of the ledger and of the tombstones, 1 GET per open request and tombstone).',
  ],
};

export interface AuditOptions {
  readonly maxHeads: number;
  readonly concurrency: number;
  readonly json: boolean;
  readonly deep?: boolean;
  /** Default: the setting (`JDA_ERASURE_DEADLINE_DAYS` or 30). */
  readonly erasureDeadlineDays?: number;
}

export const parseAuditOptions = (flags: Flags): AuditOptions => ({
  maxHeads: wholeNumberFlag(flags, 'max-heads', 1000, { min: 0, max: 1_000_000 }),
  concurrency: wholeNumberFlag(flags, 'concurrency', 8, { min: 1, max: 64 }),
  json: boolFlag(flags, 'json'),
  deep: boolFlag(flags, 'deep'),
  ...optional('erasureDeadlineDays', settingFlag(flags, 'erasure-deadline-days', 'erasureDeadlineDays')),
});

const optional = <K extends string, V>(k: K, v: V | undefined): Partial<Record<K, V>> =>
  v === undefined ? {} : ({ [k]: v } as Record<K, V>);

/** Requests the audit made, by kind, and DynamoDB read units consumed. */
export interface AuditRequests {
  s3List: number;
  s3Get: number;
  s3Head: number;
  dynamodbQuery: number;
  dynamodbGet: number;
  dynamodbReadUnits: number;
}

export interface AuditResult extends AuditFindings {
  readonly requests: AuditRequests;
  /** Orphan prefixes not HEADed because --max-heads was reached. */
  readonly orphansUnattributed: number;
  /** Job ids with rows in several shops and a hot prefix (informational: see audit-shared-ids.ts). */
  readonly sharedJobIds: readonly SharedJobId[];
  /** Overdue erasure requests and forgotten shops with data left (audit-erasure.ts). */
  readonly erasure: ErasureAudit;
}

interface Listed {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly lastModified: Date | undefined;
}

/** Every object under `prefix`, page by page (no Delimiter: s3rver misses deeper keys with one). */
async function* listPrefix(ctx: CliContext, prefix: string, req: AuditRequests): AsyncGenerator<Listed> {
  let token: string | undefined;
  do {
    req.s3List++;
    const page = await ctx.s3.send(
      new ListObjectsV2Command({ Bucket: ctx.bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) {
      if (o.Key !== undefined) {
        yield { key: o.Key, size: o.Size ?? 0, etag: normalizeEtag(o.ETag), lastModified: o.LastModified };
      }
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/** Every row, via GSI_JobsByStatus_v2 (one Query per status; every row has a status). */
const readRows = async (ctx: CliContext, req: AuditRequests): Promise<AuditRow[]> => {
  const rows: AuditRow[] = [];
  for (const status of JOB_STATUSES) {
    let start: Record<string, unknown> | undefined;
    do {
      req.dynamodbQuery++;
      const out = await ctx.ddb.send(
        new ExactQueryCommand({
          TableName: ctx.table,
          IndexName: JOBS_TABLE.gsiJobsByStatus.name,
          KeyConditionExpression: 'job_status = :s',
          ExpressionAttributeValues: { ':s': status },
          ProjectionExpression: 'pk, sk, completed_at',
          ExclusiveStartKey: start,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      req.dynamodbReadUnits += out.ConsumedCapacity?.CapacityUnits ?? 0;
      for (const item of out.Items ?? []) {
        if (typeof item.pk !== 'string' || typeof item.sk !== 'string') continue;
        rows.push({
          shopId: shopIdFromPk(item.pk),
          jobId: jobIdFromSk(item.sk),
          status,
          completedAt: item.completed_at,
        });
      }
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return rows;
};

const readHot = async (ctx: CliContext, req: AuditRequests): Promise<Map<string, HotPrefix>> => {
  const hot = new Map<
    string,
    { objects: Map<string, string>; modified: Map<string, string>; bytes: number; newest: string | undefined }
  >();
  for await (const o of listPrefix(ctx, HOT_PREFIX, req)) {
    const jobId = o.key.slice(HOT_PREFIX.length).split('/')[0];
    if (!jobId) continue;
    let h = hot.get(jobId);
    if (!h) {
      h = { objects: new Map(), modified: new Map(), bytes: 0, newest: undefined };
      hot.set(jobId, h);
    }
    h.objects.set(o.key, o.etag);
    h.bytes += o.size;
    const at = o.lastModified?.toISOString();
    if (at) h.modified.set(o.key, at);
    if (at && (h.newest === undefined || at > h.newest)) h.newest = at;
  }
  return new Map([...hot].map(([jobId, h]) => [jobId, { jobId, ...h }]));
};

export const auditCommand = async (ctx: CliContext, opts: AuditOptions, io: Output): Promise<AuditResult> => {
  const req: AuditRequests = {
    s3List: 0,
    s3Get: 0,
    s3Head: 0,
    dynamodbQuery: 0,
    dynamodbGet: 0,
    dynamodbReadUnits: 0,
  };
  io.err('audit: reading job rows, hot prefixes, month indexes and parts');

  const [rows, hot] = await Promise.all([readRows(ctx, req), readHot(ctx, req)]);

  const indexKeys: { key: string; shopId: string; month: string }[] = [];
  const sharedKeys: { key: string; month: string }[] = [];
  const pending = new Set<string>();
  for await (const o of listPrefix(ctx, INDEX_PREFIX, req)) {
    const idx = parseMonthIndexKey(o.key);
    if (idx) {
      indexKeys.push({ key: o.key, ...idx });
      continue;
    }
    const sharedMonth = parseSharedIndexKey(o.key);
    if (sharedMonth) {
      sharedKeys.push({ key: o.key, month: sharedMonth });
      continue;
    }
    // `job-details-index/{shop}/{month}/pending/{part}.json` (not the `.verified.json` twin).
    const m = /^job-details-index\/([^/]+)\/(\d{4}-\d{2})\/pending\/([^/]+)\.json$/.exec(o.key);
    if (m?.[1] && m[2] && m[3] && !m[3].endsWith('.verified')) {
      try {
        pending.add(pendingId(m[1], m[2], validatePartName(m[3])));
      } catch {
        // Not a part manifest; nothing to pair it with.
      }
    }
  }

  const coldParts: ColdPart[] = [];
  for await (const o of listPrefix(ctx, COLD_PREFIX, req)) {
    const p = parsePartKey(o.key);
    if (p) coldParts.push({ key: o.key, ...p, size: o.size, etag: o.etag });
  }

  const corruptIndexes: { key: string; shopId: string; month: string; reason: string }[] = [];
  const read = await mapLimit(indexKeys, opts.concurrency, async (k): Promise<MonthIndex | null> => {
    req.s3Get++;
    const got = await getObjectBytes(ctx.s3, ctx.bucket, k.key);
    if (!got) return null; // removed since the listing
    try {
      return parseMonthIndex(got.bytes, k.key);
    } catch (err) {
      if (!isNamedError(err, 'CorruptObjectError')) throw err;
      corruptIndexes.push({ ...k, reason: (err as Error).message });
      return null;
    }
  });
  // Packed shop-months (docs/archive-format.md, "Shared parts"): each shop's view of its month's
  // shared index is audited as that shop-month's index (its parts' keys are the shared parts').
  const shared = await mapLimit(sharedKeys, opts.concurrency, async (k): Promise<MonthIndex[]> => {
    req.s3Get++;
    const got = await getObjectBytes(ctx.s3, ctx.bucket, k.key);
    if (!got) return [];
    try {
      return [...parseSharedIndex(got.bytes, k.key).views.values()];
    } catch (err) {
      if (!isNamedError(err, 'CorruptObjectError')) throw err;
      corruptIndexes.push({ key: k.key, shopId: '_shared', month: k.month, reason: (err as Error).message });
      return [];
    }
  });
  // Settled parts keep no entries: the hot prefixes' jobs they may hold are read from their records.
  const {
    indexes,
    unread: settledUnread,
    damaged: settledDamaged,
  } = await withSettledHot(
    ctx,
    [...read.filter((i): i is MonthIndex => i !== null), ...shared.flat()],
    [...hot.keys()],
    req,
  );

  // Orphans carry their shop only in the objects' metadata: one HEAD per prefix, bounded.
  const candidates = orphanCandidates(hot, rows, indexes);
  const toHead = candidates.slice(0, opts.maxHeads);
  const orphanShops = new Map<string, string | undefined>();
  await mapLimit(toHead, opts.concurrency, async (jobId) => {
    const key = hot.get(jobId)?.objects.keys().next().value;
    if (key === undefined) return;
    req.s3Head++;
    try {
      const head = await ctx.s3.send(new HeadObjectCommand({ Bucket: ctx.bucket, Key: key }));
      orphanShops.set(jobId, head.Metadata?.[META_SHOP_ID]);
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status !== 404) throw err; // deleted since the listing: stays unattributed
    }
  });

  // A prefix whose row exists but is not in the status GSI (no status_created_at) is no orphan: the
  // archiver cannot plan it. One GetItem per attributed candidate.
  const unplannable = new Map<string, UnplannableRow>();
  await mapLimit(
    toHead.filter((j) => orphanShops.get(j) !== undefined),
    opts.concurrency,
    async (jobId) => {
      const shopId = orphanShops.get(jobId) as string;
      req.dynamodbGet++;
      const got = await ctx.ddb.send(
        new ExactGetCommand({ TableName: ctx.table, Key: { pk: `SHOP#${shopId}`, sk: `JOB#${jobId}` } }),
      );
      if (!got.Item) return;
      const missing = got.Item.status_created_at === undefined;
      unplannable.set(jobId, {
        shopId,
        jobId,
        reason: missing
          ? `the job row exists (${String(got.Item.job_status)}) but has no status_created_at, so it is not in GSI_JobsByStatus_v2 and the archiver never plans it`
          : `the job row exists (${String(got.Item.job_status)}) but is not in GSI_JobsByStatus_v2`,
      });
    },
  );

  // A settled part whose block could not answer (missing bytes, a job outside its directory's range):
  // named as lookup names it. --deep: every committed part read whole, every block inflated.
  const damagedParts = new Map<string, string>(settledDamaged);
  if (opts.deep) {
    const parts = indexes.flatMap((idx) => idx.parts.map((p) => ({ idx, p })));
    await mapLimit(parts, opts.concurrency, async ({ idx, p }) => {
      if (!coldParts.some((c) => c.key === p.key)) return; // missing-part already
      req.s3Get++;
      try {
        await blockCheck(ctx.s3, ctx.bucket, p, pointedBlocks(idx, p.name));
      } catch (err) {
        if (isNamedError(err, 'VerificationError')) damagedParts.set(p.key, (err as Error).message);
        else if (isNamedError(err, 'InvalidObjectState'))
          damagedParts.set(p.key, 'in a Glacier class: not read (restore it to check its blocks)');
        else throw err;
      }
    });
  }

  // The last run's cutoff (its watermark): hot terminal jobs it passed by more than the bound are
  // overdue. 1 GET; no run yet (or a watermark that does not parse: its own problem) checks nothing.
  req.s3Get++;
  const mark = await readWatermark(ctx).catch(() => null);
  const lastCutoff = mark?.doc && writtenByRun(mark.doc) ? Date.parse(mark.doc.cutoff) : null;
  const findings = classifyAudit({
    rows,
    hot,
    indexes,
    coldParts,
    pending,
    orphanShops,
    corruptIndexes,
    damagedParts,
    unplannable,
    settledUnread,
    ...(lastCutoff === null ? {} : { due: { cutoff: lastCutoff, graceHours: ctx.cfg.graceHours } }),
  });
  const ownersOf = new Map<string, string[]>();
  for (const r of rows) ownersOf.set(r.jobId, [...(ownersOf.get(r.jobId) ?? []), r.shopId]);
  const hotShops = [...hot.keys()].flatMap((jobId) => {
    const owners = ownersOf.get(jobId) ?? [];
    const orphanShop = orphanShops.get(jobId);
    return owners.length > 0 ? owners : orphanShop !== undefined ? [orphanShop] : [];
  });
  const erasure = await auditErasure(ctx, opts.erasureDeadlineDays ?? ctx.cfg.erasureDeadlineDays, {
    rows,
    indexShops: indexKeys.map((k) => k.shopId),
    partShops: coldParts.map((p) => p.shopId),
    hotShops,
    indexJobs: indexes.flatMap((idx) => [
      ...Object.values(idx.jobs).flatMap((entries) => {
        const latest = entries.at(-1);
        // A job audit read back from a settled part's record is counted with its part below.
        if (!latest || idx.parts.find((p) => p.name === latest.part)?.settled) return [];
        return [{ shopId: idx.shop_id, completedAt: latest.completed_at }];
      }),
      // A settled part's jobs (no entries): each completed before the part's commit, the bound used.
      ...idx.parts.flatMap((p) =>
        p.settled
          ? Array.from({ length: p.job_count }, () => ({ shopId: idx.shop_id, completedAt: p.committed_at }))
          : [],
      ),
    ]),
    uncommittedShared: coldParts
      .filter((p) => p.shopId === SHARED && !indexes.some((i) => i.parts.some((x) => x.key === p.key)))
      .map((p) => p.key),
  });
  const result: AuditResult = {
    ...findings,
    erasure,
    requests: req,
    orphansUnattributed: candidates.length - toHead.length,
    sharedJobIds: sharedJobIds(rows, hot),
  };
  if (opts.json) printJson(io, result);
  else printAudit(io, result);
  return result;
};

const LIST_LIMIT = 20;

const printAudit = (io: Output, r: AuditResult): void => {
  const t = r.totals;
  io.out(
    `audit: ${t.rows} job rows, ${t.hotPrefixes} hot job prefixes, ${t.archivedJobs} archived jobs, ${t.orphans} orphans, ${t.mismatches} mismatches${t.undated > 0 ? `, ${t.undated} undated rows` : ''}`,
  );
  if (r.groups.length > 0) {
    io.out('');
    for (const line of table([
      ['shop', 'month', 'hot', 'awaiting-delete', 'archived', 'deleted', 'orphans', 'mismatches'],
      ...r.groups.map((g) => [
        g.shopId,
        g.month,
        g.hotJobs,
        g.awaitingDelete,
        g.archivedJobs,
        g.archivedDeleted,
        g.orphans,
        g.mismatches,
      ]),
    ])) {
      io.out(`  ${line}`);
    }
  }
  if (r.orphans.length > 0) {
    io.out('');
    io.out(
      `orphans (hot prefixes with no job row and in no index)${r.orphans.length > LIST_LIMIT ? `, first ${LIST_LIMIT}` : ''}:`,
    );
    for (const o of r.orphans.slice(0, LIST_LIMIT)) {
      io.out(`  ${o.shopId} ${o.month} job ${o.jobId}: ${o.objects} objects, ${formatBytes(o.bytes)}`);
    }
    if (r.orphansUnattributed > 0) io.out(`  (${r.orphansUnattributed} not attributed: --max-heads reached)`);
  }
  // Each kind of mismatch under its own heading, with what repairs it.
  const kinds = [...new Set(r.mismatches.map((m) => m.kind))];
  for (const kind of kinds) {
    const list = r.mismatches.filter((m) => m.kind === kind);
    io.out('');
    io.out(`${kind} (${list.length})${list.length > LIST_LIMIT ? `, first ${LIST_LIMIT}` : ''}:`);
    for (const m of list.slice(0, LIST_LIMIT)) {
      io.out(`  ${m.shopId} ${m.month} ${m.key}${m.jobId ? ` (job ${m.jobId})` : ''}: ${m.detail}`);
    }
    const repairs = [...new Set(list.map((m) => REPAIR[kind](m.shopId, m.month, m.key)))];
    for (const fix of repairs.slice(0, LIST_LIMIT)) io.out(`  repair: ${fix}`);
  }
  if (r.undated.length > 0) {
    io.out('');
    io.out(
      `undated terminal rows (the archiver quarantines them on every run until completed_at is fixed)${r.undated.length > LIST_LIMIT ? `, first ${LIST_LIMIT}` : ''}:`,
    );
    for (const u of r.undated.slice(0, LIST_LIMIT))
      io.out(`  ${u.shopId} job ${u.jobId} (${u.status}): ${u.reason}`);
  }
  if (r.sharedJobIds.length > 0) {
    io.out('');
    io.out(
      `job ids shared by shops (one hot prefix holds each shop's objects, told apart by shop-id; a key both wrote was overwritten when written)${r.sharedJobIds.length > LIST_LIMIT ? `, first ${LIST_LIMIT}` : ''}:`,
    );
    for (const s of r.sharedJobIds.slice(0, LIST_LIMIT)) {
      io.out(`  job ${s.jobId}: shops ${s.shops.join(', ')}; ${s.hotObjects} hot objects`);
    }
  }
  for (const line of erasureLines(r.erasure)) io.out(line);
  const q = r.requests;
  io.out('');
  io.out(
    `requests: S3 ${q.s3List} LIST, ${q.s3Get} GET, ${q.s3Head} HEAD; DynamoDB ${q.dynamodbQuery} Query, ${q.dynamodbGet} GetItem (${q.dynamodbReadUnits} RCU)`,
  );
};

/**
 * The indexes with an entry for each job whose latest archival only a settled part holds (its entries
 * left the index when it settled; the job has no entry, or only older ones): read from the part's
 * record (settled-archivals.ts: one ranged GET a block, only for ids its directory and filter cover)
 * as the deleted entry it was. The jobs looked for: the hot prefixes' (what they hold is checked
 * against it), and those with entries older than a settled part that may hold them (a job retried
 * before its older part's delete: counted once, by that part's job_count). Such a job in a part in a
 * restore class is returned in `unread` (a named finding), never taken as not archived; a part whose
 * block is damaged (as lookup checks it) in `damaged` (part key → what is wrong), its jobs unanswered.
 */
const withSettledHot = async (
  ctx: CliContext,
  indexes: readonly MonthIndex[],
  hotIds: readonly string[],
  req: { s3Get: number },
): Promise<{
  indexes: MonthIndex[];
  unread: Array<{ shopId: string; month: string; jobId: string; part: string }>;
  damaged: Map<string, string>;
}> => {
  const unread: Array<{ shopId: string; month: string; jobId: string; part: string }> = [];
  const damaged = new Map<string, string>();
  const out: MonthIndex[] = [];
  for (const idx of indexes) {
    // A settled part committed after the job's latest entry (any, when it has none) may hold a newer
    // archival: a job retried before its older part's delete keeps that entry while its newer part settles.
    const at = (name: string) => idx.parts.findIndex((p) => p.name === name);
    const newer = (id: string) => {
      const latest = latestEntry(idx, id);
      return settledCandidates(idx, id).filter(
        (c) => latest === undefined || at(c.part.name) > at(latest.part),
      );
    };
    const ids = [...new Set([...hotIds, ...Object.keys(idx.jobs)])].filter((id) => newer(id).length > 0);
    if (ids.length === 0) {
      out.push(idx);
      continue;
    }
    req.s3Get += new Set(ids.flatMap((id) => newer(id).map((c) => `${c.part.key}@${c.range.offset}`))).size;
    const found = await settledArchivals(ctx, idx, ids, (err, name) => {
      const key = idx.parts.find((p) => p.name === name)?.key;
      if (key !== undefined) damaged.set(key, err.message);
    });
    const jobs: Record<string, readonly IndexedJob[]> = { ...idx.jobs };
    for (const [jobId, a] of found) {
      if (a.kind === 'unread') {
        unread.push({ shopId: idx.shop_id, month: idx.month, jobId, part: a.part });
        continue;
      }
      const part = idx.parts.find((p) => p.name === a.part);
      if (!part?.settled) continue;
      // Newer than any entry the job has: the latest archival.
      jobs[jobId] = [
        ...jobEntries(idx.jobs, jobId),
        {
          part: a.part,
          offset: 0,
          length: 0,
          completed_at: a.completed_at,
          committed_at: part.committed_at,
          platform_data: null,
          sources: [],
          deleted_at: part.settled.deleted_at,
          ...(part.settled.deleted_by !== null ? { deleted_by: part.settled.deleted_by } : {}),
        },
      ];
    }
    out.push({ ...idx, jobs });
  }
  return { indexes: out, unread, damaged };
};
