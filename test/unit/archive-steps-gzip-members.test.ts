import { gunzipSync, gzipSync } from 'node:zlib';
import {
  emptyMemberOf,
  gzipMember,
  memberOfLength,
  splitMembers,
} from '../../shared/archive/steps/run-files/gzip-members';

describe('run scratch gzip members', () => {
  test('an empty body is no member at all; any other is one member', () => {
    expect(gzipMember(Buffer.alloc(0)).length).toBe(0);
    expect(gunzipSync(gzipMember(Buffer.from('a\n'))).toString()).toBe('a\n');
  });

  test('an empty member of exactly the asked length inflates to nothing, from 21 bytes up', () => {
    expect(emptyMemberOf(20)).toBeNull();
    for (const n of [21, 22, 100, 70_000]) {
      const m = emptyMemberOf(n);
      expect(m?.length).toBe(n);
      expect(gunzipSync(m as Buffer).length).toBe(0);
    }
  });

  test('a body rewritten as one member of the old length, or null when it cannot fit', () => {
    const body = Buffer.from('{"job_id":"x","error_message":"see ******************"}\n'.repeat(3));
    const old = gzipSync(body).length + 7;
    const m = memberOfLength(body, old);
    expect(m?.length).toBe(old);
    expect(gunzipSync(m as Buffer).equals(body)).toBe(true);
    expect(memberOfLength(body, gzipSync(body).length)?.length).toBe(gzipSync(body).length);
    expect(memberOfLength(body, 10)).toBeNull();
  });

  test('members are split at their exact ends, whatever their header fields; what follows is the rest', () => {
    const a = gzipMember(Buffer.from('one\n'));
    const b = emptyMemberOf(40) as Buffer;
    const c = memberOfLength(Buffer.from('three\n'), 60) as Buffer;
    const bytes = Buffer.concat([a, b, c, Buffer.from('not gzip')]);
    const { members, rest } = splitMembers(bytes);
    expect(members.map((m) => [m.start, m.end, m.body.toString()])).toEqual([
      [0, a.length, 'one\n'],
      [a.length, a.length + 40, ''],
      [a.length + 40, a.length + 100, 'three\n'],
    ]);
    expect(rest).toBe(a.length + 100);
    // A member cut short is no member.
    expect(splitMembers(a.subarray(0, a.length - 1))).toEqual({ members: [], rest: 0 });
  });
});
