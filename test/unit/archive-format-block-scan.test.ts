import { gzipSync } from 'node:zlib';
import { BlockScanner, encodeRecordBlock, gzipMemberLength } from '../../shared/archive/format';

const members = [
  encodeRecordBlock({
    type: 'platform_data',
    ref: 'sha256:x',
    data: { big: Array.from({ length: 20_000 }, (_, i) => ((i * 7919) % 65_536).toString(36)).join('') },
  }).member,
  encodeRecordBlock({ type: 'platform_data', ref: 'sha256:z', data: { n: 1 } }).member,
  // A member with FNAME and FEXTRA set (not what we write, but valid gzip): the header is parsed.
  Buffer.concat([
    Buffer.from([0x1f, 0x8b, 8, 0x0c, 0, 0, 0, 0, 0, 3, 3, 0, 0x61, 0x62, 0x63]),
    Buffer.from('name\0'),
    gzipSync(Buffer.from('{"a":1}\n')).subarray(10),
  ]),
];
const part = Buffer.concat(members);

describe('gzipMemberLength', () => {
  it('finds where the first member ends, with or without more bytes after it', () => {
    for (const m of members)
      expect(gzipMemberLength(Buffer.concat([m, members[1] ?? m]))).toEqual({ length: m.length });
  });

  it('says incomplete for a cut member and bad for bytes that are not gzip', () => {
    expect(gzipMemberLength(part.subarray(0, 5))).toEqual({ incomplete: true });
    expect(gzipMemberLength(part.subarray(0, (members[0]?.length ?? 0) - 3))).toEqual({ incomplete: true });
    expect(gzipMemberLength(Buffer.from('{"not":"gzip"}\n'))).toEqual({ bad: 'not a gzip member' });
  });
});

describe('BlockScanner', () => {
  it.each([1, 7, 4096, part.length])('cuts a part fed in %i-byte chunks into its members', (size) => {
    const scanner = new BlockScanner(1 << 20);
    const got: Array<{ offset: number; bytes: Buffer }> = [];
    for (let at = 0; at < part.length; at += size) got.push(...scanner.push(part.subarray(at, at + size)));
    got.push(...scanner.finish());
    const offsets = members.map((_, i) => members.slice(0, i).reduce((n, m) => n + m.length, 0));
    expect(got.map((g) => g.offset)).toEqual(offsets);
    expect(got.map((g) => Buffer.from(g.bytes))).toEqual(members);
  });

  it('refuses a truncated last member and a member over the limit', () => {
    const cut = new BlockScanner(1 << 20);
    cut.push(part.subarray(0, part.length - 4));
    expect(() => cut.finish()).toThrow(/truncated member/);
    // Over the limit, whether the member is complete in the buffer or still arriving.
    expect(() => new BlockScanner(1000).push(part)).toThrow(/at byte 0: member longer than 1000 bytes/);
    expect(() => new BlockScanner(1000).push(part.subarray(0, 5000))).toThrow(/longer than 1000 bytes/);
  });
});
