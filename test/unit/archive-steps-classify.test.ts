import { commitPart, emptyMonthIndex, type IndexedJob } from '../../shared/archive/format';
import {
  archivedByRun,
  archivedMeta,
  assembleJob,
  changedSincePlan,
  classifyPlanned,
  counterProblem,
  withRowAttributes,
} from '../../shared/archive/steps/archive/classify';
import type { JobRowSnapshot } from '../../shared/archive/steps/archive/job-rows';
import type { SettledArchival } from '../../shared/archive/steps/archive/settled-archivals';
import type { PlannedJob } from '../../shared/archive/steps/types';
import { rawJsonNumber } from '../../shared/details/json';

const planned = (over: Partial<PlannedJob> = {}): PlannedJob => ({
  job_id: 'j1',
  status: 'FAILED',
  completed_at: '2026-01-10T00:00:00.000Z',
  created_at: '2026-01-09T00:00:00.000Z',
  started_at: null,
  job_type: 'full_sync',
  platform: 'shopify',
  error_message: 'boom',
  retry_count: 1,
  is_internal: null,
  initiator_user_id: null,
  estimated_time_minutes: null,
  ttl: null,
  ...over,
});

const entry = (part: string, completedAt: string): IndexedJob => ({
  part,
  offset: 0,
  length: 1,
  sha256: 's',
  completed_at: completedAt,
  committed_at: '2026-02-01T00:00:00.000Z',
  platform_data: null,
  sources: [],
  deleted_at: null,
});

const indexWith = (...archivals: Array<[string, string]>) => {
  let index = emptyMonthIndex('s', '2026-01', 't');
  for (const [part, completedAt] of archivals) {
    index = commitPart(
      index,
      {
        name: part,
        key: part,
        size: 1,
        etag: 'e',
        sha256: 's',
        run_id: 'r',
        committed_at: 't',
        job_count: 1,
        bytes_in: 0,
      },
      { j1: entry(part, completedAt) },
      't',
    );
  }
  return index;
};

const row = (over: Partial<JobRowSnapshot> = {}): JobRowSnapshot => ({
  job_status: 'FAILED',
  completed_at: '2026-01-10T00:00:00.000Z',
  created_at: '2026-01-09T00:00:00.000Z',
  started_at: '2026-01-09T00:00:05.000Z',
  total_items: 10,
  processed_items: 7,
  failed_items: 3,
  skipped_items: 0,
  conflict_items: 0,
  item: { pk: 'SHOP#shop-a', sk: 'JOB#job1', job_status: 'FAILED', total_items: 10 },
  ...over,
});

describe('classifyPlanned', () => {
  test('not in the index → archive', () => expect(classifyPlanned(planned(), indexWith())).toBe('archive'));
  test('latest entry has the planned completed_at → skip (committed, sources unchanged)', () =>
    expect(classifyPlanned(planned(), indexWith(['p1', '2026-01-10T00:00:00.000Z']))).toBe('skip'));
  test('retried since (another completed_at) → archive again', () =>
    expect(
      classifyPlanned(
        planned({ completed_at: '2026-01-20T00:00:00.000Z' }),
        indexWith(['p1', '2026-01-10T00:00:00.000Z']),
      ),
    ).toBe('archive'));
  test('only the LATEST entry counts', () =>
    expect(
      classifyPlanned(
        planned(),
        indexWith(['p1', '2026-01-10T00:00:00.000Z'], ['p2', '2026-01-20T00:00:00.000Z']),
      ),
    ).toBe('archive'));
});

