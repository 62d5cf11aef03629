import { gunzipSync } from 'node:zlib';
import { planBatchesKey, plannedJobsKey } from '../../shared/archive/format';
import { type PageGroup, plannedJob } from '../../shared/archive/steps/plan/plan-rows';
import { BATCH_HOT_BYTES_MAX, layoutPlanFiles } from '../../shared/archive/steps/run-files/plan-files';
import type { PlannedJob } from '../../shared/archive/steps/types';

const job = (id: string, month: string): PlannedJob =>
  plannedJob(id, 'COMPLETED', `${month}-05T00:00:00.000Z`);
const group = (shopId: string, n: number, month = '2026-01'): PageGroup => ({
  shopId,
  month,
  jobs: Array.from({ length: n }, (_, i) => job(`${shopId}-j${i}`, month)),
});

describe('plan page files', () => {
  test("each group's jobs are one byte range of the jobs file, one gzip member of one JSON line per job", () => {
    const files = layoutPlanFiles('run-1', 2, [group('a', 2), group('b', 3)], {
      batchGroups: 50,
      batchJobs: 100,
    });
    expect(files.jobsKey).toBe(plannedJobsKey('run-1', 2));
    expect(files.batchesKey).toBe(planBatchesKey('run-1', 2));
    const groups = files.batches.flatMap((b) => b.groups);
    for (const g of groups) {
      const [start, end] = g.jobsRange;
      const lines = gunzipSync(files.jobsBody.subarray(start, end)).toString('utf8').split('\n').slice(0, -1);
      expect(lines.map((l) => (JSON.parse(l) as PlannedJob).job_id)).toEqual(
        Array.from({ length: g.jobCount }, (_, i) => `${g.shopId}-j${i}`),
      );
      expect(g.jobsKey).toBe(files.jobsKey);
    }
    expect(groups.at(-1)?.jobsRange[1]).toBe(files.jobsBody.length);
    // The whole file is gzip members one after the other: `gzip -dc` reads every line.
    expect(gunzipSync(files.jobsBody).toString('utf8').split('\n')).toHaveLength(6);
  });

  test('batches hold at most batchGroups groups and batchJobs jobs; a larger group is a batch alone', () => {
    const groups = [
      group('a', 1),
      group('b', 1),
      group('c', 1),
      group('big', 9),
      group('d', 2),
      group('e', 2),
    ];
    const { batches, batchesBody } = layoutPlanFiles('r', 0, groups, { batchGroups: 2, batchJobs: 4 });
    expect(batches.map((b) => b.groups.map((g) => g.shopId))).toEqual([
      ['a', 'b'],
      ['c'],
      ['big'],
      ['d', 'e'],
    ]);
    expect(batches.map((b) => b.batch)).toEqual([0, 1, 2, 3]);
    // The ItemReader's input: one batch per line.
    expect(
      batchesBody
        .toString('utf8')
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l)),
    ).toEqual(batches);
  });

  test('a batch holds at most BATCH_HOT_BYTES_MAX of listed hot objects (its time); a larger group is a batch alone', () => {
    const MiB = 1024 ** 2;
    // One job with one listed object of `mib` MiB (null: not listed, ArchiveBatch lists it: 0 here).
    const heavy = (shopId: string, mib: number | null): PageGroup => {
      const g = group(shopId, 1);
      const [j] = g.jobs;
      if (mib === null || j === undefined) return g;
      const objects = [{ key: `${shopId}/o`, size: mib * MiB, etag: null, lastModified: null }];
      return { ...g, jobs: [{ ...j, objects }] };
    };
    const groups = [heavy('a', 600), heavy('b', 500), heavy('c', 100), heavy('big', 2048), heavy('d', null)];
    const { batches } = layoutPlanFiles('r', 0, groups, { batchGroups: 50, batchJobs: 100 });
    expect(BATCH_HOT_BYTES_MAX).toBe(1024 * MiB);
    expect(batches.map((b) => b.groups.map((g) => g.shopId))).toEqual([['a'], ['b', 'c'], ['big'], ['d']]);
    // Jobs and groups alone never split these: the bytes do.
    expect(
      layoutPlanFiles(
        'r',
        0,
        groups.map((g) => heavy(g.shopId, null)),
        { batchGroups: 50, batchJobs: 100 },
      ).batches,
    ).toHaveLength(1);
  });

  test("each month's shared staging is collected by one batch: the first with a group of it that may pack", () => {
    const groups = [
      group('own', 3, '2026-01'),
      group('a', 1, '2026-01'),
      group('b', 1, '2026-02'),
      group('c', 1, '2026-01'),
    ];
    const pack = (g: PageGroup) => (g.shopId === 'own' ? undefined : g.shopId === 'c' ? 'if-packed' : true);
    const { batches, batchesBody } = layoutPlanFiles('r', 0, groups, { batchGroups: 1, batchJobs: 10 }, pack);
    // Own and if-packed groups first, then the packed ones by month.
    expect(batches.map((b) => [b.groups.map((g) => g.shopId), b.collectShared])).toEqual([
      [['own'], undefined],
      [['c'], ['2026-01']],
      [['a'], undefined],
      [['b'], ['2026-02']],
    ]);
    expect(batchesBody.toString('utf8').split('\n')[1]).toContain('"collectShared":["2026-01"]');
    // Without packing no batch collects anything.
    expect(
      layoutPlanFiles('r', 0, groups, { batchGroups: 1, batchJobs: 10 }).batches.map((b) => b.collectShared),
    ).toEqual([undefined, undefined, undefined, undefined]);
  });

  test('an empty page has no batches and empty files', () => {
    const files = layoutPlanFiles('r', 0, [], { batchGroups: 2, batchJobs: 4 });
    expect(files.batches).toEqual([]);
    expect(files.jobsBody.length).toBe(0);
  });
});
