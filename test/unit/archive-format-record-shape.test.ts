import { parsePartRecord } from '../../shared/archive/format/record-shape';
import { PART_FORMAT } from '../../shared/archive/format/records';
import { CorruptObjectError } from '../../shared/errors';
import { details, jobMeta } from '../support/archive-fixture';

const header = {
  type: 'part',
  format: PART_FORMAT,
  shop_id: 's',
  month: '2026-01',
  part: 'part-20260215T030000Z-aaaaaaaa.jsonl.gz',
  run_id: 'r1',
  created_at: '2026-02-15T03:00:00.000Z',
};
const job = {
  type: 'job',
  shop_id: 's',
  job_id: 'j1',
  job: jobMeta(),
  details: details({ chunk_ids: ['p0'] }),
  platform_data_ref: 'sha256:abc',
  sources: [{ key: 'k', size: 1, etag: 'e', sha256: 'h' }],
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
    ['unknown part format', { ...header, format: 'job-details-archive/part@9' }],
    ['header without run_id', { ...header, run_id: undefined }],
    ['platform data without data', { type: 'platform_data', ref: 'r' }],
    ['job without a job object', { ...job, job: 'x' }],
    ['job without sources', { ...job, sources: undefined }],
    ['job with a non-numeric counter', { ...job, job: { ...jobMeta(), failed_items: '3' } }],
    ['job with a NaN counter', { ...job, job: { ...jobMeta(), failed_items: Number.NaN } }],
    ['job without completed_at', { ...job, job: { ...jobMeta(), completed_at: null } }],
    ['source without size', { ...job, sources: [{ key: 'k', etag: 'e', sha256: 'h' }] }],
    [
      'details of the wrong shape',
      { ...job, details: { chunk_ids: 'p0', failed: {}, skipped: {}, conflict: {} } },
    ],
  ])('%s → CorruptObjectError naming where', (_name, value) => {
    expect(() => parsePartRecord(value, 'part-x bytes 5-9')).toThrow(CorruptObjectError);
    expect(() => parsePartRecord(value, 'part-x bytes 5-9')).toThrow('part-x bytes 5-9');
  });
});
