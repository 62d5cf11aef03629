import { entriesByPart, type ReindexResult, rebuildMonthIndex } from '../../shared/archive/reindex';
import { validateMonth, validateShopId } from '../../shared/ids';
import { boolFlag, type CommandSpec, type Flags, requiredString } from './args';
import type { CliContext } from './context';
import { formatBytes, type Output, printJson, table } from './output';

export const reindexSpec: CommandSpec = {
  name: 'reindex',
  short: 'rebuild a lost or corrupt month index from its parts',
  summary:
    "Rebuilds one shop × month's index from the parts under job-details-cold/ (each part is self-describing). " +
    'Parts that still have a staging manifest were never committed and are left out, as are parts that do ' +
    'not decode; both are listed. Nothing is deleted.',
  options: {
    shop: { type: 'string', value: 'S', help: 'shop id (required)' },
    month: { type: 'string', value: 'YYYY-MM', help: 'month of the index (required)' },
    'dry-run': { type: 'boolean', help: 'show the rebuilt index, write nothing' },
    force: { type: 'boolean', help: 'replace an existing (corrupt) index, conditional on its ETag' },
  },
  notes: [
    'Cost: 1 GET of the current index, 1 LIST per 1,000 keys of the parts and of the staging prefix, 1 GET',
    'per part (streamed; a part in Glacier Flexible Retrieval / Deep Archive must be restored first), 1 PUT.',
    'Rebuilt entries have deleted_at null: the next run re-checks each source by key, size and ETag and',
    'deletes only what still matches.',
  ],
};

export interface ReindexCliOptions {
  readonly shopId: string;
  readonly month: string;
  readonly dryRun: boolean;
  readonly force: boolean;
  readonly json: boolean;
}

export const parseReindexOptions = (flags: Flags): ReindexCliOptions => ({
  shopId: validateShopId(requiredString(flags, 'shop')),
  month: validateMonth(requiredString(flags, 'month')),
  dryRun: boolFlag(flags, 'dry-run'),
  force: boolFlag(flags, 'force'),
  json: boolFlag(flags, 'json'),
});

const summary = (r: ReindexResult) => {
  const entries = entriesByPart(r.index);
  return {
    shopId: r.index.shop_id,
    month: r.index.month,
    written: r.written,
    existing: r.existing,
    // Entries, and the jobs of settled parts (no entries: their job_count).
    jobs:
      Object.keys(r.index.jobs).length + r.index.parts.reduce((n, p) => n + (p.settled ? p.job_count : 0), 0),
    partsIncluded: r.partsIncluded.map((p) => ({
      key: p.key,
      size: p.size,
      jobCount: p.job_count,
      entries: entries[p.name] ?? 0,
      settled: p.settled !== undefined,
      committedAt: p.committed_at,
    })),
    partsExcluded: r.partsExcluded,
  };
};

/** `jobarchive reindex`: a refused overwrite (IndexExistsError) propagates → main prints it, exit 1. */
export const reindexCommand = async (
  ctx: CliContext,
  o: ReindexCliOptions,
  io: Output,
): Promise<ReindexResult> => {
  const r = await rebuildMonthIndex(
    { s3: ctx.s3, bucket: ctx.bucket, clock: () => ctx.now() },
    o.shopId,
    o.month,
    {
      dryRun: o.dryRun,
      force: o.force,
    },
  );
  const s = summary(r);
  if (o.json) {
    printJson(io, s);
    return r;
  }
  const verb = r.written ? 'rebuilt' : 'dry run: would rebuild';
  io.out(`${verb} index of ${s.shopId} ${s.month}: ${s.partsIncluded.length} parts, ${s.jobs} jobs`);
  if (r.existing) {
    io.out(
      `${r.written ? 'replaced' : 'existing'} index: ETag ${r.existing.etag}, ${r.existing.readable ? 'readable' : 'corrupt'}`,
    );
  }
  if (s.partsIncluded.length > 0) {
    io.out('');
    io.out('included parts:');
    const rows = s.partsIncluded.map((p) => [p.key, formatBytes(p.size), p.jobCount, p.entries]);
    for (const line of table([['part', 'size', 'jobs', 'entries'], ...rows])) io.out(`  ${line}`);
  }
  if (s.partsExcluded.length > 0) {
    io.out('');
    io.out('excluded parts (left in place):');
    for (const p of s.partsExcluded) io.out(`  ${p.key}: ${p.reason}`);
  }
  return r;
};
