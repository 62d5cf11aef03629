import { randomBytes } from 'node:crypto';
import { validateRequestId } from '../../shared/erasure/ledger';
import { InvalidInputError } from '../../shared/errors';
import type { EarlyDeletion, RedactDeps, RedactReport } from '../../shared/redact/redact';
import { resolveRedactRequest } from '../../shared/redact/redact';
import { type LedgerRedaction, redactRequested, resumeRedactions } from '../../shared/redact/requests';
import { boolFlag, type CommandSpec, EXIT_OK, EXIT_PENDING, type Flags, stringFlag } from './args';
import type { CliContext } from './context';
import { type Output, printJson } from './output';
import { DEFAULT_PRICES, type Prices, STORAGE_CLASSES, type StorageClass } from './prices';

export const redactSpec: CommandSpec = {
  name: 'redact',
  short: 'remove one document id from a shop’s hot objects and archived parts (a customers/redact request)',
  summary:
    'Records the request in the erasure ledger, then removes the document id from every hot flush object of the ' +
    'shop that lists it (rewritten in place, If-Match) and from every archived part whose document filters match ' +
    '(a redacted copy is written, verified and switched in the month index; only then is the old part deleted). ' +
    'Counts stay; each rewritten record notes the redaction and when. Parts in Glacier Flexible Retrieval / Deep ' +
    'Archive are restored first: the command requests the restore and exits 5 with the request pending; rerun it ' +
    '(or `redact --pending`) once restored.',
  options: {
    shop: { type: 'string', value: 'S', help: 'shop id (required unless --pending)' },
    doc: { type: 'string', value: 'ID', help: 'document id (required unless --pending)' },
    'request-id': {
      type: 'string',
      value: 'ID',
      help: 'the request’s id in the ledger, e.g. the webhook id (default: a new one)',
    },
    pending: { type: 'boolean', help: 'work on every open redact request of the ledger instead' },
    'drop-damaged': {
      type: 'boolean',
      help: 'repair a damaged shared part by dropping its unreadable blocks (every record in them; counted)',
    },
  },
  notes: [
    'Exit 0: complete. Exit 5: parts wait for a restore (listed); the request stays pending in the ledger.',
    'Cost: 1 List per 1,000 keys of the shop’s index prefix, 1 GET per month index, 1 filter GET per part,',
    'the shop’s rows (1 Query page per 1 MB) and 1 List + 1 GET per hot flush object; per part that lists the',
    'document: 1 HEAD, 1 GET, 2 PUTs + the read-back GET, the index write and 3 DELETEs.',
  ],
};

export interface RedactOptions {
  readonly shopId?: string;
  readonly docId?: string;
  readonly requestId?: string;
  readonly pending: boolean;
  readonly json: boolean;
  /** Repair a damaged shared part by dropping its unreadable blocks (docs/erasure.md). */
  readonly dropDamaged?: true;
}

export const parseRedactOptions = (flags: Flags): RedactOptions => {
  const pending = boolFlag(flags, 'pending');
  const shop = stringFlag(flags, 'shop');
  const doc = stringFlag(flags, 'doc');
  const requestId = stringFlag(flags, 'request-id');
  const json = boolFlag(flags, 'json');
  const dropDamaged = boolFlag(flags, 'drop-damaged') ? { dropDamaged: true as const } : {};
  if (pending) {
    if (shop !== undefined || doc !== undefined || requestId !== undefined)
      throw new InvalidInputError('--pending', 'takes no --shop, --doc or --request-id');
    return { pending, json, ...dropDamaged };
  }
  if (shop === undefined) throw new InvalidInputError('--shop', 'is required');
  if (doc === undefined) throw new InvalidInputError('--doc', 'is required');
  const r = resolveRedactRequest({ shopId: shop, docId: doc });
  return {
    shopId: r.shopId,
    docId: r.docId,
    ...(requestId !== undefined ? { requestId: validateRequestId(requestId) } : {}),
    pending,
    json,
    ...dropDamaged,
  };
};

