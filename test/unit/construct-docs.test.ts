import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { STATE } from '../../infra/construct/archiver-state-machine';
import {
  ARCHIVER_STEPS,
  type ArchiverStep,
  defaultMemoryMb,
  defaultTimeout,
} from '../../infra/construct/step-functions';

/**
 * The construct's prop docs are its published surface (jsii/IDE hover): they must name the steps and
 * states that exist, with the defaults the code applies (as settings.test.ts holds the settings table).
 */
const source = readFileSync(resolve(__dirname, '../../infra/construct/props.ts'), 'utf8');
const docs = [...source.matchAll(/\/\*\*[\s\S]*?\*\//g)].map((m) => m[0]).join('\n');
const defaultOf = (prop: string): string | undefined =>
  new RegExp(`@default ([^\\n]+)\\n\\s*\\*/\\n\\s*readonly ${prop}\\?`).exec(source)?.[1]?.trim();

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
  const known = new Set<string>([...ARCHIVER_STEPS, ...Object.values(STATE)]);
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