describe('classifyPlanned: a job whose part settled (no entry; its record read)', () => {
  const at = '2026-01-10T00:00:00.000Z';
  const settled = (a: SettledArchival) => new Map([['j1', a]]);
  const record = (completed: string, run = 'r'): SettledArchival => ({
    kind: 'record',
    part: 'p1',
    run_id: run,
    completed_at: completed,
  });
  test('its record holds the planned completion, nothing hot → skip', () =>
    expect(classifyPlanned(planned(), indexWith(), new Map(), settled(record(at)))).toBe('skip'));
  test('its record holds the planned completion, objects hot again → rearchive', () =>
    expect(classifyPlanned(planned(), indexWith(), new Map([['j1', [{}]]]), settled(record(at)))).toBe(
      'rearchive',
    ));
  test('its record holds another completion (retried since) → archive', () =>
    expect(
      classifyPlanned(planned(), indexWith(), new Map(), settled(record('2026-01-05T00:00:00.000Z'))),
    ).toBe('archive'));
  test('the part is in a restore class (unread) → archive, never skip on its directory alone', () =>
    expect(classifyPlanned(planned(), indexWith(), new Map(), settled({ kind: 'unread', part: 'p1' }))).toBe(
      'archive',
    ));
  test('an entry, when the job has one, decides (settled records are only for jobs without)', () =>
    expect(
      classifyPlanned(
        planned({ completed_at: '2026-01-20T00:00:00.000Z' }),
        indexWith(['p2', '2026-01-20T00:00:00.000Z']),
        new Map(),
        settled(record(at)),
      ),
    ).toBe('skip'));
  test('a settled record newer than the latest entry (a part committed after it) decides: retried before the older part’s delete', () => {
    const c2 = '2026-01-20T00:00:00.000Z';
    // p1 holds the older completion's entry (never deleted); p2, committed after it, settled.
    const index = indexWith(['p1', at], ['p2', c2]);
    const p2Settled = { ...index, jobs: { j1: index.jobs.j1?.slice(0, 1) ?? [] } };
    const newer: SettledArchival = { kind: 'record', part: 'p2', run_id: 'r2', completed_at: c2 };
    expect(classifyPlanned(planned({ completed_at: c2 }), p2Settled, new Map(), settled(newer))).toBe('skip');
    expect(
      classifyPlanned(planned({ completed_at: c2 }), p2Settled, new Map([['j1', [{}]]]), settled(newer)),
    ).toBe('rearchive');
    expect(archivedByRun(p2Settled, [planned({ completed_at: c2 })], 'r2', settled(newer))).toBe(1);
    // An older settled record than the entry does not decide.
    const older: SettledArchival = { kind: 'record', part: 'p1', run_id: 'r', completed_at: c2 };
    expect(
      classifyPlanned(
        planned({ completed_at: c2 }),
        indexWith(['p1', at], ['p2', at]),
        new Map(),
        settled(older),
      ),
    ).toBe('archive');
  });
  test('archivedByRun counts a settled record of this run, not of another', () => {
    expect(archivedByRun(indexWith(), [planned()], 'r', settled(record(at, 'r')))).toBe(1);
    expect(archivedByRun(indexWith(), [planned()], 'other', settled(record(at, 'r')))).toBe(0);
    expect(archivedByRun(indexWith(), [planned()], 'r', settled({ kind: 'unread', part: 'p1' }))).toBe(0);
  });
});

describe('changedSincePlan', () => {
  test('same status and completion → unchanged', () =>
    expect(changedSincePlan(planned(), row())).toBe(false));
  test('row gone (TTL) → unchanged: archived from the plan', () =>
    expect(changedSincePlan(planned(), undefined)).toBe(false));
  test('running again → changed', () =>
    expect(changedSincePlan(planned(), row({ job_status: 'IN_PROGRESS', completed_at: null }))).toBe(true));
  test('completed again → changed', () =>
    expect(changedSincePlan(planned(), row({ completed_at: '2026-01-11T00:00:00.000Z' }))).toBe(true));
});

describe('archivedMeta', () => {
  test('planned attributes plus the row counters', () => {
    expect(archivedMeta(planned(), row())).toEqual({
      status: 'FAILED',
      created_at: '2026-01-09T00:00:00.000Z',
      started_at: '2026-01-09T00:00:05.000Z',
      completed_at: '2026-01-10T00:00:00.000Z',
      job_type: 'full_sync',
      platform: 'shopify',
      total_items: 10,
      processed_items: 7,
      failed_items: 3,
      skipped_items: 0,
      conflict_items: 0,
      retry_count: 1,
      error_message: 'boom',
    });
  });
  test('a gone row gives null counters', () => {
    expect(archivedMeta(planned(), undefined)).toMatchObject({
      total_items: null,
      failed_items: null,
      started_at: null,
    });
  });
});

