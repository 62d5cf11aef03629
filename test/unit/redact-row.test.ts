import { redactRow } from '../../shared/redact/redact-row';

describe("redactRow: a pre-migration row's inline details less one document, each shape kept", () => {
  it('reason → string set: the id leaves the set; a set left empty becomes an empty list', () => {
    const r = redactRow(
      { failed_items_details: { timeout: new Set(['d1', 'd2']), gone: new Set(['d1']) } },
      'd1',
    );
    expect(r).toEqual({
      changed: { failed_items_details: { timeout: new Set(['d2']), gone: [] } },
      removed: 2,
    });
  });

  it('reason → list, and a list of {reason, doc_id}: every listing of the id goes', () => {
    const r = redactRow(
      {
        skipped_items_details: { x: ['d1', 'd1', 'd3'] },
        failed_items_details: [
          { reason: 'a', doc_id: 'd1' },
          { reason: 'a', doc_id: 'd4' },
        ],
      },
      'd1',
    );
    expect(r.removed).toBe(3);
    expect(r.changed).toEqual({
      skipped_items_details: { x: ['d3'] },
      failed_items_details: [{ reason: 'a', doc_id: 'd4' }],
    });
  });

  it('conflict items by their doc_id; other attributes and rows without the id are not touched', () => {
    const row = {
      conflict_details: { version: [{ doc_id: 'd1', existing_version: 4 }, { doc_id: 'd5' }] },
      platform_data: { note: 'd1' },
      skipped_items_details: { x: ['d9'] },
    };
    expect(redactRow(row, 'd1')).toEqual({
      changed: { conflict_details: { version: [{ doc_id: 'd5' }] } },
      removed: 1,
    });
    expect(redactRow(row, 'nope')).toEqual({ changed: {}, removed: 0 });
    expect(redactRow({ job_id: 'j' }, 'd1')).toEqual({ changed: {}, removed: 0 });
  });
});
