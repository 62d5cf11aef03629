import { InvalidIdError, InvalidInputError } from '../../shared/errors';
import { monthRange, readerSettings, resolveQuery } from '../../shared/reader';

describe('readerSettings', () => {
  it('defaults: Standard tier, 7 days, 24 months, 16 parallel reads, kept forever, the system clock', () => {
    expect(readerSettings()).toEqual({
      restoreTier: 'Standard',
      restoreDays: 7,
      searchMonths: 24,
      readConcurrency: 32,
      retentionMonths: 0,
      clock: expect.any(Function),
    });
    const clock = () => new Date(0);
    expect(
      readerSettings({
        restoreTier: 'Expedited',
        restoreDays: 1,
        searchMonths: 3,
        readConcurrency: 2,
        retentionMonths: 24,
        clock,
      }),
    ).toEqual({
      restoreTier: 'Expedited',
      restoreDays: 1,
      searchMonths: 3,
      readConcurrency: 2,
      retentionMonths: 24,
      clock,
    });
  });

  it.each([
    [{ restoreTier: 'Glacier' as never }, 'restoreTier'],
    [{ restoreDays: 0 }, 'restoreDays'],
    [{ restoreDays: 1.5 }, 'restoreDays'],
    [{ searchMonths: 0 }, 'searchMonths'],
    [{ readConcurrency: 1000 }, 'readConcurrency'],
    [{ retentionMonths: 1.5 }, 'retentionMonths'],
  ])('%j → InvalidInputError on %s', (opts, field) => {
    expect(() => readerSettings(opts)).toThrow(InvalidInputError);
    expect(() => readerSettings(opts)).toThrow(new RegExp(field));
  });
});

describe('monthRange', () => {
  it('is inclusive, newest first, and crosses year ends', () => {
    expect(monthRange('2025-11', '2026-02', 24)).toEqual(['2026-02', '2026-01', '2025-12', '2025-11']);
    expect(monthRange('2026-03', '2026-03', 24)).toEqual(['2026-03']);
  });
  it('keeps the newest `limit` months; an empty range when from > to', () => {
    expect(monthRange('2020-01', '2026-02', 2)).toEqual(['2026-02', '2026-01']);
    expect(monthRange('2026-03', '2026-02', 24)).toEqual([]);
  });
});

describe('resolveQuery', () => {
  const base = { shopId: 'acme.myshopify.com', jobId: 'k3jqxr2m7zaba' };

  it('completedAt alone → its month', () => {
    expect(resolveQuery({ ...base, completedAt: '2026-03-31T23:59:59Z' }, 24)).toEqual({
      ...base,
      completedAt: '2026-03-31T23:59:59.000Z',
      months: ['2026-03'],
      searchFrom: null,
    });
  });

  it('createdAt..completedAt → every month in between, capped at searchMonths', () => {
    const q = { ...base, createdAt: '2025-12-30T00:00:00Z', completedAt: '2026-02-01T00:00:00Z' };
    expect(resolveQuery(q, 24).months).toEqual(['2026-02', '2026-01', '2025-12']);
    expect(resolveQuery(q, 2).months).toEqual(['2026-02', '2026-01']);
  });

  it('explicit months win: validated, deduplicated, newest first; [] means hot only', () => {
    const q = { ...base, completedAt: '2026-03-01T00:00:00Z', months: ['2025-01', '2026-02', '2025-01'] };
    expect(resolveQuery(q, 24)).toMatchObject({
      months: ['2026-02', '2025-01'],
      completedAt: '2026-03-01T00:00:00.000Z',
    });
    expect(resolveQuery({ ...base, months: [] }, 24).months).toEqual([]);
    expect(() => resolveQuery({ ...base, months: ['2026-01', '2026-02', '2026-03'] }, 2)).toThrow(
      InvalidInputError,
    );
  });

  it('nothing known → a search (months null), from the creation month when given', () => {
    expect(resolveQuery(base, 24)).toMatchObject({ months: null, searchFrom: null });
    expect(resolveQuery({ ...base, createdAt: '2025-07-04T12:00:00Z' }, 24)).toMatchObject({
      months: null,
      searchFrom: '2025-07',
    });
  });

  it.each([
    ['bad shop', { ...base, shopId: '../other' }, InvalidIdError],
    ['bad job', { ...base, jobId: 'a/b' }, InvalidIdError],
    ['bad month', { ...base, months: ['2026-1'] }, InvalidIdError],
    ['bad completedAt', { ...base, completedAt: 'last week' }, InvalidInputError],
    ['non-string completedAt', { ...base, completedAt: 5 as never }, InvalidInputError],
    ['months not a list', { ...base, months: '2026-01' as never }, InvalidInputError],
    [
      'created after completed',
      { ...base, createdAt: '2026-02-02T00:00:00Z', completedAt: '2026-02-01T00:00:00Z' },
      InvalidInputError,
    ],
  ])('%s → typed error', (_name, q, type) => {
    expect(() => resolveQuery(q, 24)).toThrow(type);
  });
});
