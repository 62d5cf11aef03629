import { commitPart, emptyMonthIndex, encodeRecordBlock, monthIndexKey } from '../../shared/archive/format';
import { CorruptObjectError } from '../../shared/errors';
import { checkJobMember, checkPlatformMember, entriesFromIndex } from '../../shared/reader';
import { buildPart, details, indexEntries, jobMeta } from '../support/archive-fixture';

const SHOP = 'acme.myshopify.com';
const MONTH = '2026-01';

const setup = async () => {
  const part = await buildPart({
    shopId: SHOP,
    month: MONTH,
    jobs: [
      { jobId: 'j1', details: details({ chunk_ids: ['p0'], failed: { r: ['d1'] } }), platformData: { x: 1 } },
    ],
  });
  const e = indexEntries(part, '2026-02-15T03:00:00.000Z');
  const index = commitPart(emptyMonthIndex(SHOP, MONTH, 'x'), e.part, e.jobs, 'y');
  const [a] = entriesFromIndex(
    index,
    { indexKey: monthIndexKey(SHOP, MONTH), shopId: SHOP, month: MONTH },
    'j1',
  );
  if (!a) throw new Error('fixture');
  const slice = (r: { offset: number; length: number }) => part.bytes.subarray(r.offset, r.offset + r.length);
  return { part, a, slice };
};

describe('checkJobMember', () => {
  it('returns the record when digest, shop and job match', async () => {
    const { a, slice } = await setup();
    const rec = checkJobMember(slice(a.entry), a, SHOP, 'j1');
    expect(rec).toMatchObject({
      type: 'job',
      job_id: 'j1',
      shop_id: SHOP,
      details: { failed: { r: ['d1'] } },
    });
  });

  it('a record of another job or shop (index pointing at the wrong member) → CorruptObjectError', async () => {
    const { a, slice } = await setup();
    expect(() => checkJobMember(slice(a.entry), a, SHOP, 'j2')).toThrow(/not j2/);
    expect(() => checkJobMember(slice(a.entry), a, 'other', 'j1')).toThrow(CorruptObjectError);
  });

  it('a platform-data member where a job record was expected → CorruptObjectError', async () => {
    const { a, slice } = await setup();
    const pd = a.entry.platform_data;
    if (!pd) throw new Error('fixture');
    const enc = encodeRecordBlock({ type: 'platform_data', ref: pd.ref ?? '', data: { x: 1 } });
    const pointed = { ...a, entry: { ...a.entry, ...pd, sha256: enc.sha256 } };
    expect(() => checkJobMember(slice(pd), pointed, SHOP, 'j1')).toThrow(/expected a job record/);
  });

  it('short or flipped bytes → CorruptObjectError', async () => {
    const { a, slice } = await setup();
    const bytes = Buffer.from(slice(a.entry));
    expect(() => checkJobMember(bytes.subarray(0, bytes.length - 1), a, SHOP, 'j1')).toThrow(
      /expected \d+ bytes/,
    );
    const mid = Math.floor(bytes.length / 2);
    bytes[mid] = (bytes[mid] ?? 0) ^ 0xff;
    expect(() => checkJobMember(bytes, a, SHOP, 'j1')).toThrow(CorruptObjectError);
  });
});

describe('checkPlatformMember', () => {
  it('returns the data at the ref the entry (or its job record) names', async () => {
    const { a, slice } = await setup();
    const pd = a.entry.platform_data;
    if (!pd) throw new Error('fixture');
    expect(checkPlatformMember(slice(pd), a, null, SHOP)).toEqual({ x: 1 });
  });

  it("a stored index names no ref: the job record's ref is checked", async () => {
    const { a, slice } = await setup();
    const pd = a.entry.platform_data;
    if (!pd?.ref) throw new Error('fixture');
    const { ref, ...located } = pd;
    const slim = { ...a, entry: { ...a.entry, platform_data: located } };
    expect(checkPlatformMember(slice(pd), slim, ref, SHOP)).toEqual({ x: 1 });
    expect(() => checkPlatformMember(slice(pd), slim, '9', SHOP)).toThrow(
      /does not match ref 9|holds no platform data 9/,
    );
    expect(() => checkPlatformMember(slice(pd), slim, null, SHOP)).toThrow(/names no platform data/);
  });

  it('a job record where platform data was expected → CorruptObjectError', async () => {
    const { a } = await setup();
    const rec = encodeRecordBlock({
      type: 'job',
      shop_id: SHOP,
      job_id: 'j1',
      job: jobMeta(),
      details: details({ chunk_ids: [] }),
      platform_data_ref: null,
      sources: [],
    }).member;
    const pd = a.entry.platform_data;
    if (!pd) throw new Error('fixture');
    const { line: _line, ...member } = pd;
    const entry = { ...a, entry: { ...a.entry, platform_data: { ...member, length: rec.length } } };
    expect(() => checkPlatformMember(rec, entry, null, SHOP)).toThrow(
      /expected a platform_data record|holds no platform data/,
    );
  });
});
