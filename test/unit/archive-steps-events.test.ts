import { plannedJobsKey } from '../../shared/archive/format';
import {
  parseBatchEvent,
  parsePlanEvent,
  parseReportEvent,
  parseScan,
  parseTallyEvent,
} from '../../shared/archive/steps/events';
import { buildRun } from '../../shared/archive/steps/run-context';
import { zeroTotals } from '../../shared/archive/steps/run-totals';
import type { ScanState } from '../../shared/archive/steps/types';
import { stagedKeys } from '../../shared/archive/steps/verify/verify-part';
import { InvalidInputError } from '../../shared/errors';

const run = buildRun({}, 'exec-1', '2026-03-10T04:00:00Z', {
  olderThanDays: 30,
  graceHours: 1,
  wholeMonths: false,
});
const group = {
  shopId: 'shop-a',
  month: '2026-01',
  jobsKey: plannedJobsKey('exec-1', 0),
  jobsRange: [0, 120] as [number, number],
  jobCount: 2,
};
const summary = {
  archived: 2,
  skipped: 0,
  quarantinedCount: 0,
  bytesIn: 10,
  bytesOut: 5,
  partName: 'part-20260310T040000Z-abcdefgh.jsonl.gz',
  requests: { s3: 1, dynamodb: 1 },
};
const archive = {
  partKey: 'job-details-cold/shop-a/2026-01/part-20260310T040000Z-abcdefgh.jsonl.gz',
  partName: 'part-20260310T040000Z-abcdefgh.jsonl.gz',
  pendingKey: 'job-details-index/shop-a/2026-01/pending/part-20260310T040000Z-abcdefgh.jsonl.gz.json',
  summary,
};
const _del = {
  objectsDeleted: 4,
  objectsKept: 0,
  deleteErrorCount: 0,
  jobsCompleted: 2,
  requests: { s3: 3, dynamodb: 0 },
};
const state = { run, page: 0, cursor: 'abc', totals: zeroTotals() };

const fieldOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidInputError) return err.field;
    throw err;
  }
  throw new Error('expected an InvalidInputError');
};

describe('Plan event', () => {
  test('the first call carries the execution input', () => {
    expect(
      parsePlanEvent({ state: { dryRun: true }, execution: 'e', startTime: '2026-03-10T04:00:00Z' }),
    ).toEqual({
      kind: 'first',
      input: { dryRun: true },
      execution: 'e',
      startTime: '2026-03-10T04:00:00Z',
    });
  });
  test('later calls carry the page state (extra state like `groups` is ignored)', () => {
    const p = parsePlanEvent({
      state: { ...state, groups: [] },
      execution: 'exec-1',
      startTime: '2026-03-10T04:00:00Z',
    });
    expect(p).toEqual({ kind: 'next', state });
  });
  test('a page state of another execution is refused: an input cannot choose its run id, now or cutoff', () => {
    // An execution input shaped like a page state (a copied state, or one with a future `now`) would
    // otherwise skip buildRun's checks: unknown fields, now ≤ start + 5 min, run id = execution.
    const future = {
      ...state,
      run: { ...run, now: '2030-01-01T00:00:00.000Z', cutoff: '2030-01-01T00:00:00.000Z', graceHours: 0 },
    };
    const start = '2026-03-11T05:00:00Z';
    expect(fieldOf(() => parsePlanEvent({ state, execution: 'exec-2', startTime: start }))).toBe('state.run');
    expect(fieldOf(() => parsePlanEvent({ state: future, execution: 'exec-1', startTime: start }))).toBe(
      'state.run',
    );
  });
  test('a later call without a cursor is a wiring error', () => {
    expect(
      fieldOf(() => parsePlanEvent({ state: { ...state, cursor: null }, execution: 'e', startTime: 't' })),
    ).toBe('state.cursor');
  });
  test('a typo in the execution input is rejected, naming it', () => {
    expect(fieldOf(() => parsePlanEvent({ state: { dry_run: true }, execution: 'e', startTime: 't' }))).toBe(
      'state.dry_run',
    );
  });
});

