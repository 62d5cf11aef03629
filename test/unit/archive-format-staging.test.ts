import { newIntent, parseIntent } from '../../shared/archive/format';
import { CorruptObjectError, UnsupportedFormatError } from '../../shared/errors';

const ID = {
  shop_id: 's',
  month: '2026-01',
  part: 'part-20260101T000000Z-aaaaaaaa.jsonl.gz',
  part_key: 'job-details-cold/s/2026-01/part-20260101T000000Z-aaaaaaaa.jsonl.gz',
  run_id: 'r',
  created_at: '2026-01-01T00:00:00.000Z',
};

describe('staging: the intent is the only stored hand-off document', () => {
  it('an intent round-trips through JSON', () => {
    const intent = newIntent(ID);
    expect(parseIntent(Buffer.from(JSON.stringify(intent)), 'k')).toEqual(intent);
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['no format', '{}', /not a job-details-archive\/intent@1\.0/],
    ['null', 'null', /not an object/],
  ])('%s → CorruptObjectError naming the key', (_name, text, reason) => {
    const read = () => parseIntent(Buffer.from(text), 'job-details-index/s/m/pending/x.json');
    expect(read).toThrow(CorruptObjectError);
    expect(read).toThrow(reason);
    expect(read).toThrow('pending/x.json');
  });

  it('an intent a pre-1.0 build wrote is refused with the fix, not read', () => {
    const old = Buffer.from(JSON.stringify({ ...ID, format: 'job-details-archive/intent@1' }));
    expect(() => parseIntent(old, 'k')).toThrow(UnsupportedFormatError);
    expect(() => parseIntent(old, 'k')).toThrow(/rebuild the local data/);
  });
});
