import { buildStepDeps } from '../../functions/deps';
import { s3ClientFrom } from '../../shared/clients';
import type { ForgetResult } from '../../shared/erasure/forget';
import { validateRequestId } from '../../shared/erasure/ledger';
import { InvalidInputError } from '../../shared/errors';
import { validateShopId } from '../../shared/ids';
import {
  boolFlag,
  type CommandSpec,
  dateFlag,
  EXECUTION_OPTIONS,
  EXIT_FAILURE,
  EXIT_OK,
  type Flags,
  pollMsFlag,
  requiredString,
  stringFlag,
} from './args';
import type { CliContext } from './context';
import { type Output, printJson } from './output';
import { parseRunOptions } from './run';
import type { RunOutcome } from './run-summary';
import { startAndFollow } from './sfn-follow';

export const forgetSpec: CommandSpec = {
  name: 'forget',
  short: "erase a shop: its hot objects, rows, parts, indexes — and write the erasure's receipt",
  summary:
    "Forget a shop (Shopify shop/redact, a GDPR/CCPA erasure): the archiver state machine's Forget task " +
    '(input {"forget": {"shopId": …}}) deletes every hot object, job row, archive part, month index, document filter ' +
    'and watermark retry of the shop, then completes the request in the erasure ledger with a receipt (counts, when, ' +
    'which runs; no content). Idempotent: run it again after a failure to remove what is left (docs/erasure.md).',
  options: {
    shop: { type: 'string', value: 'S', help: 'the shop to forget' },
    'request-id': {
      type: 'string',
      value: 'ID',
      help: "the request's id (e.g. the webhook's X-Shopify-Webhook-Id): a redelivery records nothing new",
    },
    'received-at': {
      type: 'string',
      value: 'ISO',
      help: 'when the platform sent the request (default: now); the deadline counts from here',
    },
    'drop-damaged': {
      type: 'boolean',
      help: "repair a damaged shared part by dropping its unreadable blocks, other shops' records in them included (counted in the receipt)",
    },
    ...EXECUTION_OPTIONS,
  },
  notes: ['Exit codes: 0 the shop is forgotten (receipt printed); 1 the execution failed — run it again.'],
};

export interface ForgetOptions {
  readonly input: {
    readonly shopId: string;
    readonly requestId?: string;
    readonly receivedAt?: string;
    readonly dropDamaged?: true;
  };
  readonly stateMachineArn?: string;
  readonly pollMs: number;
  readonly json: boolean;
}

export const parseForgetOptions = (flags: Flags): ForgetOptions => {
  const shopId = validateShopId(requiredString(flags, 'shop'));
  const requestId = stringFlag(flags, 'request-id');
  if (requestId !== undefined) validateRequestId(requestId);
  const receivedAt = dateFlag(flags, 'received-at');
  if (receivedAt && receivedAt.getTime() > Date.now() + 5 * 60_000)
    throw new InvalidInputError('--received-at', 'is in the future');
  // The ARN and polling as `run` checks them.
  const run = parseRunOptions({
    ...(flags['state-machine-arn'] !== undefined ? { 'state-machine-arn': flags['state-machine-arn'] } : {}),
  });
  return {
    input: {
      shopId,
      ...(requestId !== undefined ? { requestId } : {}),
      ...(receivedAt ? { receivedAt: receivedAt.toISOString() } : {}),
      ...(boolFlag(flags, 'drop-damaged') ? { dropDamaged: true as const } : {}),
    },
    ...(run.stateMachineArn !== undefined ? { stateMachineArn: run.stateMachineArn } : {}),
    pollMs: pollMsFlag(flags),
    json: boolFlag(flags, 'json'),
  };
};

export interface ForgetDeps {
  readonly runLocally?: (ctx: CliContext, input: unknown, io: Output) => Promise<RunOutcome>;
}

/**
 * The synthesized state machine in-process (the local stack), as `run` does: the real handlers wired
 * to this context's table, bucket and settings.
 */
const forgetLocally = async (ctx: CliContext, input: unknown, io: Output): Promise<RunOutcome> => {
  io.err('forget: running the archiver state machine (as CDK synthesizes it) in-process');
  const { runArchiverLocally, stepHandlers } = require('../local/runner') as typeof import('../local/runner');
  const deps = buildStepDeps(ctx.cfg, { bucket: ctx.bucket, table: ctx.table });
  try {
    const r = await runArchiverLocally({
      input: input as Record<string, unknown>,
      handlers: (sink) => stepHandlers(() => deps, sink),
      bucket: ctx.bucket,
      mapS3: () => s3ClientFrom(ctx.cfg),
    });
    return {
      status: r.status,
      output: r.output,
      ...(r.error ? { error: r.error.error, cause: r.error.cause } : {}),
    };
  } finally {
    deps.destroy();
  }
};

const receiptLines = (r: ForgetResult): string[] => {
  const c = r.counts;
  return [
    `forget: shop ${r.shopId} forgotten — request ${r.requestId}, received ${r.receivedAt}, complete ${r.completedAt}`,
    `  removed: ${c.hotObjects} hot objects (${c.rowlessJobs} jobs without a row), ${c.jobRows} job rows, ${c.parts} parts, ${c.monthIndexes} month indexes, ${c.docFilters} document filters, ${c.stagingDocs} staging docs, ${c.retryEntries} watermark retries, ${c.sharedParts} shared parts rewritten without it, ${c.uncommittedParts} uncommitted shared parts`,
    ...(c.damagedBlocksDropped > 0
      ? [
          `  repaired: ${c.damagedBlocksDropped} damaged shared-part blocks dropped (${c.otherShopsEntriesDropped} other shops' job entries were in them)`,
        ]
      : []),
    `  run scratch: ${c.scratchObjects} objects scrubbed of it${c.scratchRunsDeferred > 0 ? `; ${c.scratchRunsDeferred} runs still going scrub their own (docs/erasure.md "Run scratch")` : ''}`,
    ...(c.foreignObjectsKept > 0
      ? [`  kept: ${c.foreignObjectsKept} objects under the shop's jobs whose metadata names another shop`]
      : []),
    `  ${r.passes} passes; requests: ${r.requests.list} LIST, ${r.requests.head} HEAD (besides deletes)`,
  ];
};

export const forgetCommand = async (
  ctx: CliContext,
  opts: ForgetOptions,
  io: Output,
  deps: ForgetDeps = {},
): Promise<{ outcome: RunOutcome; exitCode: number }> => {
  const input = { forget: opts.input };
  const outcome: RunOutcome = opts.stateMachineArn
    ? await startAndFollow(ctx.sfn(), opts.stateMachineArn, input, io, { pollMs: opts.pollMs })
    : await (deps.runLocally ?? forgetLocally)(ctx, input, io);
  const ok = outcome.status === 'SUCCEEDED';
  if (opts.json)
    printJson(
      io,
      ok ? outcome.output : { status: outcome.status, error: outcome.error, cause: outcome.cause },
    );
  else if (ok) for (const line of receiptLines(outcome.output as ForgetResult)) io.out(line);
  if (!ok)
    io.err(
      `forget: execution ${outcome.status}${outcome.error ? `: ${outcome.error}` : ''}${outcome.cause ? ` — ${outcome.cause.split('\n')[0]}` : ''}; what was removed stays removed — run it again to finish`,
    );
  return { outcome, exitCode: ok ? EXIT_OK : EXIT_FAILURE };
};
