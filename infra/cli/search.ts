import type { FindDocumentResult } from '../../shared/reader/find-document';
import { resolveFindDocument } from '../../shared/reader/find-document';
import { JobDetailsReader } from '../../shared/reader/reader';
import { boolFlag, type CommandSpec, type Flags, requiredString, stringFlag } from './args';
import type { CliContext } from './context';
import { formatBytes, type Output, printJson } from './output';

export const searchSpec: CommandSpec = {
  name: 'search',
  short: 'every job of a shop that listed a document (failed / skipped / conflict), hot and archived',
  summary:
    'Find by document: every job of the shop whose details list the document — archived ones through the per-block document filters kept in each month index, hot ones through the shop’s rows in the jobs table — newest first, with the reasons and provenance.',
  options: {
    shop: { type: 'string', value: 'S', help: 'shop id (required)' },
    doc: { type: 'string', value: 'ID', help: 'document id (required)' },
    from: { type: 'string', value: 'YYYY-MM', help: 'first month searched (default: the oldest archived)' },
    to: { type: 'string', value: 'YYYY-MM', help: 'last month searched (default: the newest)' },
  },
  notes: [
    'Cost: 1 List per 1,000 keys under the shop’s index prefix, the shared index prefix, the shop’s parts and the',
    'shared parts; per month 1 index GET, 1 ranged GET of each part’s filters member (its last bytes, in the',
    'part’s storage class), + 1 ranged GET per block whose filter matches.',
    'Hot: 1 Query page per 1 MB of the shop’s rows, then 1 List + 1 GET per flush of each job in range.',
    'Exit 1 when something could not be searched (a month whose index is lost, a missing, damaged or expired',
    'part): the results are what could be read, the warnings on stderr name the rest and its repair.',
  ],
};

export interface SearchOptions {
  readonly shopId: string;
  readonly docId: string;
  readonly from?: string;
  readonly to?: string;
  readonly json: boolean;
}

export const parseSearchOptions = (flags: Flags): SearchOptions => {
  const from = stringFlag(flags, 'from');
  const to = stringFlag(flags, 'to');
  const q = resolveFindDocument({
    shopId: requiredString(flags, 'shop'),
    docId: requiredString(flags, 'doc'),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
  });
  return {
    shopId: q.shopId,
    docId: q.docId,
    ...(q.from ? { from: q.from } : {}),
    ...(q.to ? { to: q.to } : {}),
    json: boolFlag(flags, 'json'),
  };
};

export const searchCommand = async (
  ctx: CliContext,
  o: SearchOptions,
  io: Output,
): Promise<FindDocumentResult> => {
  const reader = new JobDetailsReader(ctx.s3, ctx.bucket, {
    readConcurrency: ctx.cfg.readConcurrency,
    // Parts past the deployment's retention are expired: not searched, and said so.
    retentionMonths: ctx.cfg.retentionMonths,
    clock: () => ctx.now(),
  });
  const r = await reader.findDocument(
    { shopId: o.shopId, docId: o.docId, ...(o.from ? { from: o.from } : {}), ...(o.to ? { to: o.to } : {}) },
    { ddb: ctx.ddb, table: ctx.table },
  );
  // What could not be searched (a lost index, a missing part …): loud, on stderr, whatever the format.
  for (const w of r.provenance.warnings) io.err(`search: ${w}`);
  if (o.json) {
    printJson(io, r);
    return r;
  }
  if (r.jobs.length === 0)
    io.out(
      `${o.docId}: in no job of ${o.shopId} in the months searched${r.provenance.warnings.length > 0 ? ` — incomplete: ${r.provenance.warnings.length} warning(s) name what was not searched` : ''}`,
    );
  for (const j of r.jobs) {
    const why = j.listings.map((l) => `${l.kind}: ${l.reason}`).join(', ');
    io.out(`${j.completedAt ?? '(running)'}  ${j.jobId}  ${j.status}  ${why}  [${j.sources.join('+')}]`);
  }
  const p = r.provenance;
  io.err(
    `${p.monthsSearched} months, ${p.partsFiltered} parts by filter, ${p.blocksRead} blocks read (${p.falsePositiveBlocks} false positives); ` +
      `${p.requests} S3 requests, ${formatBytes(p.bytes)}; hot: ${p.hot.rows} rows in ${p.hot.queryPages} Query pages (${p.hot.readCapacityUnits} RCU), ${p.hot.jobsRead} jobs read`,
  );
  if (p.partsNotSearched.length > 0)
    io.err(
      `NOT SEARCHED: ${p.partsNotSearched.length} part(s) in Glacier Flexible Retrieval / Deep Archive (their filters need a restore): ${p.partsNotSearched.join(', ')} — restore them and search again`,
    );
  return r;
};
