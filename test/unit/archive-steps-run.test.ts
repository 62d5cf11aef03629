import { reasonOf } from '../../shared/archive/steps/caps';
import {
  buildRun,
  MAX_NOW_AHEAD_MS,
  parseRun,
  parseRunInput,
  runIdFromExecution,
} from '../../shared/archive/steps/run-context';
import { InvalidIdError, InvalidInputError, VerificationError } from '../../shared/errors';

const settings = { olderThanDays: 30, graceHours: 1, wholeMonths: false };

describe('run ids from execution names', () => {
  test('a key-safe name is kept as is', () => {
    expect(runIdFromExecution('archiver-2026-03-01_nightly')).toBe('archiver-2026-03-01_nightly');
  });
  test('unsafe characters become _ and a hash keeps look-alikes apart', () => {
    const a = runIdFromExecution('a.b');
    const b = runIdFromExecution('a_b');
    expect(a).toMatch(/^a_b-[0-9a-f]{8}$/);
    expect(b).toBe('a_b');
    expect(a).not.toBe(b);
  });
  test('a leading non-alphanumeric gets a prefix; long names are cut to 80', () => {
    expect(runIdFromExecution('_x')).toMatch(/^r_x-[0-9a-f]{8}$/);
    expect(runIdFromExecution('x'.repeat(80))).toBe('x'.repeat(80));
    expect(runIdFromExecution('x'.repeat(81))).toHaveLength(80);
  });
  test('an empty name is an input error', () => {
    expect(() => runIdFromExecution('')).toThrow(InvalidInputError);
  });
});

describe('execution input', () => {
  test('defaults come from config, now from the start time', () => {
    const run = buildRun(parseRunInput({}), 'exec-1', '2026-03-10T04:00:00Z', settings);
    expect(run).toEqual({
      runId: 'exec-1',
      now: '2026-03-10T04:00:00.000Z',
      cutoff: '2026-02-08T04:00:00.000Z',
      olderThanDays: 30,
      graceHours: 1,
      dryRun: false,
      startedAt: '2026-03-10T04:00:00.000Z',
    });
  });
  test('input overrides, 0 allowed, now normalized to UTC', () => {
    const run = buildRun(
      parseRunInput({ olderThanDays: 0, graceHours: 0, now: '2026-03-10T06:00:00+02:00', dryRun: true }),
      'e',
      '2026-03-11T00:00:00Z',
      settings,
    );
    expect(run).toMatchObject({
      now: '2026-03-10T04:00:00.000Z',
      cutoff: '2026-03-10T04:00:00.000Z',
      graceHours: 0,
      dryRun: true,
    });
  });
  test('now may be earlier than the start, or up to 5 minutes later (clock skew), never more', () => {
    const start = '2026-03-10T04:00:00Z';
    const at = (now: string) => buildRun(parseRunInput({ now }), 'e', start, settings).now;
    expect(at('2025-01-01T00:00:00Z')).toBe('2025-01-01T00:00:00.000Z');
    expect(at('2026-03-10T04:05:00Z')).toBe('2026-03-10T04:05:00.000Z');
    expect(MAX_NOW_AHEAD_MS).toBe(5 * 60_000);
    for (const late of ['2026-03-10T04:05:00.001Z', '2026-03-10T06:00:00Z']) {
      try {
        at(late);
        throw new Error('expected a throw');
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidInputError);
        expect((err as InvalidInputError).field).toBe('state.now');
        expect((err as Error).message).toMatch(/grace period/);
      }
    }
  });
  test.each([
    [{ dryrun: true }, 'state.dryrun'],
    [{ dryRun: 'yes' }, 'state.dryRun'],
    [{ olderThanDays: -1 }, 'state.olderThanDays'],
    [{ graceHours: Number.NaN }, 'state.graceHours'],
    [{ now: '2026-03-10' }, 'state.now'],
    [{ now: 'not a date' }, 'state.now'],
    [[1], 'state'],
  ])('%j is rejected naming %s (a typo must never run for real)', (input, field) => {
    try {
      parseRunInput(input);
      throw new Error('expected a throw');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).field).toBe(field);
    }
  });
});

describe('parseRun', () => {
  const run = buildRun({}, 'exec', '2026-03-10T04:00:00Z', settings);
  test('accepts what buildRun made', () => expect(parseRun(JSON.parse(JSON.stringify(run)))).toEqual(run));
  test.each([
    ['runId', '../x'],
    ['now', 'yesterday'],
    ['dryRun', 'false'],
    ['graceHours', -1],
  ])('rejects a bad %s', (field, value) => {
    expect(() => parseRun({ ...run, [field]: value })).toThrow(new RegExp(`run\\.${field}`));
  });
  test('a cutoff after now is rejected', () => {
    expect(() => parseRun({ ...run, cutoff: '2027-01-01T00:00:00.000Z' })).toThrow(/run\.cutoff/);
  });
});

test('reasonOf names the error and stays short', () => {
  expect(reasonOf(new VerificationError('k', 'bad'))).toBe(
    'VerificationError: verification of k failed: bad',
  );
  expect(reasonOf(new InvalidIdError('job id', 'x'.repeat(500), 'nope')).length).toBeLessThanOrEqual(200);
  expect(reasonOf('plain')).toBe('plain');
});
