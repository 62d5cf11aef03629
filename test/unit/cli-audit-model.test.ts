/**
 * `jobarchive audit`'s conclusions from what it read (pure): hot / archived / orphan counts per
 * shop × month, and each kind of mismatch.
 */

import { EXIT_FINDINGS } from '../../infra/cli/args';
import {
  type AuditInputs,
  auditExitCode,
  classifyAudit,
  type HotPrefix,
  orphanCandidates,
} from '../../infra/cli/audit-model';
import { INDEX_FORMAT, type IndexedJob, type MonthIndex } from '../../shared/archive/format';
import { LATE_ROW_BOUND_DAYS } from '../../shared/archive/steps/plan/late-rows';

const SHOP = 'acme.myshopify.com';
const PART = 'part-20260415T030000Z-abcdefgh.jsonl.gz';
const PART_KEY = `job-details-cold/${SHOP}/2026-03/${PART}`;

const hot = (
  jobId: string,
  objects: Record<string, string>,
  newest = '2026-04-02T00:00:00.000Z',
): HotPrefix => ({
  jobId,
  objects: new Map(Object.entries(objects)),
  bytes: 100 * Object.keys(objects).length,
  newest,
});

const entry = (over: Partial<IndexedJob> = {}): IndexedJob => ({
  part: PART,
  offset: 0,
  length: 10,
  sha256: 'x',
  completed_at: '2026-03-10T00:00:00.000Z',
  committed_at: '2026-04-15T03:00:00.000Z',
  platform_data: null,
  sources: [{ key: 'job-details/arch1/f1.json.gz', size: 100, etag: '"e1"' }],
  deleted_at: '2026-04-15T04:00:00.000Z',
  ...over,
});

const index = (jobs: Record<string, IndexedJob[]>, parts = [PART]): MonthIndex => ({
  format: INDEX_FORMAT,
  shop_id: SHOP,
  month: '2026-03',
  updated_at: '2026-04-15T04:00:00.000Z',
  parts: parts.map((name) => ({
    name,
    key: `job-details-cold/${SHOP}/2026-03/${name}`,
    size: 10,
    etag: 'p',
    sha256: 's',
    run_id: 'r',
    committed_at: '2026-04-15T03:00:00.000Z',
    job_count: Object.keys(jobs).length,
    bytes_in: 100,
  })),
  jobs,
});

const inputs = (over: Partial<AuditInputs>): AuditInputs => ({
  rows: [],
  hot: new Map(),
  indexes: [],
  coldParts: [],
  pending: new Set(),
  orphanShops: new Map(),
  corruptIndexes: [],
  ...over,
});

