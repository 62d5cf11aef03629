import { PART_FORMAT, parsePartRecord } from '../../shared/archive/format';
import { CorruptObjectError, UnsupportedFormatError } from '../../shared/errors';
import { details, jobMeta } from '../support/archive-fixture';

const header = {
  type: 'part',
  format: PART_FORMAT,
  shop_id: 's',
  month: '2026-01',
  run_id: 'r1',
};
const job = {
  type: 'job',
  shop_id: 's',
  job_id: 'j1',
  job: jobMeta(),
  details: details({ chunk_ids: ['p0'] }),
  platform_data_ref: '1',
  sources: [{ key: 'k', size: 1 }],
};

describe('parsePartRecord', () => {
  it('accepts the three record types as written', () => {
    expect(parsePartRecord(header, 'w')).toEqual(header);
    expect(parsePartRecord(job, 'w')).toEqual(job);
    expect(parsePartRecord({ type: 'platform_data', ref: 'r', data: null }, 'w')).toEqual({
      type: 'platform_data',
      ref: 'r',
      data: null,
    });
  });

  it('absent optional row fields read as null; extra fields are dropped', () => {
    const { created_at: _c, job_type: _t, ...partial } = jobMeta();
    const rec = parsePartRecord({ ...job, job: partial, extra: 1 }, 'w');
    expect(rec).toMatchObject({ job: { created_at: null, job_type: null } });
    expect(rec).not.toHaveProperty('extra');
  });

  it.each([
    ['not an object', [1]],
    ['unknown part format', { ...header, format: 'job-details-archive/index@1.0' }],
    ['header without run_id', { ...header, run_id: undefined }],
    ['platform data without data', { type: 'platform_data', ref: 'r' }],
    ['job without a job object', { ...job, job: 'x' }],
    ['job without sources', { ...job, sources: undefined }],
    ['job with a non-numeric counter', { ...job, job: { ...jobMeta(), failed_items: '3' } }],
    ['job with a NaN counter', { ...job, job: { ...jobMeta(), failed_items: Number.NaN } }],
    ['job without completed_at', { ...job, job: { ...jobMeta(), completed_at: null } }],
    ['source without size', { ...job, sources: [{ key: 'k' }] }],
    [
      'details of the wrong shape',
      { ...job, details: { chunk_ids: 'p0', failed: {}, skipped: {}, conflict: {} } },
    ],
  ])('%s → CorruptObjectError naming where', (_name, value) => {
    expect(() => parsePartRecord(value, 'part-x bytes 5-9')).toThrow(CorruptObjectError);
    expect(() => parsePartRecord(value, 'part-x bytes 5-9')).toThrow('part-x bytes 5-9');
  });

  it.each([
    ['a pre-1.0 part (part@4)', 'job-details-archive/part@4', /pre-1\.0 build.*rebuild the local data/],
    ['a later major (part@2.0)', 'job-details-archive/part@2.0', /upgrade/],
  ])('%s → UnsupportedFormatError with the fix, in one line', (_name, format, fix) => {
    const read = () => parsePartRecord({ ...header, format }, 'job-details-cold/s/2026-01/p');
    expect(read).toThrow(UnsupportedFormatError);
    expect(read).toThrow(fix);
    try {
      read();
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('a later minor of format 1 is read as 1.0 (minors only add fields)', () => {
    expect(parsePartRecord({ ...header, format: 'job-details-archive/part@1.3' }, 'w')).toEqual(header);
  });
});
