import {
  commitPart,
  emptyMonthIndex,
  encodeMember,
  monthIndexKey,
  platformDataRef,
} from '../../shared/archive/format';
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

  it('a digest other than the index entry’s → CorruptObjectError naming part and range', async () => {
    const { a, slice } = await setup();
    const wrong = { ...a, entry: { ...a.entry, sha256: 'f'.repeat(64) } };
    expect(() => checkJobMember(slice(a.entry), wrong, SHOP, 'j1')).toThrow(CorruptObjectError);
    expect(() => checkJobMember(slice(a.entry), wrong, SHOP, 'j1')).toThrow(
      `${a.partKey} bytes ${a.entry.offset}-`,
    );
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
    const enc = encodeMember({ type: 'platform_data', ref: pd.ref ?? '', data: { x: 1 } });
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
  it('returns the data when its content hash is the ref', async () => {
    const { a, slice } = await setup();
    const pd = a.entry.platform_data;
    if (!pd) throw new Error('fixture');
    expect(checkPlatformMember(slice(pd), a, null, SHOP)).toEqual({ x: 1 });
  });

  it("index@2 entries name no ref: the job record's ref is checked instead", async () => {
    const { a, slice } = await setup();
    const pd = a.entry.platform_data;
    if (!pd?.ref) throw new Error('fixture');
    const { ref, ...located } = pd;
    const slim = { ...a, entry: { ...a.entry, platform_data: located } };
    expect(checkPlatformMember(slice(pd), slim, ref, SHOP)).toEqual({ x: 1 });
    expect(() => checkPlatformMember(slice(pd), slim, 'sha256:0000', SHOP)).toThrow(/does not match ref/);
    expect(() => checkPlatformMember(slice(pd), slim, null, SHOP)).toThrow(/names no platform data/);
  });

  it('data that does not hash to the ref → CorruptObjectError', async () => {
    const { a } = await setup();
    const pd = a.entry.platform_data;
    if (!pd) throw new Error('fixture');
    // part@1–3 refs are content hashes: a payload that does not hash to its ref is caught.
    const ref = platformDataRef({ x: 1 });
    const forged = encodeMember({ type: 'platform_data', ref, data: { x: 2 } }).member;
    // A one-record member (part@1 layout): the entry has no line inside it.
    const { line: _line, ...member } = pd;
    const entry = {
      ...a,
      entry: { ...a.entry, platform_data: { ...member, ref, length: forged.length } },
    };
    expect(() => checkPlatformMember(forged, entry, null, SHOP)).toThrow(/does not match ref/);
  });

  it('a job record where platform data was expected → CorruptObjectError', async () => {
    const { a } = await setup();
    const rec = encodeMember({
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
