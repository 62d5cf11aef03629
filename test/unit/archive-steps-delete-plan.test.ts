import { commitPart, emptyMonthIndex, type IndexedJob, markDeleted } from '../../shared/archive/format';
import {
  chunks,
  deletedByRun,
  eligibleForDelete,
  matchSources,
  settledByRun,
  settleParts,
  waitingForGrace,
} from '../../shared/archive/steps/delete/delete-plan';
import type { PlannedJob } from '../../shared/archive/steps/types';

const HOUR = 3_600_000;
const committedAt = '2026-02-01T00:00:00.000Z';
const T = Date.parse(committedAt);

const entry = (over: Partial<IndexedJob> = {}): IndexedJob => ({
  part: 'p1',
  offset: 0,
  length: 1,
  sha256: 's',
  completed_at: '2026-01-10T00:00:00.000Z',
  committed_at: committedAt,
  platform_data: null,
  sources: [
    { key: 'job-details/j1/a.json.gz', size: 10, etag: 'e1' },
    { key: 'job-details/j1/platform-data.json', size: 5, etag: 'e2' },
  ],
  deleted_at: null,
  ...over,
});

const part = {
  name: 'p1',
  key: 'k',
  size: 1,
  etag: 'e',
  sha256: 's',
  run_id: 'r',
  committed_at: committedAt,
  job_count: 2,
  bytes_in: 0,
};
const planned = (id: string, completedAt = '2026-01-10T00:00:00.000Z') =>
  ({ job_id: id, completed_at: completedAt }) as PlannedJob;

describe('eligibleForDelete', () => {
  const index = commitPart(emptyMonthIndex('s', '2026-01', 't'), part, { j1: entry(), j2: entry() }, 't');

  test('grace 0: committed at `now` is eligible now', () => {
    expect(eligibleForDelete(index, [planned('j1')], T, 0).map((e) => e.jobId)).toEqual(['j1']);
  });
  test('grace 1 h: not before an hour after the commit, eligible at exactly one hour', () => {
    expect(eligibleForDelete(index, [planned('j1')], T + HOUR - 1, 1)).toEqual([]);
    expect(eligibleForDelete(index, [planned('j1')], T + HOUR, 1)).toHaveLength(1);
  });
  test('only planned jobs, sorted', () => {
    expect(eligibleForDelete(index, [planned('j2'), planned('j1')], T, 0).map((e) => e.jobId)).toEqual([
      'j1',
      'j2',
    ]);
    expect(eligibleForDelete(index, [planned('j3')], T, 0)).toEqual([]);
  });
  test('not when already deleted', () => {
    const done = markDeleted(index, [{ jobId: 'j1', part: 'p1' }], 't');
    expect(eligibleForDelete(done, [planned('j1')], T, 0)).toEqual([]);
  });
  test('not when the plan saw another completion (retried: the entry is an older archival)', () => {
    expect(eligibleForDelete(index, [planned('j1', '2026-01-20T00:00:00.000Z')], T, 0)).toEqual([]);
  });
});

describe('matchSources', () => {
  test('deletes only key + size + ETag matches; everything else is kept', () => {
    const listed = [
      { key: 'job-details/j1/a.json.gz', size: 10, etag: '"e1"' }, // match (quoted as S3 lists it)
      { key: 'job-details/j1/platform-data.json', size: 5, etag: '"changed"' }, // rewritten since
      { key: 'job-details/j1/new.json.gz', size: 7, etag: '"e9"' }, // written since
    ];
    expect(matchSources(entry(), listed)).toEqual({
      remove: [{ key: 'job-details/j1/a.json.gz', etag: 'e1' }],
      kept: 2,
      changed: 1, // the rewritten platform-data.json: named by the manifest, not deleted
    });
  });
  test('a same-key object with another size is kept', () => {
    expect(matchSources(entry(), [{ key: 'job-details/j1/a.json.gz', size: 11, etag: '"e1"' }])).toEqual({
      remove: [],
      kept: 1,
      changed: 1,
    });
  });
  test('an object without an ETag is never matched', () => {
    expect(
      matchSources(entry({ sources: [{ key: 'k', size: 1, etag: '' }] }), [
        { key: 'k', size: 1, etag: undefined },
      ]).remove,
    ).toEqual([]);
  });
});

