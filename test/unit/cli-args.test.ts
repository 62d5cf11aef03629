/**
 * Command-line parsing of `jobarchive`: every kind of bad argument is exit code 2 with exactly one
 * line on stderr, decided before any stack starts or any request is sent (runCli returns from the
 * parse phase, so these tests need no emulator).
 */

import { parseFlags, parseIsoDate } from '../../infra/cli/args';
import { contextFromConfig } from '../../infra/cli/context';
import { runCli } from '../../infra/cli/main';
import { memoryOutput } from '../../infra/cli/output';
import { parseRunOptions, runSpec } from '../../infra/cli/run';
import { parseSeedOptions, seedSpec } from '../../infra/cli/seed';
import { parseConfig, resetConfig } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';

const usage = async (argv: string[]) => {
  const io = memoryOutput();
  const code = await runCli(argv, io);
  return { code, io };
};

describe('bad arguments: exit 2, one line on stderr, nothing on stdout', () => {
  // Run beside the integration project, this worker inherits its stack's AWS_ENDPOINT_URL_* exports:
  // these cases are about the arguments alone, so they run with none set.
  const saved = { ...process.env };
  beforeAll(() => {
    for (const k of Object.keys(process.env)) if (k.startsWith('AWS_ENDPOINT_URL')) delete process.env[k];
    resetConfig();
  });
  afterAll(() => {
    process.env = saved;
    resetConfig();
  });

  const cases: [string, string[], RegExp][] = [
    ['missing command', [], /^jobarchive: invalid command: missing; one of seed, run, lookup, audit, demo/],
    ['unknown command', ['archive'], /^jobarchive: invalid command: unknown command "archive"/],
    ['unknown flag', ['seed', '--shop', '3'], /^jobarchive seed: invalid arguments: unknown option --shop /],
    ['unknown short flag', ['audit', '-x'], /^jobarchive audit: invalid arguments: unknown option -x /],
    ['flag without its value', ['seed', '--shops'], /^jobarchive seed: invalid --shops: needs a value /],
    [
      'value that looks like a flag',
      ['seed', '--now', '--jobs'],
      /^jobarchive seed: invalid --now: needs a value; write --now=VALUE/,
    ],
    [
      'negative number after a space: the range check, not "needs a value"',
      ['seed', '--jobs', '-5'],
      /^jobarchive seed: invalid --jobs: expected a whole number in \[1, 100000\], got "-5" /,
    ],
    [
      'negative days after a space',
      ['run', '--older-than-days', '-5'],
      /^jobarchive run: invalid --older-than-days: expected a number in \[0, 3650\], got "-5" /,
    ],
    [
      '--aws on a command that runs the embedded stack only names the flag',
      ['up', '--aws'],
      /^jobarchive up: invalid --aws: does not apply to up: it keeps the embedded stack up/,
    ],
    [
      'a stack flag on cost, which talks to nothing',
      ['cost', '--table', 'jobs'],
      /^jobarchive cost: invalid --table: does not apply to cost: /,
    ],
    [
      'value given to a boolean flag',
      ['run', '--dry-run=yes'],
      /^jobarchive run: invalid --dry-run: takes no value /,
    ],
    [
      'positional argument',
      ['audit', 'now'],
      /^jobarchive audit: invalid arguments: unexpected argument "now" /,
    ],
    [
      'non-numeric N',
      ['seed', '--shops', 'ten'],
      /^jobarchive seed: invalid --shops: expected a whole number in \[1, 10000\], got "ten" /,
    ],
    [
      'fractional N',
      ['seed', '--months', '1.5'],
      /^jobarchive seed: invalid --months: expected a whole number/,
    ],
    [
      'N out of range',
      ['seed', '--jobs', '0'],
      /^jobarchive seed: invalid --jobs: expected a whole number in \[1, 100000\], got "0"/,
    ],
    [
      'negative N via =',
      ['run', '--older-than-days=-1'],
      /^jobarchive run: invalid --older-than-days: expected a number in \[0, 3650\]/,
    ],
    [
      'bad ISO date',
      ['seed', '--now', 'yesterday'],
      /^jobarchive seed: invalid --now: "yesterday" is not an ISO-8601 timestamp/,
    ],
    [
      'impossible calendar date',
      ['run', '--now', '2026-02-30'],
      /^jobarchive run: invalid --now: "2026-02-30T00:00:00Z" names a date that does not exist/,
    ],
    [
      'date-time without a zone',
      ['run', '--now', '2026-03-01T10:00:00'],
      /^jobarchive run: invalid --now: "2026-03-01T10:00:00" has no UTC offset/,
    ],
    [
      'missing required flag',
      ['lookup', '--job', 'k3jqxr2m7zaba'],
      /^jobarchive lookup: invalid --shop: is required /,
    ],
    [
      'unsafe id',
      ['lookup', '--shop', '../other', '--job', 'k3jqxr2m7zaba'],
      /^jobarchive lookup: invalid shop id "\.\.\/other": contains '\/' /,
    ],
    [
      'bad state machine ARN',
      ['run', '--state-machine-arn', 'my-machine'],
      /^jobarchive run: invalid --state-machine-arn: expected arn:aws:states:/,
    ],
    [
      'a value flag given twice (the last one would win without a word)',
      ['lookup', '--shop', 'shop-a', '--shop', 'shop-b', '--job', 'k3jqxr2m7zaba'],
      /^jobarchive lookup: invalid --shop: given more than once; give it once /,
    ],
    [
      'a value flag given twice, once with =',
      ['run', '--older-than-days', '30', '--older-than-days=45'],
      /^jobarchive run: invalid --older-than-days: given more than once; give it once /,
    ],
    [
      'a --now in the future (the execution would refuse it only after starting: exit 1)',
      ['run', '--now', '2999-01-01'],
      /^jobarchive run: invalid --now: 2999-01-01T00:00:00\.000Z is in the future \(a run refuses a now later than its start \+ 5 min/,
    ],
    [
      'a demo --now in the future',
      ['demo', '--now', '2999-01-01T00:00:00Z'],
      /^jobarchive demo: invalid --now: 2999-01-01T00:00:00\.000Z is in the future/,
    ],
    [
      '--data-dir with --aws (the folder would be ignored)',
      ['audit', '--aws', '--data-dir', '/tmp/jda-unused'],
      /^jobarchive audit: invalid --data-dir: is not used: audit talks to AWS here \(--aws\); drop --data-dir /,
    ],
    [
      'demo against AWS',
      ['demo', '--aws'],
      /^jobarchive demo: invalid --aws: does not apply to demo: .*embedded stack only /,
    ],
  ];

  it.each(cases)('%s', async (_name, argv, pattern) => {
    const { code, io } = await usage(argv);
    expect(code).toBe(2);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toHaveLength(1);
    expect(io.stderr[0]).toMatch(pattern);
    expect(io.stderr[0]).not.toContain('\n');
    expect(io.stderr[0]).toMatch(/\(see 'jobarchive( \w+)? --help'\)$/);
  });
});

it('--data-dir while the `up` exports are set is one line naming them, exit 2, before any stack starts', async () => {
  const saved = { ...process.env };
  process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:9';
  process.env.AWS_ENDPOINT_URL_DYNAMODB = 'http://127.0.0.1:9';
  resetConfig();
  try {
    const { code, io } = await usage(['audit', '--data-dir', '/tmp/jda-unused']);
    expect(code).toBe(2);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toEqual([
      expect.stringMatching(
        /^jobarchive audit: invalid --data-dir: is not used: AWS_ENDPOINT_URL_\* are set \(http:\/\/127\.0\.0\.1:9 \/ http:\/\/127\.0\.0\.1:9, e\.g\. `jobarchive up`'s exports\), so audit talks to them; unset them to use the embedded stack in \/tmp\/jda-unused, or drop --data-dir /,
      ),
    ]);
  } finally {
    process.env = saved;
    resetConfig();
  }
});

describe('help', () => {
  it('prints a command help on stdout with exit 0, listing its own and the common flags', async () => {
    const io = memoryOutput();
    expect(await runCli(['seed', '--help'], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toMatch(/^Usage: jobarchive seed \[options\]/);
    for (const flag of [
      '--shops N',
      '--jobs N',
      '--months N',
      '--seed N',
      '--now ISO',
      '--json',
      '--data-dir DIR',
      '--aws',
    ]) {
      expect(text).toContain(flag);
    }
    expect(io.stderr).toEqual([]);
  });

  it('lists only the common flags that apply: none of the stack flags for cost, no --aws for up', async () => {
    const help = async (cmd: string): Promise<string> => {
      const io = memoryOutput();
      expect(await runCli([cmd, '--help'], io)).toBe(0);
      return io.stdout.join('\n');
    };
    const cost = await help('cost');
    for (const flag of ['--aws', '--table', '--bucket', '--data-dir']) expect(cost).not.toContain(flag);
    expect(cost).toContain('--json');
    const up = await help('up');
    expect(up).not.toContain('--aws');
    for (const flag of ['--data-dir DIR', '--table NAME', '--bucket NAME', '--json'])
      expect(up).toContain(flag);
  });

  it('--help wins over bad values (nothing else is validated)', async () => {
    const io = memoryOutput();
    expect(await runCli(['run', '--help', '--now', 'soon'], io)).toBe(0);
    expect(io.stdout.join('\n')).toContain('--state-machine-arn ARN');
  });

  it('general help lists every command', async () => {
    const io = memoryOutput();
    expect(await runCli(['--help'], io)).toBe(0);
    const text = io.stdout.join('\n');
    for (const c of ['seed', 'run', 'lookup', 'audit', 'demo'])
      expect(text).toMatch(new RegExp(`^  ${c} `, 'm'));
  });

  it('general help lists every exit code, pending erasure and interrupts included', async () => {
    const io = memoryOutput();
    expect(await runCli(['--help'], io)).toBe(0);
    const text = io.stdout.join(' ').replace(/\s+/g, ' ');
    for (const code of [
      '0 ok',
      '1 failed',
      '2 bad arguments',
      '3 done with quarantined jobs',
      '4 findings',
      '5 erasure pending',
      '130/143 interrupted',
    ])
      expect(text).toContain(code);
  });
});

describe('values', () => {
  it('parses seed options with defaults and explicit values', () => {
    expect(parseSeedOptions(parseFlags(seedSpec, []))).toEqual({
      shops: 5,
      jobsPerShop: 10,
      months: 3,
      seed: 1,
      concurrency: 8,
      rowStyle: 'library',
      json: false,
    });
    expect(parseSeedOptions(parseFlags(seedSpec, ['--row-style', 'python'])).rowStyle).toBe('python');
    expect(() => parseSeedOptions(parseFlags(seedSpec, ['--row-style', 'boto']))).toThrow(
      'invalid --row-style: expected one of library, python, pre-migration, got "boto"',
    );
    const o = parseSeedOptions(
      parseFlags(seedSpec, [
        '--shops',
        '2',
        '--jobs=4',
        '--months',
        '6',
        '--seed',
        '99',
        '--now',
        '2026-03-01',
        '--json',
      ]),
    );
    expect(o).toMatchObject({ shops: 2, jobsPerShop: 4, months: 6, seed: 99, json: true });
    expect(o.now?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('a repeated switch means the same thing twice and passes; a --now within 5 min of now passes', () => {
    expect(parseFlags(runSpec, ['--dry-run', '--dry-run'])['dry-run']).toBe(true);
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(parseRunOptions(parseFlags(runSpec, ['--now', soon])).input.now).toBe(soon);
  });

  it('builds the run input from the flags given, and only those', () => {
    expect(parseRunOptions(parseFlags(runSpec, [])).input).toEqual({});
    expect(
      parseRunOptions(
        parseFlags(runSpec, [
          '--older-than-days',
          '30',
          '--grace-hours',
          '0.5',
          '--now',
          '2026-04-01T00:00:00+02:00',
          '--dry-run',
        ]),
      ).input,
    ).toEqual({ olderThanDays: 30, graceHours: 0.5, now: '2026-03-31T22:00:00.000Z', dryRun: true });
  });

  it('accepts ISO dates and date-times with a zone, rejects the rest', () => {
    expect(parseIsoDate('--now', '2026-03-01').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(parseIsoDate('--now', '2026-03-01T12:30Z').toISOString()).toBe('2026-03-01T12:30:00.000Z');
    expect(parseIsoDate('--now', '2026-03-01T12:30:00.123-05:00').toISOString()).toBe(
      '2026-03-01T17:30:00.123Z',
    );
    for (const bad of [
      '2026-3-1',
      '2026-13-01',
      '2026-02-29T10:00Z',
      '2026-04-31',
      '2026-03-01T24:30Z',
      '2026-03-01T12:00',
      '1712345678',
      '',
    ]) {
      expect(() => parseIsoDate('--now', bad)).toThrow(InvalidInputError);
    }
  });

  it('with --aws, a missing table or bucket is a usage error naming the setting', () => {
    expect(() => contextFromConfig(parseConfig({}), {}, 'AWS')).toThrow(/invalid --table: .*ECOM_JOBS_TABLE/);
    expect(() => contextFromConfig(parseConfig({ ECOM_JOBS_TABLE: 't' }), {}, 'AWS')).toThrow(
      /invalid --bucket: .*ECOM_JOB_DETAILS_BUCKET/,
    );
  });
});
