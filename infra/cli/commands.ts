import { type CommandSpec, EXIT_FAILURE, EXIT_OK, type Flags } from './args';
import { auditCommand, auditSpec, parseAuditOptions } from './audit';
import { auditExitCode } from './audit-model';
import type { CliContext, ResourceNeeds } from './context';
import { costSpec, parseCostOptions, runCost } from './cost';
import { demoCommand, demoSpec, parseDemoOptions } from './demo';
import { forgetCommand, forgetSpec, parseForgetOptions } from './forget';
import { lifecycleCommand, lifecycleSpec, parseLifecycleOptions } from './lifecycle';
import { lookupCommand, lookupSpec, parseLookupOptions } from './lookup';
import type { Output } from './output';
import { parseRedactOptions, redactCommand, redactSpec } from './redact';
import { parseReindexOptions, reindexCommand, reindexSpec } from './reindex';
import { parseRepairWatermarkOptions, repairWatermarkCommand, repairWatermarkSpec } from './repair-watermark';
import { parseRunOptions, runCommand, runSpec } from './run';
import { parseSearchOptions, searchCommand, searchSpec } from './search';
import { parseSeedOptions, seedCommand, seedSpec } from './seed';
import { parseSqlOptions, sqlCommand, sqlSpec } from './sql';
import { parseUpOptions, type StackHold, upCommand, upSpec } from './up';

/**
 * The command table main.ts dispatches on. Each entry parses its flags (throwing InvalidInputError
 * before any I/O) and runs against a context, returning the process exit code.
 */
export interface CommandDef {
  readonly spec: CommandSpec;
  /** Validates flags into the command's options; runs before any stack starts. */
  parse(flags: Flags): unknown;
  run(ctx: CliContext, opts: unknown, io: Output): Promise<number>;
  /** Whether the command talks to the jobs table / details bucket at all (default both). */
  needs(opts: unknown): ResourceNeeds;
  /** The command only talks to AWS (no embedded stack even without --aws). */
  awsOnly(opts: unknown): boolean;
  /** The command only runs on the embedded stack (endpoints from the environment are refused). */
  readonly embeddedOnly: boolean;
  /** Set for commands that need no stack and no AWS at all (they get no context). */
  readonly offline?: (opts: unknown, io: Output) => Promise<number>;
  /** Long walks of unknown size (search, audit, forget, redact): main.ts shows their requests as progress. */
  readonly showsRequests?: boolean;
  /** Set for a command that runs until SIGINT/SIGTERM (`up`): the signal ends it normally. */
  readonly untilSignal?: (ctx: CliContext, opts: unknown, io: Output, hold: StackHold) => Promise<number>;
}

const def = <O>(
  spec: CommandSpec,
  parse: (flags: Flags) => O,
  run: (ctx: CliContext, opts: O, io: Output) => Promise<number>,
  extra: { needs?: (opts: O) => ResourceNeeds; awsOnly?: (opts: O) => boolean; embeddedOnly?: boolean } = {},
): CommandDef => ({
  spec,
  parse,
  run: (ctx, opts, io) => run(ctx, opts as O, io),
  needs: (opts) => extra.needs?.(opts as O) ?? { table: true, bucket: true },
  awsOnly: (opts) => extra.awsOnly?.(opts as O) ?? false,
  embeddedOnly: extra.embeddedOnly ?? false,
});

/** A command whose requests main.ts shows as progress on stderr. */
const withRequests = <O>(...args: Parameters<typeof def<O>>): CommandDef => ({
  ...def(...args),
  showsRequests: true,
});

/** A command that talks to nothing (no stack is started, no AWS client built). */
const offline = <O>(
  spec: CommandSpec,
  parse: (flags: Flags) => O,
  run: (opts: O, io: Output) => Promise<number>,
): CommandDef => ({
  ...def(spec, parse, async () => EXIT_OK, { needs: () => ({ table: false, bucket: false }) }),
  offline: (opts, io) => run(opts as O, io),
});