describe('deletedByRun', () => {
  test('counts the entries this run marked, with the objects recorded then, whichever attempt marked them', () => {
    const index = commitPart(emptyMonthIndex('s', '2026-01', 't'), part, { j1: entry() }, committedAt);
    const marked = markDeleted(
      index,
      [{ jobId: 'j1', part: entry().part, objects: 3 }],
      '2026-02-01T00:00:00.000Z',
      'run-a',
    );
    expect(deletedByRun(marked, [planned('j1')], 'run-a')).toEqual({ jobs: 1, objects: 3 });
    expect(deletedByRun(marked, [planned('j1')], 'run-b')).toEqual({ jobs: 0, objects: 0 });
    // Marked once: a later mark by another run changes nothing.
    const again = markDeleted(marked, [{ jobId: 'j1', part: entry().part, objects: 9 }], 'later', 'run-b');
    expect(deletedByRun(again, [planned('j1')], 'run-a')).toEqual({ jobs: 1, objects: 3 });
    expect(deletedByRun(again, [planned('j1', '2026-01-20T00:00:00.000Z')], 'run-a').jobs).toBe(0);
  });
});

describe('settleParts / settledByRun (the delete settles the parts it marked)', () => {
  const two = commitPart(
    emptyMonthIndex('s', '2026-01', 't'),
    part,
    { j1: entry({ offset: 0, length: 5 }), j2: entry({ offset: 5, length: 5 }) },
    committedAt,
  );
  test('a part whose every entry is deleted settles: its entries leave the index, its jobs count by job_count', () => {
    const marked = markDeleted(
      two,
      [
        { jobId: 'j1', part: 'p1', objects: 2 },
        { jobId: 'j2', part: 'p1', objects: 2 },
      ],
      '2026-02-02T00:00:00.000Z',
      'run-a',
    );
    const settled = settleParts(marked, new Set(['p1']));
    expect(settled.jobs).toEqual({});
    expect(settled.parts[0]?.settled?.dir).toEqual(['j1', 'j2']);
    expect(settled.parts[0]?.settled?.deleted_by).toBe('run-a');
    // A retried delete of the same run finds no entry: the settled part counts its jobs, named (its
    // objects went in the earlier attempt, the counts with its entries).
    expect(deletedByRun(settled, [planned('j1'), planned('j2')], 'run-a')).toEqual({ jobs: 0, objects: 0 });
    expect(settledByRun(settled, 'run-a')).toEqual({ jobs: 2, parts: 1 });
    expect(settledByRun(settled, 'run-b')).toEqual({ jobs: 0, parts: 0 });
    // Before it settled, the entries count (what this attempt reports).
    expect(settledByRun(marked, 'run-a')).toEqual({ jobs: 0, parts: 0 });
    // A settled part's jobs are never eligible again, nor waiting: delete only sees unsettled parts.
    const asOf = T + HOUR;
    expect(eligibleForDelete(settled, [planned('j1'), planned('j2')], asOf, 0)).toEqual([]);
    expect(waitingForGrace(settled, [planned('j1'), planned('j2')], asOf, 0)).toBe(0);
  });
  test('a part with an entry left undeleted keeps its entries (not settled)', () => {
    const marked = markDeleted(
      two,
      [{ jobId: 'j1', part: 'p1', objects: 2 }],
      '2026-02-02T00:00:00.000Z',
      'run-a',
    );
    const after = settleParts(marked, new Set(['p1']));
    expect(after).toBe(marked);
    expect(after.parts[0]?.settled).toBeUndefined();
  });
});

test('chunks of at most 1,000 (DeleteObjects limit)', () => {
  const sizes = chunks(Array.from({ length: 2501 }, (_, i) => i)).map((c) => c.length);
  expect(sizes).toEqual([1000, 1000, 501]);
  expect(chunks([])).toEqual([]);
});
