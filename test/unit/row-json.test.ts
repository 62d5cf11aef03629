import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { canonicalJson } from '../../shared/details';
import { INLINE_ATTRIBUTES, parseInlineDetails } from '../../shared/details/inline';
import { exactNumber } from '../../shared/details/json';
import { InvalidInputError } from '../../shared/errors';
import { archivableRow, itemToJson } from '../../shared/jobs/row-json';

describe('archivableRow: the whole row, as JSON, for the archive', () => {
  const item = {
    pk: 'SHOP#s',
    sk: 'JOB#j',
    job_status: 'COMPLETED',
    total_items: 10,
    is_internal: false,
    error_message: null,
    completed_chunks: new Set(['p1', 'p0', 'preparse']),
    tags: new Set(['b', 'a', 'B']),
    scores: new Set([10, 2, 1]),
    blob: new Uint8Array([1, 2, 3]),
    retry_attribution: { first_retry_at: '2026-08-03T10:15:30+00:00', attempts: 2, who: ['x'] },
    future_attribute: { nested: [1, 'two', true] },
  };

  it('keeps every attribute under its name; sets as sorted lists, binary as base64', () => {
    const { row, reduced } = archivableRow(item);
    expect(row).toEqual({
      blob: 'AQID',
      error_message: null,
      future_attribute: { nested: [1, 'two', true] },
      is_internal: false,
      job_status: 'COMPLETED',
      pk: 'SHOP#s',
      retry_attribution: { first_retry_at: '2026-08-03T10:15:30+00:00', attempts: 2, who: ['x'] },
      scores: [1, 2, 10],
      sk: 'JOB#j',
      tags: ['B', 'a', 'b'],
      total_items: 10,
    });
    expect(Object.keys(row)).toEqual([...Object.keys(row)].sort());
    expect(reduced).toEqual({ completed_chunks: 3 });
  });

  it('leaves out what the record stores elsewhere', () => {
    const { row } = archivableRow({ ...item, failed_items_details: { x: ['d'] } }, INLINE_ATTRIBUTES);
    expect(row).not.toHaveProperty('failed_items_details');
  });

  it('itemToJson converts every attribute, the reduced ones too', () => {
    expect(itemToJson(item).completed_chunks).toEqual(['p0', 'p1', 'preparse']);
  });
});

describe('parseInlineDetails: details on rows from before the S3 offload', () => {
  it('a row without inline attributes has none', () => {
    expect(parseInlineDetails({ pk: 'x' })).toEqual({ details: null, platformData: null, attributes: [] });
  });

  it('accepts reason → list maps, string sets, and lists of {reason, doc_id}', () => {
    const r = parseInlineDetails({
      failed_items_details: { timeout: ['d1', 'd2'], mapping: new Set(['d3']) },
      skipped_items_details: [
        { reason: 'invalid_json', doc_id: 'd4' },
        { reason: 'invalid_json', doc_id: 'd5' },
      ],
      conflict_details: [{ reason: 'version', doc_id: 'd6', existing_version: 3 }],
      platform_data: { indexer: { batch_size: 50 } },
    });
    expect(r.details).toEqual({
      chunk_ids: [],
      failed: { mapping: ['d3'], timeout: ['d1', 'd2'] },
      skipped: { invalid_json: ['d4', 'd5'] },
      conflict: { version: [{ doc_id: 'd6', existing_version: 3 }] },
    });
    expect(r.platformData).toEqual({ indexer: { batch_size: 50 } });
    expect(r.attributes).toEqual(INLINE_ATTRIBUTES);
  });

  it('a conflict map holds conflict items', () => {
    const r = parseInlineDetails({ conflict_details: { version: [{ doc_id: 'd', incoming_version: 2 }] } });
    expect(r.details?.conflict).toEqual({ version: [{ doc_id: 'd', incoming_version: 2 }] });
  });

  it('empty maps and lists are "no details", but the attribute is named', () => {
    const r = parseInlineDetails({ failed_items_details: {}, skipped_items_details: [] });
    expect(r.details).toEqual({ chunk_ids: [], failed: {}, skipped: {}, conflict: {} });
    expect(r.attributes).toEqual(['failed_items_details', 'skipped_items_details']);
  });

  it.each([
    [{ failed_items_details: 'timeout: d1' }, 'row.failed_items_details', '"timeout: d1"'],
    [{ failed_items_details: { timeout: 'd1' } }, 'row.failed_items_details', 'is not a list'],
    [{ skipped_items_details: { x: [7] } }, 'row.skipped_items_details', 'holds 7'],
    [{ skipped_items_details: [{ doc_id: 'd' }] }, 'row.skipped_items_details', '{reason, doc_id}'],
    [{ conflict_details: { v: ['d1'] } }, 'row.conflict_details', 'holds "d1"'],
    [{ platform_data: ['x'] }, 'row.platform_data', '["x"]'],
  ])('refuses %j naming the attribute and quoting the value', (row, field, quoted) => {
    expect(() => parseInlineDetails(row)).toThrow(InvalidInputError);
    expect(() => parseInlineDetails(row)).toThrow(field);
    expect(() => parseInlineDetails(row)).toThrow(quoted);
  });

  it('a reason named __proto__ stays data', () => {
    const r = parseInlineDetails({ failed_items_details: JSON.parse('{"__proto__": ["d"]}') });
    expect(Object.keys(r.details?.failed ?? {})).toEqual(['__proto__']);
  });

  it('keeps numbers a float64 would not reproduce as their exact text, whichever way the client unmarshalled them', () => {
    const { row } = archivableRow({
      exact_read: exactNumber('9223372036854775807'),
      fraction: exactNumber('0.1000000000000000000001'),
      e: exactNumber('1.5E+100'),
      small: exactNumber('42'),
      from_bigint: 12345678901234567891n,
      safe_bigint: 7n,
      from_wrap: NumberValue.from('9007199254740993'),
      ns: new Set([exactNumber('9007199254740993'), 3, exactNumber('9007199254740992')]),
    });
    expect(canonicalJson(row)).toBe(
      '{"e":1.5E+100,"exact_read":9223372036854775807,"fraction":0.1000000000000000000001,' +
        '"from_bigint":12345678901234567891,"from_wrap":9007199254740993,' +
        '"ns":[3,9007199254740992,9007199254740993],"safe_bigint":7,"small":42}',
    );
    expect(row.small).toBe(42);
  });
});