export const COMMANDS: Readonly<Record<string, CommandDef>> = {
  seed: def(seedSpec, parseSeedOptions, async (ctx, o, io) => {
    await seedCommand(ctx, o, io);
    return EXIT_OK;
  }),
  run: def(runSpec, parseRunOptions, async (ctx, o, io) => (await runCommand(ctx, o, io)).exitCode, {
    // An execution in AWS reads and writes through its Lambdas: the CLI only talks to Step Functions.
    needs: (o) => (o.stateMachineArn ? { table: false, bucket: false } : { table: true, bucket: true }),
    awsOnly: (o) => o.stateMachineArn !== undefined,
  }),
  lookup: def(
    lookupSpec,
    parseLookupOptions,
    async (ctx, o, io) => (await lookupCommand(ctx, o, io)).exitCode,
  ),
  audit: withRequests(auditSpec, parseAuditOptions, async (ctx, o, io) =>
    auditExitCode(await auditCommand(ctx, o, io)),
  ),
  // It writes a fake fleet and deletes hot objects: never against endpoints from the environment.
  demo: def(demoSpec, parseDemoOptions, async (ctx, o, io) => (await demoCommand(ctx, o, io)).exitCode, {
    embeddedOnly: true,
  }),
  forget: withRequests(
    forgetSpec,
    parseForgetOptions,
    async (ctx, o, io) => (await forgetCommand(ctx, o, io)).exitCode,
    {
      // An execution in AWS does its work through its Lambda: the CLI only talks to Step Functions.
      needs: (o) => (o.stateMachineArn ? { table: false, bucket: false } : { table: true, bucket: true }),
      awsOnly: (o) => o.stateMachineArn !== undefined,
    },
  ),
  // Reads parts and writes one month index: the jobs table is not involved.
  reindex: def(
    reindexSpec,
    parseReindexOptions,
    async (ctx, o, io) => {
      await reindexCommand(ctx, o, io);
      return EXIT_OK;
    },
    { needs: () => ({ table: false, bucket: true }) },
  ),
  // Reads the erasure records and writes the watermark: the jobs table is not involved.
  'repair-watermark': def(
    repairWatermarkSpec,
    parseRepairWatermarkOptions,
    async (ctx, o, io) => {
      await repairWatermarkCommand(ctx, o, io);
      return EXIT_OK;
    },
    { needs: () => ({ table: false, bucket: true }) },
  ),
  redact: withRequests(
    redactSpec,
    parseRedactOptions,
    async (ctx, o, io) => (await redactCommand(ctx, o, io)).exitCode,
  ),
  search: withRequests(searchSpec, parseSearchOptions, async (ctx, o, io) =>
    (await searchCommand(ctx, o, io)).provenance.warnings.length > 0 ? EXIT_FAILURE : EXIT_OK,
  ),
  // Reads parts only; `--list` talks to nothing.
  sql: def(
    sqlSpec,
    parseSqlOptions,
    async (ctx, o, io) => {
      await sqlCommand(ctx, o, io);
      return EXIT_OK;
    },
    { needs: (o) => ({ table: false, bucket: !o.list }) },
  ),
  cost: offline(costSpec, parseCostOptions, runCost),
  lifecycle: offline(lifecycleSpec, parseLifecycleOptions, lifecycleCommand),
  up: {
    ...def(upSpec, parseUpOptions, async () => EXIT_OK, { embeddedOnly: true }),
    untilSignal: (ctx, opts, io, hold) => upCommand(ctx, opts as { json: boolean }, io, hold),
  },
};

export const generalHelp = (): string =>
  [
    'Usage: jobarchive <command> [options]',
    '',
    'Operator CLI of the job-details cold-tier archiver. Without --aws (or AWS_ENDPOINT_URL_* set) every',
    'command runs against the embedded local stack in --data-dir (default: $XDG_DATA_HOME/jobarchive, else',
    '.jobarchive/ in the working directory), started on demand and stopped when the last command using it ends.',
    '',
    'Commands:',
    ...Object.values(COMMANDS).map((c) => `  ${c.spec.name.padEnd(8)}  ${c.spec.short}`),
    '',
    "Run 'jobarchive <command> --help' for a command's options; 'jobarchive --version' for the version.",
    'Exit codes: 0 ok, 1 failed, 2 bad arguments, 3 done with quarantined jobs (run), 4 findings (audit),',
    '5 erasure pending a Glacier restore (redact: rerun to finish), 130/143 interrupted (SIGINT/SIGTERM;',
    '`up` ends 0 on Ctrl-C once its stack is up).',
    '',
  ].join('\n');
