import { parseArgs } from 'node:util';
import { MAX_NOW_AHEAD_MS } from '../../shared/archive/steps/run-context';
import { InvalidIdError, InvalidInputError, isNamedError } from '../../shared/errors';
import {
  defaultPhrase,
  SETTINGS,
  type SettingName,
  SWITCHES,
  type SwitchName,
  settingProblem,
} from '../../shared/settings';
import { parseDateOrTimestamp } from '../../shared/time';

/**
 * Argument parsing for every command: node:util parseArgs in strict mode, its errors and every bad
 * value turned into an InvalidInputError naming the flag, before any I/O. main.ts prints such an
 * error as one line on stderr and exits 2.
 */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** Placeholder shown in --help, e.g. `N`, `ISO`. */
  readonly value?: string;
  readonly help: string;
}

export interface CommandSpec {
  readonly name: string;
  /** One line for the general help. */
  readonly short: string;
  readonly summary: string;
  /** Extra lines of --help after the option list (cost notes, examples). */
  readonly notes?: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Common options that do not apply to this command, with why: left out of --help, refused by name. */
  readonly without?: Readonly<Partial<Record<keyof typeof COMMON_OPTIONS, string>>>;
  /** Arguments after the options (absent: none allowed), e.g. `sql`'s statement and its parameters. */
  readonly positionals?: { readonly value: string; readonly help: string };
}

/** Flags by name; positional arguments (for a spec that takes them) under `_`. */
export type Flags = Readonly<Record<string, string | boolean | readonly string[] | undefined>>;

export const positionalArgs = (flags: Flags): readonly string[] => {
  const v = flags._;
  return Array.isArray(v) ? v : [];
};

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** The command did its work, but left jobs in quarantine: their data is safe in place, someone must look. */
export const EXIT_QUARANTINED = 3;
/** `audit` found orphans or mismatches: data that is neither safely hot nor safely archived. */
export const EXIT_FINDINGS = 4;
/** An erasure is recorded but waits (parts in Glacier being restored): rerun to finish it. */
export const EXIT_PENDING = 5;

/** Flags of the commands that can start a deployed execution instead of a local one (run, forget). */
export const EXECUTION_OPTIONS = {
  'state-machine-arn': {
    type: 'string',
    value: 'ARN',
    help: 'start an execution of this deployed state machine in AWS instead (implies --aws)',
  },
  'poll-seconds': {
    type: 'string',
    value: 'S',
    help: 'with --state-machine-arn: seconds between polls (default 2)',
  },
} as const satisfies Record<string, OptionSpec>;

/** `--poll-seconds` in milliseconds. */
export const pollMsFlag = (flags: Flags): number =>
  numberFlag(flags, 'poll-seconds', 2, { min: 0.1, max: 600 }) * 1000;

