import {
  commitPart,
  emptyMonthIndex,
  type IndexedJob,
  type MonthIndex,
  monthIndexKey,
} from '../../shared/archive/format';
import { CorruptObjectError } from '../../shared/errors';
import {
  type ArchiveEntry,
  entriesFromIndex,
  hotPlan,
  latestWithPlatformData,
  newestIndexMonths,
  orderEntries,
} from '../../shared/reader';
import { buildPart, details, indexEntries } from '../support/archive-fixture';

const SHOP = 'acme.myshopify.com';
const MONTH = '2026-01';
const AT = { indexKey: monthIndexKey(SHOP, MONTH), shopId: SHOP, month: MONTH };

const indexWith = async (jobIds: string[], month = MONTH): Promise<MonthIndex> => {
  const part = await buildPart({
    shopId: SHOP,
    month,
    jobs: jobIds.map((jobId) => ({
      jobId,
      details: details({ chunk_ids: ['p0'] }),
      platformData: { j: jobId },
    })),
  });
  const e = indexEntries(part, '2026-02-15T03:00:00.000Z');
  return commitPart(emptyMonthIndex(SHOP, month, 'x'), e.part, e.jobs, 'y');
};

const entry = (over: Partial<IndexedJob> & { month?: string; position?: number }): ArchiveEntry => {
  const { month = MONTH, position = 0, ...e } = over;
  return {
    month,
    indexKey: monthIndexKey(SHOP, month),
    partKey: `job-details-cold/${SHOP}/${month}/part-20260215T030000Z-aaaaaaaa.jsonl.gz`,
    position,
    entry: {
      part: 'part-20260215T030000Z-aaaaaaaa.jsonl.gz',
      offset: 0,
      length: 10,
      sha256: 'x',
      completed_at: '2026-01-10T00:00:00.000Z',
      committed_at: '2026-02-15T03:00:00.000Z',
      platform_data: null,
      sources: [],
      deleted_at: null,
      ...e,
    },
  };
};

describe('entriesFromIndex', () => {
  it("ties each of the job's entries to its part key; other jobs and absent jobs give nothing", async () => {
    const index = await indexWith(['j1', 'j2']);
    const got = entriesFromIndex(index, AT, 'j2');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      month: MONTH,
      partKey: index.parts[0]?.key,
      position: 0,
      entry: index.jobs.j2?.[0],
    });
    expect(entriesFromIndex(index, AT, 'j3')).toEqual([]);
  });

  it('job ids that are Object.prototype members are just absent', async () => {
    const index = await indexWith(['j1']);
    for (const id of ['constructor', 'toString', 'hasOwnProperty'])
      expect(entriesFromIndex(index, AT, id)).toEqual([]);
  });

  it('an index for another shop or month → CorruptObjectError naming the index key', async () => {
    const index = await indexWith(['j1']);
    expect(() => entriesFromIndex({ ...index, shop_id: 'other' }, AT, 'j1')).toThrow(CorruptObjectError);
    expect(() => entriesFromIndex({ ...index, month: '2026-02' }, AT, 'j1')).toThrow(AT.indexKey);
  });

  it("a part key outside this shop's prefix, or a range past the part's end → CorruptObjectError", async () => {
    const index = await indexWith(['j1']);
    const part = index.parts[0];
    const e = index.jobs.j1?.[0];
    if (!part || !e) throw new Error('fixture');
    const otherShopPart = {
      ...index,
      parts: [{ ...part, key: part.key.replace(SHOP, 'evil.myshopify.com') }],
    };
    expect(() => entriesFromIndex(otherShopPart, AT, 'j1')).toThrow(/not a part of this shop/);
    const past = { ...index, jobs: { j1: [{ ...e, offset: 1, length: part.size }] } };
    expect(() => entriesFromIndex(past, AT, 'j1')).toThrow(/inside its part/);
    const empty = { ...index, jobs: { j1: [{ ...e, length: 0 }] } };
    expect(() => entriesFromIndex(empty, AT, 'j1')).toThrow(CorruptObjectError);
    const badPd = { ...index, jobs: { j1: [{ ...e, platform_data: { ref: 'r', offset: -1, length: 5 } }] } };
    expect(() => entriesFromIndex(badPd, AT, 'j1')).toThrow(/platform_data/);
  });
});

