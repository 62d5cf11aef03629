import { isRawJson } from '../../shared/details/json';
import type { JobDetails } from '../../shared/details/payload';
import { validateJobId, validateShopId } from '../../shared/ids';
import { getJob } from '../../shared/jobs/job-repo';
import type { JobRow } from '../../shared/jobs/types';
import { JobDetailsReader } from '../../shared/reader/reader';
import type { JobLookup } from '../../shared/reader/types';
import {
  boolFlag,
  type CommandSpec,
  dateFlag,
  EXIT_FAILURE,
  EXIT_OK,
  type Flags,
  requiredString,
  wholeNumberFlag,
} from './args';
import type { CliContext } from './context';
import { formatBytes, type Output, printJson } from './output';

export const lookupSpec: CommandSpec = {
  name: 'lookup',
  short: 'forensic lookup of one job: row, details, platform data, provenance',
  summary:
    'Forensic lookup of one job: its row if it still exists, then its details and platform data wherever they are (hot, archived, or both) with provenance.',
  options: {
    shop: { type: 'string', value: 'S', help: 'shop id (required)' },
    job: { type: 'string', value: 'J', help: 'job id (required)' },
    'completed-at': {
      type: 'string',
      value: 'ISO',
      help: "the job's completion time, when its row has expired (picks the month index to read)",
    },
    'search-months': {
      type: 'string',
      value: 'N',
      help: 'months of indexes searched, newest first, when the completion time is unknown (default 24)',
    },
  },
  notes: [
    'Cost: 1 GetItem, 1 List of the hot prefix (+1 GET per object there); with a known completion 1 GET per month',
    'index + 1 ranged GET per archival; without one, 1 List per 1,000 index keys and part keys of the shop and up to',
    '--search-months index GETs.',
    'Never hides: an archival that cannot be read (damaged, missing, past JDA_RETENTION_MONTHS) or a month whose index',
    'is lost is a warning (stderr) while anything else answers, else the error, naming the repair (jobarchive reindex).',
  ],
};

export interface LookupOptions {
  readonly shopId: string;
  readonly jobId: string;
  readonly completedAt?: Date;
  readonly searchMonths: number;
  readonly json: boolean;
}

export const parseLookupOptions = (flags: Flags): LookupOptions => {
  const completedAt = dateFlag(flags, 'completed-at');
  return {
    shopId: validateShopId(requiredString(flags, 'shop')),
    jobId: validateJobId(requiredString(flags, 'job')),
    ...(completedAt ? { completedAt } : {}),
    searchMonths: wholeNumberFlag(flags, 'search-months', 24, { min: 1, max: 1200 }),
    json: boolFlag(flags, 'json'),
  };
};

export interface LookupResult {
  readonly shopId: string;
  readonly jobId: string;
  /** The job row; null when it expired (TTL) or never existed. */
  readonly row: JobRow | null;
  readonly lookup: JobLookup;
  /** Nothing anywhere: no row, no hot objects, no archival in the months searched. */
  readonly found: boolean;
}

/** `failed: 12 (mapping_error 8, invalid_price 4)` plus the first ids of each reason. Pure. */
export const summarizeDetails = (d: JobDetails, firstIds = 3): string[] => {
  const lines: string[] = [`chunks: ${d.chunk_ids.length}`];
  const maps: [string, Readonly<Record<string, readonly unknown[]>>][] = [
    ['failed', d.failed],
    ['skipped', d.skipped],
    ['conflict', d.conflict],
  ];
  for (const [name, map] of maps) {
    const reasons = Object.entries(map).sort((a, b) => b[1].length - a[1].length || a[0].localeCompare(b[0]));
    const total = reasons.reduce((n, [, l]) => n + l.length, 0);
    lines.push(
      `${name}: ${total}${total > 0 ? ` (${reasons.map(([r, l]) => `${r} ${l.length}`).join(', ')})` : ''}`,
    );
    for (const [reason, list] of reasons) {
      const ids = list
        .slice(0, firstIds)
        .map((v) => (typeof v === 'string' ? v : String((v as { doc_id?: unknown }).doc_id)));
      lines.push(
        `  ${reason}: ${ids.join(', ')}${list.length > firstIds ? `, … ${list.length - firstIds} more` : ''}`,
      );
    }
  }
  return lines;
};

/** A row value as text: getJob reads numbers exactly, so an absurd one is a RawJsonNumber (no primitive). */
const v = (x: unknown): string => (isRawJson(x) ? x.rawJSON : String(x));

/** The row's TTL, worded for `now`: DynamoDB deletes expired items lazily (within days), so a past one shows. */
const ttlWords = (ttl: unknown, now: Date): string => {
  const secs = typeof ttl === 'number' ? ttl : Number.NaN;
  if (!(secs > 0) || Number.isNaN(new Date(secs * 1000).getTime())) return '';
  const at = new Date(secs * 1000).toISOString();
  return secs * 1000 <= now.getTime()
    ? `, row expired ${at} (DynamoDB's TTL has not removed it yet)`
    : `, row expires ${at}`;
};

