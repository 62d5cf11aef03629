import {
  PENDING_FORMAT,
  parsePendingPart,
  parseVerifiedPart,
  VERIFIED_FORMAT,
} from '../../shared/archive/format/staging';
import { CorruptObjectError } from '../../shared/errors';
import { buildPart, details } from '../support/archive-fixture';

describe('staging manifests', () => {
  it('a pending manifest from PartBuilder round-trips through JSON', async () => {
    const { pending } = await buildPart({
      shopId: 's',
      month: '2026-01',
      jobs: [{ jobId: 'j1', details: details({ chunk_ids: ['p0'] }), platformData: { a: 1 } }],
    });
    expect(pending.format).toBe(PENDING_FORMAT);
    expect(parsePendingPart(Buffer.from(JSON.stringify(pending)), 'k')).toEqual(pending);
  });

  it('a verified manifest is recognised by its format', () => {
    const doc = { format: VERIFIED_FORMAT, part: { name: 'p' }, jobs: {} };
    expect(parseVerifiedPart(Buffer.from(JSON.stringify(doc)), 'k')).toEqual(doc);
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['no format', '{}', /not a job-details-archive\/pending@2/],
    ['the other manifest', JSON.stringify({ format: VERIFIED_FORMAT }), /pending@2/],
    ['null', 'null', /pending@2/],
  ])('%s → CorruptObjectError naming the key', (_name, text, reason) => {
    expect(() => parsePendingPart(Buffer.from(text), 'job-details-index/s/m/pending/x.json')).toThrow(
      CorruptObjectError,
    );
    expect(() => parsePendingPart(Buffer.from(text), 'job-details-index/s/m/pending/x.json')).toThrow(reason);
    expect(() => parsePendingPart(Buffer.from(text), 'job-details-index/s/m/pending/x.json')).toThrow(
      'pending/x.json',
    );
  });

  it('a pending manifest is not a verified one', () => {
    expect(() => parseVerifiedPart(Buffer.from(JSON.stringify({ format: PENDING_FORMAT })), 'k')).toThrow(
      /verified@1/,
    );
  });
});