/** Flags every command takes. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean', help: 'print one JSON document on stdout instead of text' },
  'data-dir': {
    type: 'string',
    value: 'DIR',
    help: 'folder of the embedded local stack (default: $XDG_DATA_HOME/jobarchive, else ./.jobarchive)',
  },
  aws: {
    type: 'boolean',
    help: 'use real AWS (or the AWS_ENDPOINT_URL_* endpoints) instead of the embedded stack',
  },
  table: {
    type: 'string',
    value: 'NAME',
    help: 'jobs table (default: $ECOM_JOBS_TABLE; `jobs` in the embedded stack, created if missing)',
  },
  bucket: {
    type: 'string',
    value: 'NAME',
    help: 'details bucket (default: $ECOM_JOB_DETAILS_BUCKET; `job-details` in the embedded stack)',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies Record<string, OptionSpec>;

const quoted = /'([^']+)'/;

/** parseArgs's TypeError (code ERR_PARSE_ARGS_*) as an InvalidInputError naming the flag. */
const fromParseArgsError = (err: unknown): InvalidInputError => {
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  const token = (quoted.exec(message)?.[1] ?? '').replace(/ <value>$/, '');
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new InvalidInputError('arguments', `unknown option ${token}`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new InvalidInputError('arguments', `unexpected argument ${JSON.stringify(token)}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (message.includes('does not take an argument'))
        return new InvalidInputError(token, 'takes no value');
      if (message.includes('ambiguous')) {
        return new InvalidInputError(token, `needs a value; write ${token}=VALUE for one starting with '-'`);
      }
      return new InvalidInputError(token, 'needs a value');
    default:
      return new InvalidInputError('arguments', message.split('\n')[0] ?? message);
  }
};

/** Parses `argv` (after the command name) against `spec` plus the common options. */
export const parseFlags = (spec: CommandSpec, argv: readonly string[]): Flags => {
  const options: Record<string, OptionSpec> = { ...COMMON_OPTIONS, ...spec.options };
  let values: Flags;
  try {
    const parsed = parseArgs({
      args: joinNegativeValues(argv, options),
      options,
      strict: true,
      allowPositionals: spec.positionals !== undefined,
      tokens: true,
    });
    refuseRepeats(parsed.tokens, options);
    values = (spec.positionals ? { ...parsed.values, _: parsed.positionals } : parsed.values) as Flags;
  } catch (err) {
    if (isNamedError(err, 'InvalidInputError')) throw err;
    throw fromParseArgsError(err);
  }
  for (const [flag, why] of Object.entries(spec.without ?? {})) {
    if (values[flag] !== undefined)
      throw new InvalidInputError(`--${flag}`, `does not apply to ${spec.name}: ${why}`);
  }
  return values;
};

/**
 * A value flag given twice (`--shop a --shop b`): parseArgs would keep the last one without a word,
 * and a command would act on a value the operator may not have meant. A repeated switch (`--json
 * --json`) means the same thing twice and passes.
 */
const refuseRepeats = (
  tokens: readonly { kind: string; name?: string; rawName?: string }[],
  options: Record<string, OptionSpec>,
): void => {
  const seen = new Map<string, string>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.name === undefined || options[t.name]?.type !== 'string') continue;
    const first = seen.get(t.name);
    const raw = t.rawName ?? `--${t.name}`;
    if (first !== undefined) {
      const as = first === raw ? '' : ` (as ${first} and ${raw})`;
      throw new InvalidInputError(`--${t.name}`, `given more than once${as}; give it once`);
    }
    seen.set(t.name, raw);
  }
};

/**
 * `--older-than-days -5` as `--older-than-days=-5`: parseArgs takes a value starting with '-' for
 * an option and refuses it, so a negative number would get "needs a value" instead of the range
 * check that names what is wrong with it.
 */
const joinNegativeValues = (argv: readonly string[], options: Record<string, OptionSpec>): string[] => {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (
      name !== undefined &&
      options[name]?.type === 'string' &&
      next !== undefined &&
      /^-[\d.]/.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
};

export const stringFlag = (flags: Flags, name: string): string | undefined => {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
};

export const boolFlag = (flags: Flags, name: string): boolean => flags[name] === true;

export const requiredString = (flags: Flags, name: string): string => {
  const v = stringFlag(flags, name);
  if (v === undefined || v.trim() === '') throw new InvalidInputError(`--${name}`, 'is required');
  return v;
};

/** A decimal number as a flag may spell it (no exponent, no hex, no `Infinity`). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

const numeric =
  (pattern: RegExp, valid: (n: number) => boolean, what: string) =>
  (flags: Flags, name: string, dflt: number, { min, max }: { min: number; max: number }): number => {
    const raw = stringFlag(flags, name);
    if (raw === undefined) return dflt;
    const n = pattern.test(raw.trim()) ? Number(raw) : Number.NaN;
    if (!valid(n) || n < min || n > max) {
      throw new InvalidInputError(
        `--${name}`,
        `expected ${what} in [${min}, ${max}], got ${JSON.stringify(raw)}`,
      );
    }
    return n;
  };

/** A whole number in [min, max]; an absent flag gives `dflt`. */
export const wholeNumberFlag = numeric(/^[+-]?\d+$/, Number.isSafeInteger, 'a whole number');

/** A decimal number in [min, max] (e.g. hours: 0.5 is fine); an absent flag gives `dflt`. */
export const numberFlag = numeric(DECIMAL, Number.isFinite, 'a number');

/** The option of a flag that sets one of shared/settings.ts: its meaning and default from there. */
export const settingOption = (name: SettingName, value: string): OptionSpec => ({
  type: 'string',
  value,
  help: `${SETTINGS[name].summary} (default: ${defaultPhrase(name)})`,
});

/** The option of a flag that sets a switch of shared/settings.ts (`true` or `false`). */
export const switchOption = (name: SwitchName): OptionSpec => ({
  type: 'string',
  value: 'true|false',
  help: `${SWITCHES[name].summary} (default: ${defaultPhrase(name)})`,
});

/** That switch flag's value; undefined when absent. */
export const switchFlag = (flags: Flags, flag: string): boolean | undefined => {
  const raw = stringFlag(flags, flag);
  if (raw === undefined) return undefined;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new InvalidInputError(`--${flag}`, `expected true or false, got ${JSON.stringify(raw)}`);
};

/** That flag's value, checked against the setting's bounds; undefined when absent. */
export const settingFlag = (flags: Flags, flag: string, name: SettingName): number | undefined => {
  const raw = stringFlag(flags, flag);
  if (raw === undefined) return undefined;
  const n = DECIMAL.test(raw.trim()) ? Number(raw) : Number.NaN;
  const problem = settingProblem(name, n, JSON.stringify(raw));
  if (problem !== undefined) throw new InvalidInputError(`--${flag}`, problem);
  return n;
};

/**
 * A calendar date (`2026-03-01`, UTC midnight) or a timestamp with an explicit zone (shared/time.ts).
 * A time without a zone is refused: it would silently depend on the operator's local timezone.
 */
export const parseIsoDate = (field: string, raw: string): Date => parseDateOrTimestamp(field, raw);

export const dateFlag = (flags: Flags, name: string): Date | undefined => {
  const raw = stringFlag(flags, name);
  return raw === undefined ? undefined : parseIsoDate(`--${name}`, raw);
};

/**
 * A run's `--now`: refused here (exit 2, before any stack starts) when it is later than the
 * execution's start may be followed (MAX_NOW_AHEAD_MS), which the state machine would otherwise find
 * only after starting, as a failed execution (exit 1).
 */
export const runNowFlag = (flags: Flags, name: string): Date | undefined => {
  const now = dateFlag(flags, name);
  const latest = Date.now() + MAX_NOW_AHEAD_MS;
  if (now && now.getTime() > latest) {
    throw new InvalidInputError(
      `--${name}`,
      `${now.toISOString()} is in the future (a run refuses a now later than its start + ${MAX_NOW_AHEAD_MS / 60_000} min: it would shorten the grace period)`,
    );
  }
  return now;
};

/**
 * A bad command line that shows only once the command runs (a statement DuckDB rejects): main.ts
 * prints it as a usage line and exits 2 from any phase, where an InvalidInputError thrown while a
 * command works (bad data, a bad setting) stays a failure (exit 1).
 */
export class UsageError extends InvalidInputError {}

/** True for the errors a bad command line produces (→ exit 2 with a one-line message). */
export const isUsageError = (err: unknown): boolean =>
  isNamedError(err, 'InvalidInputError') || isNamedError(err, 'InvalidIdError');

/** `jobarchive seed: invalid --shops: … (see 'jobarchive seed --help')` — always one line. */
export const usageLine = (command: string | undefined, err: unknown): string => {
  const what =
    err instanceof InvalidInputError || err instanceof InvalidIdError
      ? err.message
      : err instanceof Error
        ? err.message
        : String(err);
  const prefix = command ? `jobarchive ${command}` : 'jobarchive';
  const help = command ? `jobarchive ${command} --help` : 'jobarchive --help';
  return `${prefix}: ${what.replace(/\s*\n\s*/g, ' ')} (see '${help}')`;
};

/** The --help text of one command. */
export const helpText = (spec: CommandSpec): string => {
  const common = Object.fromEntries(
    Object.entries(COMMON_OPTIONS).filter(([name]) => !Object.hasOwn(spec.without ?? {}, name)),
  );
  const all: Record<string, OptionSpec> = { ...spec.options, ...common };
  const rows = Object.entries(all).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.value ? ` ${o.value}` : ''}`;
    return [flag, o.help] as const;
  });
  const width = Math.max(...rows.map(([f]) => f.length));
  return [
    `Usage: jobarchive ${spec.name} [options]${spec.positionals ? ` ${spec.positionals.value}` : ''}`,
    '',
    spec.summary,
    '',
    ...(spec.positionals ? [`  ${spec.positionals.value}: ${spec.positionals.help}`, ''] : []),
    'Options:',
    ...rows.map(([f, h]) => `  ${f.padEnd(width)}  ${h}`),
    ...(spec.notes && spec.notes.length > 0 ? ['', ...spec.notes] : []),
    '',
  ].join('\n');
};