const rowLines = (row: JobRow, now: Date): string[] => [
  `row:        ${row.job_status}, created ${row.created_at}${row.completed_at ? `, completed ${row.completed_at}` : ''}`,
  `counters:   ${v(row.total_items)} items: ${v(row.processed_items)} processed, ${v(row.failed_items)} failed, ${v(row.skipped_items)} skipped, ${v(row.conflict_items)} conflict`,
  `            ${row.job_type} on ${row.platform}, ${row.completed_chunks?.size ?? 0} chunks${ttlWords(row.ttl, now)}`,
];

export const lookupCommand = async (
  ctx: CliContext,
  opts: LookupOptions,
  io: Output,
): Promise<{ result: LookupResult; exitCode: number }> => {
  const row = await getJob(ctx.ddb, ctx.table, opts.shopId, opts.jobId);
  const reader = new JobDetailsReader(ctx.s3, ctx.bucket, {
    restoreTier: ctx.cfg.restoreTier,
    restoreDays: ctx.cfg.restoreDays,
    readConcurrency: ctx.cfg.readConcurrency,
    searchMonths: opts.searchMonths,
    // Parts past the deployment's retention are expired (not served, not "damage").
    retentionMonths: ctx.cfg.retentionMonths,
    clock: () => ctx.now(),
  });
  const completedAt = opts.completedAt?.toISOString() ?? row?.completed_at;
  const lookup = await reader.lookup({
    shopId: opts.shopId,
    jobId: opts.jobId,
    ...(completedAt ? { completedAt } : {}),
    ...(row?.created_at ? { createdAt: row.created_at } : {}),
    ...(row ? { row: row as unknown as Record<string, unknown> } : {}),
  });
  const found = row !== null || lookup.hotKeys.length > 0 || lookup.archivals.length > 0;
  const result: LookupResult = { shopId: opts.shopId, jobId: opts.jobId, row, lookup, found };
  const exitCode = found ? EXIT_OK : EXIT_FAILURE;

  if (opts.json) {
    printJson(io, result);
    return { result, exitCode };
  }
  io.out(`job ${opts.jobId} of ${opts.shopId}`);
  if (row) for (const l of rowLines(row, ctx.now())) io.out(l);
  else io.out('row:        none (expired by TTL, or never existed)');
  const archived = lookup.archivedJob;
  if (!row && lookup.archivedRow) {
    io.out('archived row (every attribute as the newest archival kept it):');
    for (const [name, value] of Object.entries(lookup.archivedRow)) {
      const text = JSON.stringify(value);
      io.out(`  ${name}: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`);
    }
  } else if (!row && archived) {
    io.out(
      `archived:   ${archived.status}, completed ${archived.completed_at}; ${archived.total_items ?? '?'} items, ${archived.failed_items ?? '?'} failed, ${archived.skipped_items ?? '?'} skipped, ${archived.conflict_items ?? '?'} conflict`,
    );
  }
  io.out(
    `details:    from ${lookup.detailsSource}${lookup.provenance.inline.length > 0 ? ` (row inline: ${lookup.provenance.inline.join(', ')})` : ''}`,
  );
  if (lookup.details) for (const l of summarizeDetails(lookup.details)) io.out(`  ${l}`);
  io.out(`platform:   from ${lookup.platformDataSource}`);
  if (lookup.platformData !== null) {
    const text = JSON.stringify(lookup.platformData);
    io.out(`  ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`);
  }
  io.out(`hot:        ${lookup.hotKeys.length} objects`);
  for (const a of lookup.archivals) {
    io.out(
      `archival:   ${a.month} ${a.partKey} @${a.entry.offset}+${a.entry.length}, committed ${a.entry.committed_at}, hot sources ${a.entry.deleted_at ? `deleted ${a.entry.deleted_at}` : 'not deleted yet'}`,
    );
  }
  const p = lookup.provenance;
  io.out(
    `provenance: source ${p.source}, ${p.parts.length} part(s), ${p.requests} S3 requests, ${formatBytes(p.bytes)} read${p.parts.length > 0 ? `\n            ${p.parts.join('\n            ')}` : ''}`,
  );
  // Damage the reader went around (the hot copy answered): loud, on stderr too.
  for (const w of p.warnings) {
    io.out(`warning:    ${w}`);
    io.err(`lookup: ${w}`);
  }
  if (!found)
    io.err(
      `lookup: job ${opts.jobId} of ${opts.shopId} not found (no row, no hot objects, no archival in the months searched)`,
    );
  return { result, exitCode };
};
