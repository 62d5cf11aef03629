import { RUN_INCOMPLETE_ERROR } from '../../shared/archive/steps/report/run-incomplete';
import type { RunInput, RunReport } from '../../shared/archive/steps/types';
import { InvalidInputError } from '../../shared/errors';
import { getObjectBytes } from '../../shared/s3/objects';
import {
  checkTtlOutlivesArchival,
  RUN_SETTINGS,
  type RunSettingName,
  type SettingName,
  SWITCHES,
  type SwitchName,
} from '../../shared/settings';
import {
  boolFlag,
  type CommandSpec,
  EXECUTION_OPTIONS,
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_QUARANTINED,
  type Flags,
  pollMsFlag,
  runNowFlag,
  settingFlag,
  settingOption,
  stringFlag,
  switchFlag,
  switchOption,
} from './args';
import type { CliContext } from './context';
import { runLocally } from './local-run';
import { type Output, printJson } from './output';
import { isRunReport, type RunOutcome, summarizeRunReport } from './run-summary';
import { type FollowOptions, startAndFollow } from './sfn-follow';

/** The flag of each setting a run may set (shared/settings.ts RUN_SETTINGS): `maxSourceMb` → `max-source-mb`. */
const flagOf = (name: RunSettingName): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const isSwitch = (name: RunSettingName): name is RunSettingName & SwitchName => name in SWITCHES;
const VALUE_NAMES: Record<RunSettingName, string> = {
  olderThanDays: 'N',
  graceHours: 'H',
  wholeMonths: 'true|false',
  maxSourceMb: 'MB',
};

export const runSpec: CommandSpec = {
  name: 'run',
  short: 'run the archiver (in-process on the embedded stack, or a deployed state machine)',
  summary:
    'Run the archiver state machine: in-process on the embedded stack (the CDK-synthesized definition with the ' +
    'real handlers), or with --state-machine-arn as an execution in AWS, followed to the end.',
  options: {
    ...Object.fromEntries(
      RUN_SETTINGS.map((name) => [
        flagOf(name),
        isSwitch(name) ? switchOption(name) : settingOption(name as SettingName, VALUE_NAMES[name]),
      ]),
    ),
    now: {
      type: 'string',
      value: 'ISO',
      help: "the run's logical time (default: the execution's start; earlier is fine, later than start + 5 min is refused)",
    },
    'dry-run': { type: 'boolean', help: 'plan and count only: no part written, nothing deleted' },
    replan: {
      type: 'boolean',
      help: 'plan from the beginning of the status index, ignoring the plan watermark (audit names when)',
    },
    ...EXECUTION_OPTIONS,
  },
  notes: [
    'Exit codes: 0 all done; 3 the run succeeded but quarantined jobs (listed; their data stays hot); 1 the execution',
    'failed — ArchiveRunIncomplete when groups failed (every other group was processed; the failed ones are listed',
    'from report.json). A --dry-run exits 0 whenever its execution succeeds, and reports the same lists.',
  ],
};

export interface RunOptions {
  readonly input: RunInput;
  readonly stateMachineArn?: string;
  readonly pollMs: number;
  readonly json: boolean;
}

const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/;

export const parseRunOptions = (flags: Flags): RunOptions => {
  const arn = stringFlag(flags, 'state-machine-arn');
  if (arn !== undefined && !STATE_MACHINE_ARN.test(arn)) {
    throw new InvalidInputError(
      '--state-machine-arn',
      `expected arn:aws:states:REGION:ACCOUNT:stateMachine:NAME, got ${JSON.stringify(arn)}`,
    );
  }
  const now = runNowFlag(flags, 'now');
  const settings: Record<string, number | boolean> = {};
  for (const name of RUN_SETTINGS) {
    const v = isSwitch(name)
      ? switchFlag(flags, flagOf(name))
      : settingFlag(flags, flagOf(name), name as SettingName);
    if (v !== undefined) settings[name] = v;
  }
  const input: RunInput = {
    ...settings,
    ...(now ? { now: now.toISOString() } : {}),
    ...(boolFlag(flags, 'dry-run') ? { dryRun: true } : {}),
    ...(boolFlag(flags, 'replan') ? { replan: true } : {}),
  };
  return {
    input,
    ...(arn !== undefined ? { stateMachineArn: arn } : {}),
    pollMs: pollMsFlag(flags),
    json: boolFlag(flags, 'json'),
  };
};