describe('the groups of a batch event', () => {
  const of = (g: unknown) => ({ run, batch: { page: 0, batch: 0, groups: [g] } });
  test('a good group parses', () => expect(parseBatchEvent(of(group)).batch.groups).toEqual([group]));
  test.each([
    ['shopId', { ...group, shopId: '../x' }],
    ['month', { ...group, month: '2026-13' }],
    ['jobCount', { ...group, jobCount: -1 }],
    ['jobsKey', { ...group, jobsKey: plannedJobsKey('other-run', 0) }],
    ['jobsKey', { ...group, jobsKey: 'job-details-runs/exec-1/plan/0/../../x/jobs.jsonl.gz' }],
    ['jobsRange', { ...group, jobsRange: [5, 2] }],
    ['jobsRange', { ...group, jobsRange: [0] }],
    ['jobsKey', { ...group, jobsKey: 'job-details/x/secret.json' }],
    ['jobsKey', { ...group, jobsKey: 'job-details-runs/exec-1/plan/0/jobs.jsonl' }],
  ])('rejects a bad %s', (field, g) =>
    expect(fieldOf(() => parseBatchEvent(of(g)))).toBe(`batch.groups[0].${field}`),
  );
  test('the months whose shared staging the batch collects are kept, a bad one named', () => {
    const batch = (collectShared: unknown) => ({
      run,
      batch: { page: 0, batch: 0, groups: [group], collectShared },
    });
    expect(parseBatchEvent(batch(['2026-01'])).batch.collectShared).toEqual(['2026-01']);
    expect(parseBatchEvent(of(group)).batch).not.toHaveProperty('collectShared');
    expect(fieldOf(() => parseBatchEvent(batch(['2026-13'])))).toBe('batch.collectShared[0]');
    expect(fieldOf(() => parseBatchEvent(batch('2026-01')))).toBe('batch.collectShared');
  });
  test('a bad run is named too', () =>
    expect(fieldOf(() => parseBatchEvent({ ...of(group), run: { ...run, dryRun: 1 } }))).toBe('run.dryRun'));
  test('a passed part key must be the one its name derives to', () => {
    expect(stagedKeys({ run, group, archive }).pending).toMatch(/\/pending\/.*\.json$/);
    expect(() =>
      stagedKeys({ run, group, archive: { ...archive, partKey: 'job-details-cold/shop-b/2026-01/x' } }),
    ).toThrow(/archive\.partKey/);
  });
});

describe('batch, Tally and Report events', () => {
  const batch = { page: 0, batch: 0, groups: [group] };
  test('a batch parses; every group is checked', () => {
    expect(parseBatchEvent({ run, batch })).toEqual({ run, batch });
    expect(fieldOf(() => parseBatchEvent({ run, batch: { ...batch, groups: [] } }))).toBe('batch.groups');
    expect(
      fieldOf(() => parseBatchEvent({ run, batch: { ...batch, groups: [{ ...group, month: 'x' }] } })),
    ).toBe('batch.groups[0].month');
  });
  test('Tally takes the page state, its counts and the Map run output', () => {
    const mapRun = {
      MapRunArn: 'arn:aws:states:us-east-1:123456789012:mapRun:m/ProcessBatches:1',
      ResultWriterDetails: { Bucket: 'b', Key: 'job-details-runs/exec-1/results/0/1/manifest.json' },
    };
    const t = parseTallyEvent({ ...state, groups: 1, planQuarantined: 3, resultsPrefix: 'p', mapRun });
    expect(t).toMatchObject({ groups: 1, planQuarantined: 3, mapRun });
    expect(fieldOf(() => parseTallyEvent({ ...state, groups: 1, resultsPrefix: 'p' }))).toBe(
      'planQuarantined',
    );
    expect(
      fieldOf(() =>
        parseTallyEvent({ ...state, groups: 1, planQuarantined: 0, resultsPrefix: 'p', mapRun: {} }),
      ),
    ).toBe('mapRun.ResultWriterDetails');
  });
  test('Report only runs with no cursor left', () => {
    expect(parseReportEvent({ ...state, cursor: null }).page).toBe(0);
    expect(fieldOf(() => parseReportEvent(state))).toBe('cursor');
  });
});

test('a scan state survives the re-parse between pages whole: no field Plan sets is dropped', () => {
  // Every field of ScanState set (the type makes a new one a compile error here until it is added).
  const scan: Required<ScanState> = {
    etag: '"e1"',
    from: {
      cutoff: '2026-02-01T00:00:00.000Z',
      keys: { FAILED: '2026-02-02T00:00:00.000Z' },
      sweptAt: '2026-01-20T00:00:00.000Z',
    },
    next: { FAILED: '2026-03-02T00:00:00.000Z' },
    retried: 2,
    carried: 1,
    sweptAt: '2026-01-20T00:00:00.000Z',
    sweepWithWalk: true,
    orphans: 0,
    lateRows: 2,
    packFrom: '2026-02-01T00:00:00.000Z',
    quietPages: [0, 2],
    erasure: {
      overdueCount: 1,
      overdue: [
        {
          id: 'r1',
          kind: 'forget-shop',
          shopId: 'shop-a',
          receivedAt: '2026-01-01T00:00:00.000Z',
          state: 'pending',
          ageDays: 68,
        },
      ],
      pendingRedactions: 3,
    },
  };
  expect(parseScan(JSON.parse(JSON.stringify(scan)), 'scan')).toEqual(scan);
  expect(() => parseScan({ ...scan, sweepWithWalk: false }, 'scan')).toThrow(InvalidInputError);
});