describe('classifyAudit', () => {
  it('a settled part (no entries) counts its job_count archived and deleted; a job read back from its record is checked, not counted twice; an unread one is named', () => {
    const settled = (over: Partial<MonthIndex> = {}): MonthIndex => {
      const base = index({});
      return {
        ...base,
        parts: base.parts.map((p) => ({
          ...p,
          job_count: 5,
          settled: {
            dir: ['a'],
            last: 'z',
            block_bytes: [10],
            deleted_at: '2026-04-15T04:00:00.000Z',
            deleted_by: 'r',
          },
        })),
        ...over,
      };
    };
    const coldParts = [
      { key: PART_KEY, shopId: SHOP, month: '2026-03', partName: PART, size: 10, etag: 'p' },
    ];
    const f = classifyAudit(inputs({ indexes: [settled()], coldParts }));
    expect(f.groups).toMatchObject([{ archivedJobs: 5, archivedDeleted: 5, mismatches: 0 }]);
    expect(f.totals.archivedJobs).toBe(5);
    // audit.ts gives a hot job its record's entry (deleted, no sources): a hidden hot object, counted once.
    const read = settled({ jobs: { arch1: [entry({ sources: [] })] } });
    const g = classifyAudit(
      inputs({
        indexes: [read],
        coldParts,
        hot: new Map([['arch1', hot('arch1', { 'job-details/arch1/late.json.gz': 'e9' })]]),
        rows: [{ shopId: SHOP, jobId: 'arch1', status: 'FAILED', completedAt: '2026-03-10T00:00:00.000Z' }],
      }),
    );
    expect(g.totals.archivedJobs).toBe(5);
    expect(g.mismatches.map((m) => m.kind)).toEqual(['hidden-hot-object']);
    const u = classifyAudit(
      inputs({
        indexes: [settled()],
        coldParts,
        hot: new Map([['arch1', hot('arch1', { 'job-details/arch1/late.json.gz': 'e9' })]]),
        settledUnread: [{ shopId: SHOP, month: '2026-03', jobId: 'arch1', part: PART_KEY }],
      }),
    );
    expect(u.mismatches.map((m) => [m.kind, m.jobId])).toEqual([['unchecked-settled-job', 'arch1']]);
    expect(u.orphans).toEqual([]);
    expect(auditExitCode(u)).toBe(EXIT_FINDINGS);
  });

  it('terminal rows without a readable completed_at go under their own heading, not a month', () => {
    const f = classifyAudit(
      inputs({
        rows: [
          { shopId: SHOP, jobId: 'garbage', status: 'FAILED', completedAt: 'yesterday' },
          { shopId: SHOP, jobId: 'missing', status: 'COMPLETED', completedAt: undefined },
          { shopId: SHOP, jobId: 'number', status: 'COMPLETED', completedAt: 1767225600 },
          { shopId: SHOP, jobId: 'running', status: 'IN_PROGRESS', completedAt: undefined },
        ],
        hot: new Map([['garbage', hot('garbage', { 'job-details/garbage/a.json.gz': 'e' })]]),
      }),
    );
    expect(f.groups).toEqual([]);
    expect(f.orphans).toEqual([]); // the row exists: its hot prefix is not an orphan
    expect(f.undated).toEqual([
      {
        shopId: SHOP,
        jobId: 'garbage',
        status: 'FAILED',
        reason: 'completed_at: "yesterday" is not an ISO-8601 timestamp with a UTC offset',
      },
      { shopId: SHOP, jobId: 'missing', status: 'COMPLETED', reason: 'terminal row has no completed_at' },
      {
        shopId: SHOP,
        jobId: 'number',
        status: 'COMPLETED',
        reason: expect.stringContaining('completed_at: expected an ISO-8601 timestamp string'),
      },
    ]);
    expect(f.totals.undated).toBe(3);
    expect(auditExitCode(f)).toBe(EXIT_FINDINGS);
  });

  it('counts hot terminal jobs by completion month, archived jobs by index, and jobs awaiting delete', () => {
    const f = classifyAudit(
      inputs({
        rows: [
          { shopId: SHOP, jobId: 'hot1', status: 'FAILED', completedAt: '2026-04-20T00:00:00.000Z' },
          { shopId: SHOP, jobId: 'running', status: 'IN_PROGRESS', completedAt: undefined },
          { shopId: SHOP, jobId: 'grace', status: 'COMPLETED', completedAt: '2026-03-12T00:00:00.000Z' },
          { shopId: SHOP, jobId: 'clean', status: 'COMPLETED', completedAt: '2026-04-21T00:00:00.000Z' },
        ],
        hot: new Map([
          ['hot1', hot('hot1', { 'job-details/hot1/a.json.gz': 'e' })],
          ['running', hot('running', { 'job-details/running/a.json.gz': 'e' })],
          ['grace', hot('grace', { 'job-details/grace/a.json.gz': 'e' })],
        ]),
        indexes: [index({ arch1: [entry()], grace: [entry({ deleted_at: null, sources: [] })] })],
        coldParts: [{ key: PART_KEY, shopId: SHOP, month: '2026-03', partName: PART }],
      }),
    );
    expect(f.groups).toEqual([
      {
        shopId: SHOP,
        month: '2026-03',
        hotJobs: 1,
        awaitingDelete: 1,
        archivedJobs: 2,
        archivedDeleted: 1,
        orphans: 0,
        mismatches: 0,
      },
      {
        shopId: SHOP,
        month: '2026-04',
        hotJobs: 1,
        awaitingDelete: 0,
        archivedJobs: 0,
        archivedDeleted: 0,
        orphans: 0,
        mismatches: 0,
      },
    ]);
    expect(f.mismatches).toEqual([]);
    expect(f.orphans).toEqual([]);
    expect(f.totals).toMatchObject({ rows: 4, hotPrefixes: 3, hotJobs: 2, archivedJobs: 2 });
  });

  it('reports orphans with the shop from metadata, or unknown, in the month of their newest object', () => {
    const f = classifyAudit(
      inputs({
        hot: new Map([
          [
            'lost1',
            hot('lost1', { 'job-details/lost1/a.json.gz': 'e', 'job-details/lost1/platform-data.json': 'p' }),
          ],
          ['lost2', hot('lost2', { 'job-details/lost2/a.json.gz': 'e' }, '2026-01-05T00:00:00.000Z')],
        ]),
        orphanShops: new Map([['lost1', SHOP]]),
      }),
    );
    expect(f.orphans).toEqual([
      { jobId: 'lost1', shopId: SHOP, month: '2026-04', objects: 2, bytes: 200 },
      { jobId: 'lost2', shopId: 'unknown', month: '2026-01', objects: 1, bytes: 100 },
    ]);
    expect(f.groups.map((g) => [g.shopId, g.month, g.orphans])).toEqual([
      [SHOP, '2026-04', 1],
      ['unknown', '2026-01', 1],
    ]);
  });

  it('flags a source still present (same ETag) after its entry was marked deleted, but not a newer object', () => {
    const f = classifyAudit(
      inputs({
        hot: new Map([
          ['arch1', hot('arch1', { 'job-details/arch1/f1.json.gz': 'e1' })],
          ['arch2', hot('arch2', { 'job-details/arch2/f1.json.gz': 'newer' })],
        ]),
        indexes: [
          index({
            arch1: [entry()],
            arch2: [entry({ sources: [{ key: 'job-details/arch2/f1.json.gz', size: 1, etag: 'old' }] })],
          }),
        ],
        coldParts: [{ key: PART_KEY, shopId: SHOP, month: '2026-03', partName: PART }],
      }),
    );
    expect(f.mismatches).toEqual([
      expect.objectContaining({
        kind: 'source-present-after-delete',
        key: 'job-details/arch1/f1.json.gz',
        jobId: 'arch1',
        shopId: SHOP,
        month: '2026-03',
      }),
    ]);
  });

  it("a deleted entry of the row's completion: every hot object is hidden, whatever its LastModified (same second included)", () => {
    const committed = entry().committed_at;
    const sameSecond = `${committed.slice(0, 19)}.000Z`; // S3 LastModified has second precision
    const h = {
      ...hot('arch1', { 'job-details/arch1/f1.json.gz': 'e1', 'job-details/arch1/f2.json.gz': 'e2' }),
      modified: new Map([
        ['job-details/arch1/f1.json.gz', sameSecond],
        ['job-details/arch1/f2.json.gz', new Date(Date.parse(committed) + 60_000).toISOString()],
      ]),
    };
    const withRow = (completedAt: string) =>
      classifyAudit(
        inputs({
          rows: [{ shopId: SHOP, jobId: 'arch1', status: 'COMPLETED', completedAt }],
          hot: new Map([['arch1', h]]),
          indexes: [index({ arch1: [entry({ sources: [] })] })],
          coldParts: [{ key: PART_KEY, shopId: SHOP, month: '2026-03', partName: PART }],
        }),
      );
    expect(withRow('2026-03-10T00:00:00+00:00').mismatches).toEqual([
      expect.objectContaining({ kind: 'hidden-hot-object', key: 'job-details/arch1/f1.json.gz' }),
      expect.objectContaining({ kind: 'hidden-hot-object', key: 'job-details/arch1/f2.json.gz' }),
    ]);
    // A retry's objects (a newer completion) are read by every reader: nothing hidden.
    expect(withRow('2026-05-01T00:00:00Z').mismatches).toEqual([]);
  });

  it('parts against the committed size and ETag; a month with parts and no index is one lost-index finding', () => {
    const committedPart = { ...index({ arch1: [entry({ deleted_at: null })] }) };
    const withEtag: MonthIndex = {
      ...committedPart,
      parts: committedPart.parts.map((p) => ({ ...p, etag: 'good' })),
    };
    const flipped = classifyAudit(
      inputs({
        indexes: [withEtag],
        coldParts: [
          {
            key: PART_KEY,
            shopId: SHOP,
            month: '2026-03',
            partName: PART,
            size: withEtag.parts[0]?.size,
            etag: 'bad',
          },
        ],
      }),
    );
    expect(flipped.mismatches).toEqual([expect.objectContaining({ kind: 'damaged-part', key: PART_KEY })]);
    const lost = classifyAudit(
      inputs({ coldParts: [{ key: PART_KEY, shopId: SHOP, month: '2026-03', partName: PART }] }),
    );
    expect(lost.mismatches).toEqual([expect.objectContaining({ kind: 'lost-index', month: '2026-03' })]);
  });

  it('flags parts missing from their index (noting a staging manifest) and index parts whose object is gone', () => {
    const stray = 'part-20260416T030000Z-zzzzzzzz.jsonl.gz';
    const staged = 'part-20260416T040000Z-yyyyyyyy.jsonl.gz';
    const f = classifyAudit(
      inputs({
        indexes: [index({ arch1: [entry()] })],
        coldParts: [
          {
            key: `job-details-cold/${SHOP}/2026-03/${stray}`,
            shopId: SHOP,
            month: '2026-03',
            partName: stray,
          },
          {
            key: `job-details-cold/${SHOP}/2026-03/${staged}`,
            shopId: SHOP,
            month: '2026-03',
            partName: staged,
          },
        ],
        pending: new Set([`${SHOP}/2026-03/${staged}`]),
      }),
    );
    const byKind = (k: string) => f.mismatches.filter((m) => m.kind === k);
    expect(byKind('missing-part')).toEqual([expect.objectContaining({ key: PART_KEY })]);
    expect(
      byKind('uncommitted-part').map((m) => [m.key.endsWith(stray) ? 'stray' : 'staged', m.detail]),
    ).toEqual([
      ['stray', expect.stringContaining('no staging manifest')],
      ['staged', expect.stringContaining('a staging manifest exists')],
    ]);
    expect(f.groups[0]?.mismatches).toBe(3);
  });

  it('reports a corrupt index once, not each of its parts as uncommitted', () => {
    const f = classifyAudit(
      inputs({
        coldParts: [{ key: PART_KEY, shopId: SHOP, month: '2026-03', partName: PART }],
        corruptIndexes: [
          {
            key: `job-details-index/${SHOP}/2026-03/index.json`,
            shopId: SHOP,
            month: '2026-03',
            reason: 'not JSON',
          },
        ],
      }),
    );
    expect(f.mismatches.map((m) => m.kind)).toEqual(['corrupt-index']);
  });

  it('a shop-month with an own index and a view in the shared index is a split (issue 31)', () => {
    const own = index({ a1: [entry()] });
    const view = index({ a2: [entry()] });
    const f = classifyAudit(inputs({ indexes: [own, view] }));
    expect(f.mismatches.filter((m) => m.kind === 'split-shop-month')).toEqual([
      expect.objectContaining({
        shopId: SHOP,
        month: '2026-03',
        key: `job-details-index/${SHOP}/2026-03/index.json`,
      }),
    ]);
    expect(auditExitCode(f)).toBe(EXIT_FINDINGS);
    expect(classifyAudit(inputs({ indexes: [own] })).mismatches.map((m) => m.kind)).not.toContain(
      'split-shop-month',
    );
  });

  it('a hot terminal job the last run cutoff passed by more than the bound is overdue (issue 31)', () => {
    const completedAt = '2026-03-10T00:00:00.000Z';
    const rows = [{ shopId: SHOP, jobId: 'late', status: 'FAILED', completedAt }];
    const hotLate = new Map([['late', hot('late', { 'job-details/late/a.json.gz': 'e' })]]);
    const at = (cutoff: number, indexes: MonthIndex[] = []) =>
      classifyAudit(inputs({ rows, hot: hotLate, indexes, due: { cutoff, graceHours: 1 } })).mismatches.map(
        (m) => m.kind,
      );
    const bound = Date.parse(completedAt) + LATE_ROW_BOUND_DAYS * 86_400_000 + 3_600_000;
    expect(LATE_ROW_BOUND_DAYS).toBe(33);
    expect(at(bound)).toEqual([]);
    expect(at(bound + 1)).toEqual(['overdue-hot-job']);
    // Archived (its hot copies wait for the delete step, or are other findings): not overdue.
    expect(at(bound + 1, [index({ late: [entry({ deleted_at: null, sources: [] })] })])).not.toContain(
      'overdue-hot-job',
    );
    // No run yet: nothing to measure against.
    expect(classifyAudit(inputs({ rows, hot: hotLate })).mismatches).toEqual([]);
  });

  it('treats ids like constructor / __proto__ as data', () => {
    const f = classifyAudit(
      inputs({
        rows: [
          {
            shopId: SHOP,
            jobId: 'constructor',
            status: 'COMPLETED',
            completedAt: '2026-04-01T00:00:00.000Z',
          },
        ],
        hot: new Map([['constructor', hot('constructor', { 'job-details/constructor/a.json.gz': 'e' })]]),
      }),
    );
    expect(f.totals.hotJobs).toBe(1);
    expect(f.orphans).toEqual([]);
  });
});