export interface RunDeps {
  /** Runs the state machine in-process (default: infra/local/runner). */
  readonly runLocally?: (ctx: CliContext, input: RunInput, io: Output) => Promise<RunOutcome>;
  readonly follow?: FollowOptions;
}

export const runCommand = async (
  ctx: CliContext,
  opts: RunOptions,
  io: Output,
  deps: RunDeps = {},
): Promise<{ outcome: RunOutcome; exitCode: number }> => {
  // In-process, this run's settings and the table's TTL are both the environment's: refuse a pair
  // under which rows expire before their month is archived (a deployment checks its props at synth).
  if (!opts.stateMachineArn) {
    checkTtlOutlivesArchival({
      olderThanDays: opts.input.olderThanDays ?? ctx.cfg.olderThanDays,
      graceHours: opts.input.graceHours ?? ctx.cfg.graceHours,
      jobTtlDays: ctx.cfg.jobTtlDays,
      wholeMonths: opts.input.wholeMonths ?? ctx.cfg.wholeMonths,
    });
  }
  const outcome: RunOutcome = opts.stateMachineArn
    ? await startAndFollow(ctx.sfn(), opts.stateMachineArn, opts.input, io, {
        pollMs: opts.pollMs,
        ...deps.follow,
      })
    : await (deps.runLocally ?? runLocally)(ctx, opts.input, io);
  const ok = outcome.status === 'SUCCEEDED';
  // An incomplete run's execution has no output: its report is in S3, named by the Cause.
  const incomplete = !ok && outcome.error === RUN_INCOMPLETE_ERROR;
  const report = ok
    ? isRunReport(outcome.output)
      ? outcome.output
      : undefined
    : incomplete
      ? await readIncompleteReport(ctx, outcome.cause, io)
      : undefined;
  if (opts.json) {
    printJson(
      io,
      ok
        ? outcome.output
        : {
            status: outcome.status,
            error: outcome.error,
            cause: outcome.cause,
            output: outcome.output,
            report,
          },
    );
  } else if (report) {
    const where = ctx.bucket ? `s3://${ctx.bucket}` : undefined;
    for (const line of summarizeRunReport(report, where)) io.out(line);
  } else if (ok) {
    io.out(JSON.stringify(outcome.output));
  }
  if (incomplete) {
    // Say "listed above" only when they are: a report that could not be read lists nothing.
    const where = !report
      ? `the report could not be read; the execution's cause: ${(outcome.cause ?? 'none').split('\n')[0]}`
      : opts.json
        ? 'in the JSON above'
        : report.groupsFailed.length > 0
          ? 'listed above'
          : `listed in s3://${ctx.bucket}/${report.reportKey}`;
    io.err(
      `run: execution FAILED: ${RUN_INCOMPLETE_ERROR} — ${report?.groupsFailedCount ?? 'some'} group(s) failed (${where}); their hot data is left in place`,
    );
  } else if (!ok) {
    io.err(
      `run: execution ${outcome.status}${outcome.error ? `: ${outcome.error}` : ''}${outcome.cause ? ` — ${outcome.cause.split('\n')[0]}` : ''}`,
    );
  } else if (report && !report.dryRun && report.jobsQuarantinedCount > 0) {
    io.err(
      `run: ${report.jobsQuarantinedCount} job(s) quarantined (listed above): their data stays hot until fixed (exit ${EXIT_QUARANTINED})`,
    );
    return { outcome, exitCode: EXIT_QUARANTINED };
  }
  return { outcome, exitCode: ok ? EXIT_OK : EXIT_FAILURE };
};

/** The report.json an ArchiveRunIncomplete Cause points at (undefined, said on stderr, when unreadable). */
const readIncompleteReport = async (
  ctx: CliContext,
  cause: string | undefined,
  io: Output,
): Promise<RunReport | undefined> => {
  let key: unknown;
  try {
    key = (JSON.parse(cause ?? '') as { reportKey?: unknown }).reportKey;
  } catch {
    key = undefined;
  }
  if (typeof key !== 'string' || !ctx.bucket) return undefined;
  try {
    const got = await getObjectBytes(ctx.s3, ctx.bucket, key);
    const doc: unknown = got ? JSON.parse(got.bytes.toString('utf8')) : undefined;
    return isRunReport(doc) ? doc : undefined;
  } catch (err) {
    io.err(`run: could not read the report ${key}: ${(err as Error).message}`);
    return undefined;
  }
};