/** $ billed for storage not kept: the class's GB-month price × the days short of its minimum. */
export const earlyDeletionDollars = (e: EarlyDeletion, p: Prices = DEFAULT_PRICES): number => {
  if (!(STORAGE_CLASSES as readonly string[]).includes(e.storageClass)) return 0;
  const c = e.storageClass as StorageClass;
  const gb = (e.bytes + p.classOverheadBytes[c].inClass) / 1024 ** 3;
  return gb * p.classGbMonth[c] * (e.chargedDays / 30);
};

const print = (io: Output, id: string, r: RedactReport): void => {
  io.out(
    `request ${id} (${r.shopId}): ${r.complete ? 'complete' : 'PENDING'} — hot: ${r.hot.listings} listings in ${r.hot.objectsRewritten} objects rewritten (${r.hot.jobs} jobs read); rows: ${r.rows.listings} listings in ${r.rows.rewritten} pre-migration rows rewritten; ` +
      `archive: ${r.archive.listings} listings in ${r.archive.partsRewritten.length} parts rewritten (${r.archive.partsChecked} parts checked over ${r.archive.months} months)`,
  );
  if (r.archive.journalsResolved > 0)
    io.out(`  finished ${r.archive.journalsResolved} part rewrites an interrupted run had left`);
  for (const p of r.archive.partsRewritten) io.out(`  rewrote ${p.old} → ${p.new} (${p.listings} listings)`);
  const why = {
    'restore-requested': 'restore requested',
    'restore-in-progress': 'restore in progress',
    'rewrite-in-progress': 'another redaction is rewriting it',
    damaged: 'blocks of the shop do not inflate',
  } as const;
  for (const p of r.pending)
    io.out(
      `  pending: ${p.key} (${p.storageClass}): ${why[p.reason]} — ${p.reason === 'damaged' ? 'rerun with --drop-damaged to drop the unreadable blocks (docs/erasure.md "A damaged shared part")' : 'rerun later'}`,
    );
  if (r.archive.damagedBlocksDropped > 0)
    io.out(
      `  repaired: ${r.archive.damagedBlocksDropped} damaged blocks dropped with the ${r.archive.damagedEntriesDropped} job entries in them`,
    );
  for (const e of r.earlyDeletions)
    io.out(
      `  early deletion: ${e.key} (${e.storageClass}, ${e.ageDays.toFixed(1)} of ${e.minDays} days) bills ${e.chargedDays.toFixed(1)} more days ≈ $${earlyDeletionDollars(e).toFixed(6)}`,
    );
};

export const redactCommand = async (
  ctx: CliContext,
  o: RedactOptions,
  io: Output,
  hooks: Pick<RedactDeps, 'crashPoint'> = {},
): Promise<{ exitCode: number; results: LedgerRedaction[] }> => {
  const deps: RedactDeps = {
    s3: ctx.s3,
    ddb: ctx.ddb,
    bucket: ctx.bucket,
    table: ctx.table,
    clock: () => ctx.now(),
    restoreTier: ctx.cfg.restoreTier,
    restoreDays: ctx.cfg.restoreDays,
    ...hooks,
  };
  const runId = `cli-redact-${ctx.now().toISOString().replace(/[-:.]/g, '')}-${randomBytes(3).toString('hex')}`;
  const results =
    o.pending || o.shopId === undefined || o.docId === undefined
      ? await resumeRedactions(deps, runId, o.dropDamaged === true)
      : [
          await redactRequested(deps, {
            shopId: o.shopId,
            docId: o.docId,
            runId,
            ...(o.dropDamaged ? { dropDamaged: true } : {}),
            ...(o.requestId !== undefined ? { requestId: o.requestId } : {}),
          }),
        ];
  const exitCode = results.every((r) => r.report.complete) ? EXIT_OK : EXIT_PENDING;
  if (o.json) {
    printJson(io, {
      results: results.map((r) => ({
        requestId: r.requestId,
        ...r.report,
        earlyDeletionDollars: r.report.earlyDeletions.reduce((n, e) => n + earlyDeletionDollars(e), 0),
      })),
    });
    return { exitCode, results };
  }
  if (results.length === 0) io.out('no open redact requests');
  for (const r of results) print(io, r.requestId, r.report);
  return { exitCode, results };
};
