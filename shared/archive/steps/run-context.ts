import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../errors';
import { checkSetting, RUN_SETTINGS, type SettingName, SWITCHES } from '../../settings';
import { validateRunId } from '../format';
import type { StepSettings } from './context';
import { bool, isoTime, obj, onlyFields, validId } from './shape';
import type { RunContext, RunInput } from './types';

/** The run: its id from the execution, its input, and the context every later event carries. */

/**
 * How far past the execution's start an input `now` may be. `now` moves the cutoff and counts toward
 * the grace period before sources are deleted, so a `now` in the future would delete sooner than
 * configured; a few minutes absorb clock skew between whoever computed `now` and Step Functions.
 */
export const MAX_NOW_AHEAD_MS = 5 * 60_000;

const DAY_MS = 86_400_000;

/**
 * Execution names allow characters run ids (key segments) do not. Unsafe characters become `_`, and a
 * short hash of the original keeps two names that sanitize alike (`a.b`, `a_b`) apart.
 */
export const runIdFromExecution = (execution: string): string => {
  if (typeof execution !== 'string' || execution === '') {
    throw new InvalidInputError('execution', 'expected the execution name');
  }
  let id = execution.replace(/[^A-Za-z0-9_-]/g, '_');
  if (!/^[A-Za-z0-9]/.test(id)) id = `r${id}`;
  if (id !== execution || id.length > 80) {
    const hash = createHash('sha256').update(execution, 'utf8').digest('hex').slice(0, 8);
    id = `${id.slice(0, 71)}-${hash}`;
  }
  return validateRunId(id);
};

const RUN_INPUT_FIELDS = [...RUN_SETTINGS, 'now', 'dryRun', 'replan'] as const;

/** A run's settings from its input: numbers within the table's bounds, switches booleans. */
const runSettings = (o: Record<string, unknown>, field: string): Record<string, number | boolean> => {
  const out: Record<string, number | boolean> = {};
  for (const name of RUN_SETTINGS) {
    const v = o[name];
    if (v === undefined) continue;
    out[name] =
      name in SWITCHES
        ? bool(v, `${field}.${name}`)
        : checkSetting(name as SettingName, v, `${field}.${name}`);
  }
  return out;
};

export const parseRunInput = (v: unknown, field = 'state'): RunInput => {
  const o = v === undefined || v === null ? {} : obj(v, field);
  onlyFields(o, field, RUN_INPUT_FIELDS);
  return {
    ...runSettings(o, field),
    ...(o.now !== undefined ? { now: isoTime(o.now, `${field}.now`) } : {}),
    ...(o.dryRun !== undefined ? { dryRun: bool(o.dryRun, `${field}.dryRun`) } : {}),
    ...(o.replan !== undefined ? { replan: bool(o.replan, `${field}.replan`) } : {}),
  } as RunInput;
};

/** The first instant of `t`'s UTC month. */
export const monthStartOf = (t: number): string => {
  const d = new Date(t);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
};

/**
 * The run of a new execution: input over config defaults; `now` defaults to the start time and may
 * be earlier (re-run an old day), never later than MAX_NOW_AHEAD_MS past it.
 */
export const buildRun = (
  input: RunInput,
  execution: string,
  startTime: string,
  settings: Pick<StepSettings, 'olderThanDays' | 'graceHours' | 'wholeMonths'>,
): RunContext => {
  const startedAt = isoTime(startTime, 'startTime');
  const now = input.now ?? startedAt;
  if (Date.parse(now) > Date.parse(startedAt) + MAX_NOW_AHEAD_MS) {
    throw new InvalidInputError(
      'state.now',
      `${now} is after the execution's start ${startedAt} (+${MAX_NOW_AHEAD_MS / 60_000} min): a future now would shorten the grace period`,
    );
  }
  const olderThanDays = input.olderThanDays ?? settings.olderThanDays;
  const due = Date.parse(now) - olderThanDays * DAY_MS;
  return {
    runId: runIdFromExecution(execution),
    now,
    // Whole months: a month waits until all of it is due, then goes in one run (one part per shop).
    cutoff: (input.wholeMonths ?? settings.wholeMonths) ? monthStartOf(due) : new Date(due).toISOString(),
    olderThanDays,
    graceHours: input.graceHours ?? settings.graceHours,
    dryRun: input.dryRun ?? false,
    startedAt,
    ...(input.maxSourceMb !== undefined ? { maxSourceMb: input.maxSourceMb } : {}),
  };
};

/** A run carried in a later event; every field is checked (it decides what gets deleted). */
export const parseRun = (v: unknown, field = 'run'): RunContext => {
  const o = obj(v, field);
  const run: RunContext = {
    runId: validId(validateRunId, o.runId, `${field}.runId`),
    now: isoTime(o.now, `${field}.now`),
    cutoff: isoTime(o.cutoff, `${field}.cutoff`),
    olderThanDays: checkSetting('olderThanDays', o.olderThanDays, `${field}.olderThanDays`),
    graceHours: checkSetting('graceHours', o.graceHours, `${field}.graceHours`),
    dryRun: bool(o.dryRun, `${field}.dryRun`),
    startedAt: isoTime(o.startedAt, `${field}.startedAt`),
    ...(o.maxSourceMb !== undefined
      ? { maxSourceMb: checkSetting('maxSourceMb', o.maxSourceMb, `${field}.maxSourceMb`) }
      : {}),
  };
  if (run.cutoff > run.now) throw new InvalidInputError(`${field}.cutoff`, 'must not be after now');
  return run;
};
