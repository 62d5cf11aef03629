import {
  applyCommit,
  emptyMonthIndex,
  entriesOf,
  type IndexedJob,
  type VerifiedPart,
} from '../../shared/archive/format';

type Entry = Omit<IndexedJob, 'committed_at' | 'deleted_at'>;
const e = (part: string, completedAt: string): Entry => ({
  part,
  offset: 0,
  length: 1,
  sha256: 's',
  completed_at: completedAt,
  platform_data: null,
  sources: [],
});
const verified = (name: string, jobs: Record<string, Entry>): VerifiedPart => ({
  part: {
    name,
    key: `k/${name}`,
    size: 1,
    etag: 'e',
    sha256: 's',
    run_id: 'r',
    job_count: Object.keys(jobs).length,
    bytes_in: 0,
  },
  jobs,
});

describe('applyCommit', () => {
  const empty = emptyMonthIndex('s', '2026-01', 't0');

  test('adds the part and one entry per job, stamped committed, not deleted', () => {
    const { index, added } = applyCommit(empty, verified('p1', { a: e('p1', 'c1'), b: e('p1', 'c2') }), 't1');
    expect(added).toBe(2);
    expect(index?.parts.map((p) => [p.name, p.committed_at])).toEqual([['p1', 't1']]);
    expect(index?.jobs.a).toEqual([{ ...e('p1', 'c1'), committed_at: 't1', deleted_at: null }]);
    expect(index?.updated_at).toBe('t1');
  });

  test('idempotent: committing the same part again writes nothing and reports what it added', () => {
    const once = applyCommit(empty, verified('p1', { a: e('p1', 'c1') }), 't1').index;
    if (!once) throw new Error('no index');
    expect(applyCommit(once, verified('p1', { a: e('p1', 'c1') }), 't2')).toEqual({ index: null, added: 1 });
    expect(entriesOf(once, 'p1')).toBe(1);
  });

  test('a job already committed with the same completion (another run) is not added twice', () => {
    const first = applyCommit(empty, verified('p1', { a: e('p1', 'c1') }), 't1').index;
    if (!first) throw new Error('no index');
    const second = applyCommit(first, verified('p2', { a: e('p2', 'c1'), b: e('p2', 'c1') }), 't2');
    expect(second.added).toBe(1);
    expect(second.index?.parts.map((p) => p.name)).toEqual(['p1', 'p2']);
    expect(second.index?.jobs.a).toHaveLength(1);
    expect(second.index?.jobs.b).toHaveLength(1);
  });

  test('a job archived again after a retry (new completion) gets a second entry, the newest last', () => {
    const first = applyCommit(empty, verified('p1', { a: e('p1', 'c1') }), 't1').index;
    if (!first) throw new Error('no index');
    const second = applyCommit(first, verified('p2', { a: e('p2', 'c2') }), 't2').index;
    expect(second?.jobs.a?.map((x) => [x.part, x.completed_at])).toEqual([
      ['p1', 'c1'],
      ['p2', 'c2'],
    ]);
  });
});