describe('orphanCandidates', () => {
  it('is the hot prefixes known neither to a row nor to an index', () => {
    const h = new Map([
      ['a', hot('a', { k: 'e' })],
      ['b', hot('b', { k: 'e' })],
      ['c', hot('c', { k: 'e' })],
    ]);
    expect(
      orphanCandidates(
        h,
        [{ shopId: SHOP, jobId: 'a', status: 'COMPLETED', completedAt: undefined }],
        [index({ b: [entry()] })],
      ),
    ).toEqual(['c']);
  });
});

describe('auditExitCode', () => {
  const totals = {
    rows: 1,
    hotPrefixes: 1,
    hotJobs: 1,
    archivedJobs: 1,
    orphans: 0,
    mismatches: 0,
    undated: 0,
  };
  it('is 0 when audit finds nothing, 4 (EXIT_FINDINGS) for any orphan, mismatch or undated row', () => {
    expect(auditExitCode({ totals })).toBe(0);
    expect(auditExitCode({ totals: { ...totals, undated: 1 } })).toBe(EXIT_FINDINGS);
    expect(auditExitCode({ totals: { ...totals, orphans: 1 } })).toBe(EXIT_FINDINGS);
    expect(auditExitCode({ totals: { ...totals, mismatches: 2 } })).toBe(EXIT_FINDINGS);
    expect(EXIT_FINDINGS).toBe(4);
  });
});
