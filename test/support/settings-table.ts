import { type AnySettingName, CHOICES, SETTINGS, type SettingName, SWITCHES } from '../../shared/settings';

/** Where else than its environment variable each setting can be given (docs/deployment.md's settings table). */
export const SETTING_USES: Record<AnySettingName, string> = {
  olderThanDays: 'prop, run input, `--older-than-days`',
  graceHours: 'prop, run input, `--grace-hours`',
  jobTtlDays: 'prop; `recordFlush` / `writeTerminal` option `ttlDays`',
  readConcurrency: 'prop; store and reader option',
  restoreDays: 'prop (Redact), reader option',
  planPageGroups: 'prop',
  planPageJobs: 'prop',
  batchGroups: 'prop',
  batchJobs: 'prop',
  packBelowKb: 'prop',
  maxSourceMb: 'prop, run input, `--max-source-mb`',
  retentionMonths: 'prop; `jobarchive cost --retention-months`',
  erasureDeadlineDays: 'prop; `jobarchive audit --erasure-deadline-days`',
  wholeMonths: 'prop, run input, `--whole-months`',
  restoreTier: 'prop (Redact), reader option',
};

const n = (v: number): string => v.toLocaleString('en-US');

/** docs/deployment.md's settings table rows, from shared/settings.ts. */
export const settingsRows = (): string[] => [
  '| setting | variable | also | default | range | meaning |',
  '|---|---|---|---|---|---|',
  ...(Object.keys(SETTINGS) as SettingName[]).map((name) => {
    const s = SETTINGS[name];
    const range = `${n(s.min)} – ${n(s.max)}${s.integer ? '' : ' (fractions allowed)'}`;
    return `| \`${name}\` | \`${s.env}\` | ${SETTING_USES[name]} | ${n(s.default)} | ${range} | ${s.summary} |`;
  }),
  ...(Object.keys(SWITCHES) as (keyof typeof SWITCHES)[]).map((name) => {
    const s = SWITCHES[name];
    return `| \`${name}\` | \`${s.env}\` | ${SETTING_USES[name]} | ${s.default} | true / false | ${s.summary} |`;
  }),
  ...(Object.keys(CHOICES) as (keyof typeof CHOICES)[]).map((name) => {
    const s = CHOICES[name];
    return `| \`${name}\` | \`${s.env}\` | ${SETTING_USES[name]} | ${s.default} | ${s.values.join(' / ')} | ${s.summary} |`;
  }),
];