describe('assembleJob', () => {
  const hot = {
    details: { chunk_ids: ['p0'], failed: { timeout: ['d2', 'd9'] }, skipped: {}, conflict: {} },
    platformData: { indexer: { batch_size: 50 } },
  };

  test('the whole row is kept; completed_chunks as its size', () => {
    const item = {
      pk: 'SHOP#shop-a',
      sk: 'JOB#job1',
      completed_chunks: new Set(['p0', 'p1']),
      retry_attribution: { first_retry_at: '2026-01-09T00:00:00+00:00' },
      some_future_field: 7,
    };
    const r = assembleJob(planned(), row({ item }), hot);
    expect(r).toMatchObject({
      kind: 'ok',
      row: {
        row: {
          pk: 'SHOP#shop-a',
          sk: 'JOB#job1',
          retry_attribution: { first_retry_at: '2026-01-09T00:00:00+00:00' },
          some_future_field: 7,
        },
        reduced: { completed_chunks: 2 },
      },
      inline: [],
      details: hot.details,
      platformData: hot.platformData,
    });
  });

  test('a pre-migration row: inline details first, S3 merged in, inline attributes out of the row', () => {
    const item = {
      pk: 'SHOP#shop-a',
      failed_items_details: { timeout: ['d1', 'd2'] },
      platform_data: { indexer: { batch_size: 10 } },
    };
    const r = assembleJob(planned(), row({ item }), hot);
    if (r.kind !== 'ok') throw new Error(r.reason);
    expect(r.details.failed).toEqual({ timeout: ['d1', 'd2', 'd9'] });
    expect(r.details.chunk_ids).toEqual(['p0']);
    expect(r.platformData).toEqual({ indexer: { batch_size: 10 } });
    expect(r.inline).toEqual(['failed_items_details', 'platform_data']);
    expect(r.row?.row).toEqual({ pk: 'SHOP#shop-a' });
  });

  test('an inline attribute that does not parse quarantines the job, quoting the value', () => {
    const r = assembleJob(planned(), row({ item: { failed_items_details: 'oops' } }), hot);
    expect(r).toEqual({ kind: 'quarantine', reason: expect.stringContaining('row.failed_items_details') });
    expect(r.kind === 'quarantine' && r.reason).toContain('"oops"');
  });

  test('a counter that is not a safe whole number quarantines the job, quoting it; an absent one is null', () => {
    const huge = rawJsonNumber('9223372036854775807');
    const r = assembleJob(planned(), row({ failed_items: null, item: { failed_items: huge } }), hot);
    expect(r).toEqual({
      kind: 'quarantine',
      reason: 'row counter failed_items is 9223372036854775807, not a whole number between 0 and 2^53−1',
    });
    expect(counterProblem({ total_items: -1 })).toContain('total_items is -1');
    expect(counterProblem({ skipped_items: '3' })).toContain('skipped_items is "3"');
    expect(counterProblem({ total_items: 10, failed_items: 0 })).toBeNull();
    expect(assembleJob(planned(), row({ total_items: null, item: {} }), hot)).toMatchObject({
      kind: 'ok',
      meta: { total_items: null },
    });
  });

  test('an expired row: the planned attributes only', () => {
    expect(assembleJob(planned(), undefined, hot)).toMatchObject({ kind: 'ok', row: null, inline: [] });
  });
});

describe('withRowAttributes', () => {
  const bare = planned({
    created_at: null,
    job_type: null,
    platform: null,
    error_message: null,
    retry_count: null,
  });
  it('fills what a job planned from its retry entry lacks from its row, keeping what the plan has', () => {
    const r = row({
      item: {
        job_type: 'delta_sync',
        platform: 'woo',
        retry_count: 2,
        error_message: 'x',
        job_status: 'FAILED',
      },
    });
    expect(withRowAttributes(bare, r)).toEqual({
      ...bare,
      job_type: 'delta_sync',
      platform: 'woo',
      retry_count: 2,
      error_message: 'x',
    });
    expect(withRowAttributes(planned(), r)).toEqual(planned());
  });
  it('without a row (expired) the job is as planned', () => {
    expect(withRowAttributes(bare, undefined)).toBe(bare);
  });
});
