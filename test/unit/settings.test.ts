import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseFlags, settingFlag } from '../../infra/cli/args';
import { runSpec } from '../../infra/cli/run';
import { resolveArchiveProps } from '../../infra/construct/props-validation';
import { parseRunInput } from '../../shared/archive/steps/run-context';
import { ENV, parseConfig } from '../../shared/config';
import { readerSettings } from '../../shared/reader/query';
import { ALL_SETTINGS, CHOICES, SETTINGS, type SettingName, SWITCHES } from '../../shared/settings';
import { settingsRows } from '../support/settings-table';

/**
 * Each setting is described once (shared/settings.ts) and every way in — environment, construct
 * props, CLI flags, run input, library options — takes its default and bounds from there.
 */
const names = Object.keys(SETTINGS) as SettingName[];

describe('settings, described once', () => {
  it.each(names)('%s: the environment defaults to it and refuses just past its bounds', (name) => {
    const s = SETTINGS[name];
    expect(parseConfig({})[name]).toBe(s.default);
    expect(parseConfig({ [s.env]: String(s.max) })[name]).toBe(s.max);
    expect(() => parseConfig({ [s.env]: String(s.max + 1) })).toThrow(
      `${s.env}: expected ${s.integer ? 'a whole number' : 'a number'} in [${s.min}, ${s.max}], got "${s.max + 1}"`,
    );
    expect(() => parseConfig({ [s.env]: String(s.min - 1) })).toThrow(s.env);
  });

  const PROPS: SettingName[] = [
    'olderThanDays',
    'graceHours',
    'jobTtlDays',
    'planPageGroups',
    'batchGroups',
    'batchJobs',
    'erasureDeadlineDays',
  ];
  it.each(PROPS)(
    '%s: the construct prop defaults to it and refuses past its bounds, naming the prop',
    (name) => {
      const s = SETTINGS[name];
      expect(resolveArchiveProps({})[name as 'olderThanDays']).toBe(s.default);
      // jobTtlDays must exceed olderThanDays: keep the others at their minimum so only the bound speaks.
      const base = name === 'jobTtlDays' ? { olderThanDays: 0, graceHours: 0 } : { jobTtlDays: 3650 };
      expect(() => resolveArchiveProps({ ...base, [name]: s.max + 1 })).toThrow(
        new RegExp(`${name}.*in \\[${s.min}, ${s.max}\\]`),
      );
    },
  );

  it('maxSourceMb: the prop is checked against the table; unset, the functions derive it from their memory', () => {
    const s = SETTINGS.maxSourceMb;
    expect(resolveArchiveProps({}).maxSourceMb).toBeUndefined();
    expect(resolveArchiveProps({ maxSourceMb: 8 }).maxSourceMb).toBe(8);
    expect(() => resolveArchiveProps({ maxSourceMb: s.max + 1 })).toThrow(
      /maxSourceMb.*in \[0\.001, 10240\]/,
    );
    expect(parseConfig({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048' }).maxSourceMb).toBe(2048 / 40);
    expect(parseConfig({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '2048', [s.env]: '3' }).maxSourceMb).toBe(3);
  });

  it('restoreTier: the environment takes one of its values, defaulting to the table', () => {
    expect(parseConfig({}).restoreTier).toBe(CHOICES.restoreTier.default);
    expect(parseConfig({ JDA_RESTORE_TIER: 'Bulk' }).restoreTier).toBe('Bulk');
    expect(() => parseConfig({ JDA_RESTORE_TIER: 'Fast' })).toThrow('JDA_RESTORE_TIER');
  });

  it('ENV names every setting by its table entry', () => {
    for (const [name, s] of Object.entries(ALL_SETTINGS)) expect(ENV[name as keyof typeof ENV]).toBe(s.env);
  });

  it('the props documentation states the same defaults', () => {
    const source = readFileSync(resolve(__dirname, '../../infra/construct/props.ts'), 'utf8');
    const documented = (prop: string): string | undefined =>
      new RegExp(`@default ([^\\n]+)\\n\\s*\\*/\\n\\s*readonly ${prop}\\?`).exec(source)?.[1]?.trim();
    for (const name of PROPS)
      expect([name, documented(name)]).toEqual([name, String(SETTINGS[name].default)]);
    expect(documented('wholeMonths')).toBe(String(SWITCHES.wholeMonths.default));
  });

  it.each(['olderThanDays', 'graceHours'] as const)(
    '%s: a run input and a CLI flag take the same bounds',
    (name) => {
      const s = SETTINGS[name];
      expect(parseRunInput({ [name]: s.max })[name]).toBe(s.max);
      expect(() => parseRunInput({ [name]: s.max + 1 })).toThrow(`state.${name}`);
      const flag = name === 'olderThanDays' ? 'older-than-days' : 'grace-hours';
      const flags = (v: string) => parseFlags(runSpec, [`--${flag}`, v]);
      expect(settingFlag(flags(String(s.max)), flag, name)).toBe(s.max);
      expect(() => settingFlag(flags(String(s.max + 1)), flag, name)).toThrow(`--${flag}`);
      expect(runSpec.options[flag]?.help).toContain(`default: $${s.env} or ${s.default}`);
    },
  );

  it('reader options take restoreDays and readConcurrency from it', () => {
    expect(readerSettings({})).toMatchObject({
      restoreDays: SETTINGS.restoreDays.default,
      readConcurrency: SETTINGS.readConcurrency.default,
    });
    expect(() => readerSettings({ restoreDays: SETTINGS.restoreDays.max + 1 })).toThrow('restoreDays');
  });
});

test("docs/deployment.md's settings table is the one generated from shared/settings.ts", () => {
  const doc = readFileSync(resolve(__dirname, '../../docs/deployment.md'), 'utf8');
  expect(doc).toContain(settingsRows().join('\n'));
});
