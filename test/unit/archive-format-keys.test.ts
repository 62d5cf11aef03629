import {
  COLD_PREFIX,
  findingsPrefix,
  groupFindingsKey,
  groupPrefix,
  HOT_PREFIX,
  INDEX_PREFIX,
  mapResultsPrefix,
  monthIndexKey,
  newPartName,
  pageResultsKey,
  parseMonthIndexKey,
  parsePartKey,
  partKey,
  pendingKey,
  pendingPrefix,
  planBatchesKey,
  planFindingsKey,
  plannedJobsKey,
  RUNS_PREFIX,
  reportKey,
  runPrefix,
  shopIndexPrefix,
  validatePartName,
  validateRunId,
} from '../../shared/archive/format';
import { InvalidIdError } from '../../shared/errors';

const SHOP = 'acme-store.myshopify.com';
const NAME = 'part-20260315T030000Z-k3jq2m7z.jsonl.gz';

describe('archive key layout', () => {
  it('part names sort by creation time and carry a random suffix', () => {
    expect(newPartName(new Date('2026-03-15T03:00:00.987Z'), () => 'k3jq2m7z')).toBe(NAME);
    const a = newPartName(new Date('2026-03-15T03:00:00Z'));
    const b = newPartName(new Date('2026-03-15T03:00:00Z'));
    expect(validatePartName(a)).toBe(a);
    expect(a).not.toBe(b);
    expect(
      newPartName(new Date('2026-03-15T03:00:00Z'), () => 'zzzzzzzz') <
        newPartName(new Date('2026-03-16T00:00:00Z'), () => 'aaaaaaaa'),
    ).toBe(true);
  });

  it('keys of the docs/archive-format.md layout', () => {
    expect(groupPrefix(SHOP, '2026-03')).toBe(`job-details-cold/${SHOP}/2026-03/`);
    expect(partKey(SHOP, '2026-03', NAME)).toBe(`job-details-cold/${SHOP}/2026-03/${NAME}`);
    expect(monthIndexKey(SHOP, '2026-03')).toBe(`job-details-index/${SHOP}/2026-03/index.json`);
    expect(shopIndexPrefix(SHOP)).toBe(`job-details-index/${SHOP}/`);
    expect(pendingPrefix(SHOP, '2026-03')).toBe(`job-details-index/${SHOP}/2026-03/pending/`);
    expect(pendingKey(SHOP, '2026-03', NAME)).toBe(`job-details-index/${SHOP}/2026-03/pending/${NAME}.json`);
    expect(runPrefix('run-1')).toBe('job-details-runs/run-1/');
    expect(plannedJobsKey('run-1', 0)).toBe('job-details-runs/run-1/plan/0/jobs.jsonl.gz');
    expect(planBatchesKey('run-1', 0)).toBe('job-details-runs/run-1/plan/0/batches.jsonl');
    expect(mapResultsPrefix('run-1', 3)).toBe('job-details-runs/run-1/results/3');
    expect(pageResultsKey('run-1', 2)).toBe('job-details-runs/run-1/pages/2.json.gz');
    expect(reportKey('run-1')).toBe('job-details-runs/run-1/report.json');
  });

  it('findings: one document per page × group × kind, plan findings one level up, all under the run', () => {
    expect(findingsPrefix('run-1')).toBe('job-details-runs/run-1/findings/');
    expect(groupFindingsKey('run-1', 3, SHOP, '2026-03', 'quarantined')).toBe(
      `job-details-runs/run-1/findings/3/${SHOP}/2026-03/quarantined.json`,
    );
    expect(groupFindingsKey('run-1', 3, SHOP, '2026-03', 'delete-errors')).toBe(
      `job-details-runs/run-1/findings/3/${SHOP}/2026-03/delete-errors.json`,
    );
    expect(planFindingsKey('run-1', 3)).toBe('job-details-runs/run-1/findings/3/plan-quarantined.json');
    // A shop id can never make a group's document collide with a page's plan findings.
    expect(groupFindingsKey('run-1', 3, 'plan-quarantined.json', '2026-03', 'quarantined')).not.toBe(
      planFindingsKey('run-1', 3),
    );
    expect(() => groupFindingsKey('run-1', 0, '../x', '2026-03', 'quarantined')).toThrow(InvalidIdError);
    expect(() => groupFindingsKey('../r', 0, SHOP, '2026-03', 'quarantined')).toThrow(InvalidIdError);
  });

  it('parts, indexes, hot objects and runs never share a prefix (lifecycle rules match prefixes)', () => {
    const prefixes = [HOT_PREFIX, COLD_PREFIX, INDEX_PREFIX, RUNS_PREFIX];
    for (const a of prefixes) for (const b of prefixes) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });

  it.each([
    ['shop', () => partKey('../x', '2026-03', NAME)],
    ['month', () => monthIndexKey(SHOP, '2026-3')],
    ['month 13', () => groupPrefix(SHOP, '2026-13')],
    ['part name', () => partKey(SHOP, '2026-03', 'part-x.jsonl.gz')],
    ['part name with a slash', () => pendingKey(SHOP, '2026-03', `a/${NAME}`)],
    ['run id', () => runPrefix('../r')],
    ['empty run id', () => validateRunId('')],
    ['run id in a plan key', () => plannedJobsKey('../r', 0)],
  ])('bad %s → InvalidIdError', (_name, make) => {
    expect(make).toThrow(InvalidIdError);
  });

  it('parseMonthIndexKey: index keys only', () => {
    expect(parseMonthIndexKey(monthIndexKey(SHOP, '2026-03'))).toEqual({ shopId: SHOP, month: '2026-03' });
    expect(parseMonthIndexKey(pendingKey(SHOP, '2026-03', NAME))).toBeNull();
    expect(parseMonthIndexKey(partKey(SHOP, '2026-03', NAME))).toBeNull();
    expect(parseMonthIndexKey(`job-details-index/${SHOP}/2026-03/x/index.json`)).toBeNull();
    expect(parseMonthIndexKey(`job-details-index/${SHOP}/2026-03/index.json.bak`)).toBeNull();
  });

  it('parsePartKey: part keys only', () => {
    expect(parsePartKey(partKey(SHOP, '2026-03', NAME))).toEqual({
      shopId: SHOP,
      month: '2026-03',
      partName: NAME,
    });
    expect(parsePartKey(`job-details-cold/${SHOP}/2026-03/other.jsonl.gz`)).toBeNull();
    expect(parsePartKey(`job-details-cold/${SHOP}/2026-03/sub/${NAME}`)).toBeNull();
    expect(parsePartKey(monthIndexKey(SHOP, '2026-03'))).toBeNull();
  });
});
