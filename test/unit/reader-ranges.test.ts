import { planReads, sliceMembers } from '../../shared/reader';

describe('planReads', () => {
  it('one GET for touching members of a part, separate GETs across a gap or another part', () => {
    const reads = planReads([
      { id: 'job', key: 'p1', offset: 130, length: 70 },
      { id: 'pd', key: 'p1', offset: 100, length: 30 },
      { id: 'far', key: 'p1', offset: 500, length: 10 },
      { id: 'other', key: 'p0', offset: 100, length: 30 },
    ]);
    expect(reads).toEqual([
      { key: 'p0', offset: 100, length: 30, members: [{ id: 'other', offset: 0, length: 30 }] },
      {
        key: 'p1',
        offset: 100,
        length: 100,
        members: [
          { id: 'pd', offset: 0, length: 30 },
          { id: 'job', offset: 30, length: 70 },
        ],
      },
      { key: 'p1', offset: 500, length: 10, members: [{ id: 'far', offset: 0, length: 10 }] },
    ]);
  });

  it('overlapping or repeated ranges share a read', () => {
    const reads = planReads([
      { id: 'a', key: 'p', offset: 0, length: 50 },
      { id: 'b', key: 'p', offset: 10, length: 20 },
      { id: 'c', key: 'p', offset: 0, length: 50 },
    ]);
    expect(reads).toHaveLength(1);
    expect(reads[0]).toMatchObject({ offset: 0, length: 50 });
  });

  it('nothing wanted → no reads', () => {
    expect(planReads([])).toEqual([]);
  });
});

describe('sliceMembers', () => {
  it('cuts each member out of its read body', () => {
    const reads = planReads([
      { id: 'x', key: 'p', offset: 2, length: 3 },
      { id: 'y', key: 'p', offset: 5, length: 2 },
    ]);
    const part = Buffer.from('0123456789');
    const got = sliceMembers(reads, [part.subarray(2, 7)]);
    expect(Buffer.from(got.get('x') ?? []).toString()).toBe('234');
    expect(Buffer.from(got.get('y') ?? []).toString()).toBe('56');
  });
});
