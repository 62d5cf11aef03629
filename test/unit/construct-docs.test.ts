import * as cdk from '../../infra/construct';
import { STATE } from '../../infra/construct/archiver-state-machine';
import { DEFAULT_ACCESS_LOGS_PREFIX } from '../../infra/construct/props-validation';
import {
  ARCHIVER_STEPS,
  type ArchiverStep,
  defaultMemoryMb,
  defaultTimeout,
} from '../../infra/construct/step-functions';
import { ACCESS_LOGS_RETENTION_DAYS, ALL_SETTINGS, ARCHIVER_SETTINGS } from '../../shared/settings';
import { propDocs } from '../support/prop-docs';

/**
 * The construct's prop docs are its published surface (IDE hover, the declarations consumers read),
 * as the TypeScript checker sees them — those of the settings props come from the settings table
 * through mapped types. They must name the steps and states that exist, with the defaults the code
 * applies (as settings.test.ts holds the settings table).
 */
const props = propDocs('infra/construct/props.ts', 'JobDetailsArchiveProps');
const docs = [...props.values()].map((d) => d.text).join('\n');
const defaultOf = (prop: string): string | undefined => props.get(prop)?.default;

/** `N for a, b, M for the others` → the value each step gets. */
const perStep = (doc: string | undefined, unit: string): Record<ArchiverStep, string> => {
  const m = /^(.+?) for ([a-z, -]+), ([^,]+) for the others$/.exec(doc ?? '');
  if (!m) throw new Error(`unexpected @default: ${doc}`);
  const named = (m[2] ?? '').split(/, | and /);
  return Object.fromEntries(
    ARCHIVER_STEPS.map((s) => [s, `${named.includes(s) ? m[1] : m[3]}`.replace(` ${unit}`, '')]),
  ) as Record<ArchiverStep, string>;
};

test('every step-like name in the prop docs is a real step or state', () => {
  // The entry's own names (ArchiveStorageClass in an @default) are not steps or states.
  const known = new Set<string>([...ARCHIVER_STEPS, ...Object.values(STATE), ...Object.keys(cdk)]);
  const stepLike = /\b(?:plan|archive|verify|commit|delete|tally|report)(?:-[a-z]+)+\b/g;
  const stateLike = /\b(?:Plan|Archive|Verify|Commit|Delete|Tally|Report)[A-Z][a-zA-Z]+\b/g;
  const named = [...(docs.match(stepLike) ?? []), ...(docs.match(stateLike) ?? [])];
  expect(named.filter((n) => !known.has(n))).toEqual([]);
});

test('the memory and timeout defaults are documented as applied, step by step', () => {
  const memory = perStep(defaultOf('lambdaMemoryMb'), '');
  const timeout = perStep(defaultOf('lambdaTimeout'), 'minutes');
  for (const step of ARCHIVER_STEPS) {
    expect([step, memory[step]]).toEqual([step, String(defaultMemoryMb(step))]);
    expect([step, timeout[step]]).toEqual([step, String(defaultTimeout(step).toMinutes())]);
  }
});

test("every settings prop carries its table entry's doc and @default (mapped types keep them)", () => {
  for (const name of [...ARCHIVER_SETTINGS, 'retentionMonths'] as const) {
    const doc = props.get(name);
    expect([name, doc?.default !== undefined && doc.text.length > 40]).toEqual([name, true]);
  }
  expect(defaultOf('maxSourceMb')).toBe("the ArchiveBatch function's memory / 40");
  // Written out for jsii (no mapped types): each @default is still the table's.
  for (const name of [...ARCHIVER_SETTINGS, 'retentionMonths'] as const) {
    if (name === 'maxSourceMb' || name === 'restoreTier') continue;
    expect([name, defaultOf(name)]).toEqual([name, String(ALL_SETTINGS[name].default)]);
  }
  expect(defaultOf('restoreTier')).toBe(
    `RestoreTier.${String(ALL_SETTINGS.restoreTier.default).toUpperCase()}`,
  );
  expect(defaultOf('table')).toMatch(/a new TableV2/);
});

test('the access-log defaults are documented as applied (the cost model reads the same constant)', () => {
  // Off by default (0 days: the cost model prices none either); either prop opts in.
  expect(ACCESS_LOGS_RETENTION_DAYS).toBe(0);
  expect(defaultOf('accessLogsRetention')).toMatch(
    /^- no access logs: no log bucket, no logging configuration/,
  );
  expect(defaultOf('serverAccessLogsBucket')).toMatch(
    /with `accessLogsRetention`; without it, no access logs$/,
  );
  expect(defaultOf('bucket')).toMatch(/access logs only if asked/);
  expect(defaultOf('serverAccessLogsPrefix')).toBe(`'${DEFAULT_ACCESS_LOGS_PREFIX}'`);
  // Its doc prices it: per archived hot object per month kept, the archiver's two records named.
  expect(props.get('accessLogsRetention')?.text).toMatch(/two a hot object,\s+its GET and its delete/);
});