describe('orderEntries / latestWithPlatformData', () => {
  it('oldest archival first: by commit time, then month, then position', () => {
    const a = entry({ committed_at: '2026-03-01T00:00:00Z', month: '2026-01' });
    const b = entry({ committed_at: '2026-02-01T00:00:00Z', month: '2026-02' });
    const c = entry({ committed_at: '2026-02-01T00:00:00Z', month: '2026-01', position: 1 });
    const d = entry({ committed_at: '2026-02-01T00:00:00Z', month: '2026-01', position: 0 });
    expect(orderEntries([a, b, c, d])).toEqual([d, c, b, a]);
  });

  it('the newest entry that has platform data, even if a later one has none', () => {
    const withPd = entry({
      committed_at: '2026-02-01T00:00:00Z',
      platform_data: { ref: 'r', offset: 0, length: 1 },
    });
    const without = entry({ committed_at: '2026-03-01T00:00:00Z' });
    expect(latestWithPlatformData(orderEntries([without, withPd]))).toBe(withPd);
    expect(latestWithPlatformData([without])).toBeUndefined();
  });
});

describe('hotPlan', () => {
  const completedAt = '2026-01-10T00:00:00Z';
  it('skip: the newest archival is this completion and its hot objects are deleted', () => {
    expect(
      hotPlan(
        [entry({ completed_at: '2026-01-10T00:00:00.000Z', deleted_at: '2026-02-16T00:00:00Z' })],
        completedAt,
      ),
    ).toBe('skip');
  });
  it('read: this completion is archived but not deleted yet', () => {
    expect(hotPlan([entry({ completed_at: completedAt })], completedAt)).toBe('read');
  });
  it('read-then-recheck: not archived, or the newest archival is of an earlier completion (a retry)', () => {
    expect(hotPlan([], completedAt)).toBe('read-then-recheck');
    const earlier = entry({ completed_at: '2025-12-01T00:00:00Z', deleted_at: '2026-01-05T00:00:00Z' });
    expect(hotPlan([earlier], completedAt)).toBe('read-then-recheck');
    // Only the newest entry counts: an older deleted one for the same time does not make it skippable.
    const newest = entry({ completed_at: completedAt, committed_at: '2026-03-01T00:00:00Z' });
    expect(hotPlan([entry({ completed_at: completedAt, deleted_at: 'x' }), newest], completedAt)).toBe(
      'read',
    );
  });
});

describe('newestIndexMonths', () => {
  const keys = [
    `job-details-index/${SHOP}/2025-11/index.json`,
    `job-details-index/${SHOP}/2026-01/index.json`,
    `job-details-index/${SHOP}/2026-01/pending/part-20260301T000000Z-aaaaaaaa.jsonl.gz.json`,
    `job-details-index/${SHOP}/2025-12/index.json`,
    `job-details-index/${SHOP}/2026-02/pending/part-20260301T000000Z-bbbbbbbb.jsonl.gz.json`,
    'job-details-index/other-shop/2026-03/index.json',
  ];
  it('index keys only, this shop only, newest first, bounded', () => {
    expect(newestIndexMonths(keys, SHOP, 24)).toEqual(['2026-01', '2025-12', '2025-11']);
    expect(newestIndexMonths(keys, SHOP, 2)).toEqual(['2026-01', '2025-12']);
  });
  it('not older than `from`', () => {
    expect(newestIndexMonths(keys, SHOP, 24, '2025-12')).toEqual(['2026-01', '2025-12']);
  });
});
