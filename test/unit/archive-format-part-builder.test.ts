import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { BlockSlicer, decodeBlock, PartBuilder } from '../../shared/archive/format';
import { buildPart, details, jobMeta } from '../support/archive-fixture';

const SHOP = 'acme.myshopify.com';
const src = (key: string, size: number) => ({ key, size, etag: 'e', sha256: 'h' });

const sample = () =>
  buildPart({
    shopId: SHOP,
    month: '2026-01',
    jobs: [
      {
        jobId: 'j1',
        details: details({ chunk_ids: ['p0'], failed: { r: ['d1', 'd2'] } }),
        platformData: { a: 1, b: 2 },
        sources: [src('k1', 40)],
      },
      // Same platform data (other key order): written once, referenced twice.
      {
        jobId: 'j2',
        details: details({ chunk_ids: ['p0'] }),
        platformData: { b: 2, a: 1 },
        sources: [src('k2', 2)],
      },
      { jobId: 'j3', details: details({ chunk_ids: ['p1'] }), platformData: null },
    ],
  });

/** The distinct blocks the manifest names (several records share one). */
const allRanges = (p: Awaited<ReturnType<typeof sample>>['pending']) => {
  const blocks = new Map<number, { id: string; offset: number; length: number }>();
  // The blocks, and the trailing filters member when a block lists a document.
  for (const r of [
    p.header,
    ...Object.values(p.platform_data),
    ...Object.values(p.jobs),
    ...(p.filters ? [p.filters] : []),
  ]) {
    blocks.set(r.offset, { id: `block@${r.offset}`, offset: r.offset, length: r.length });
  }
  return [...blocks.values()].sort((a, b) => a.offset - b.offset);
};

/** A job whose record is `kb` KB of doc ids. */
const bigJob = (i: number, kb: number) => ({
  jobId: `big${i}`,
  details: details({
    chunk_ids: ['p0'],
    failed: {
      r: Array.from(
        { length: Math.ceil((kb * 1024) / 40) },
        // No trailing number: stored whole, ~40 bytes each (numbered ids become offsets, doc-lists.ts).
        (_, d) => `gid://shopify/Product/${7e12 + i * 1e6 + d}/v`,
      ),
    },
  }),
});

describe('PartBuilder', () => {
  it('lays out header, then per job its (first-seen) platform data and its record, as lines of blocks that tile the part', async () => {
    const { bytes, pending } = await sample();
    expect(pending.header).toMatchObject({ offset: 0, line: { offset: 0 } });
    expect(Object.keys(pending.platform_data)).toHaveLength(1);
    const ref = Object.keys(pending.platform_data)[0];
    expect(pending.jobs.j1?.platform_data_ref).toBe(ref);
    expect(pending.jobs.j2?.platform_data_ref).toBe(ref);
    expect(pending.jobs.j3?.platform_data_ref).toBeNull();
    expect(BlockSlicer.tilingProblem(allRanges(pending), bytes.length)).toBeNull();
    // A small part is one block (then its filters member); j1's platform data is the line right before j1's record.
    expect(allRanges(pending)).toHaveLength(pending.filters ? 2 : 1);
    const pd = ref ? pending.platform_data[ref] : undefined;
    expect((pd?.line?.offset ?? 0) + (pd?.line?.length ?? 0)).toBe(pending.jobs.j1?.line?.offset);
  });

  it('packs lines into blocks of about 64 KB, compressed across jobs; a bigger record is a block of its own', async () => {
    const { bytes, pending } = await buildPart({
      shopId: SHOP,
      month: '2026-01',
      jobs: [...Array.from({ length: 40 }, (_, i) => bigJob(i, 4)), bigJob(99, 200)],
    });
    const blocks = allRanges(pending);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    expect(BlockSlicer.tilingProblem(blocks, bytes.length)).toBeNull();
    const big = pending.jobs.big99;
    expect(big?.line).toEqual({ offset: 0, length: expect.any(Number) });
    expect(big?.line?.length).toBeGreaterThan(64 * 1024);
    // Every record still decodes from its block alone.
    for (const [jobId, r] of Object.entries(pending.jobs)) {
      expect(
        decodeBlock(bytes.subarray(r.offset, r.offset + r.length), jobId, r.line, { shopId: SHOP }).record,
      ).toMatchObject({ job_id: jobId });
    }
  });

  it('every range decodes alone to the record it names, with the digest the manifest recorded', async () => {
    const { bytes, pending } = await sample();
    const at = (r: { offset: number; length: number }) => bytes.subarray(r.offset, r.offset + r.length);
    expect(decodeBlock(at(pending.header), 'h', pending.header.line).record).toMatchObject({
      type: 'part',
      shop_id: SHOP,
      month: '2026-01',
    });
    for (const [jobId, r] of Object.entries(pending.jobs)) {
      const { record, sha256 } = decodeBlock(at(r), jobId, r.line, { shopId: SHOP });
      expect(record).toMatchObject({
        type: 'job',
        job_id: jobId,
        shop_id: SHOP,
        platform_data_ref: r.platform_data_ref,
      });
      expect(sha256).toBe(r.sha256);
    }
    for (const [ref, r] of Object.entries(pending.platform_data)) {
      const { record, sha256 } = decodeBlock(at(r), ref, r.line);
      expect(record).toEqual({ type: 'platform_data', ref, data: { a: 1, b: 2 } });
      expect(sha256).toBe(r.sha256);
    }
  });

  it('the manifest carries size, whole-part sha256, bytes in and counts', async () => {
    const { bytes, pending } = await sample();
    expect(pending.size).toBe(bytes.length);
    expect(pending.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(pending.bytes_in).toBe(42);
    expect(pending.jobs.j1?.counts).toEqual({ chunk_ids: 1, failed: 2, skipped: 0, conflict: 0 });
    expect(pending.jobs.j1?.sources).toEqual([src('k1', 40)]);
  });

  it('refuses jobs before the header, and finish without anything written', async () => {
    const meta = { shopId: SHOP, month: '2026-01', partName: 'p', partKey: 'k', runId: 'r', createdAt: 't' };
    const b = new PartBuilder(meta, async () => {});
    await expect(b.finish()).rejects.toThrow(/nothing written/);
    await expect(
      b.addJob({
        jobId: 'j',
        meta: {} as never,
        details: details({ chunk_ids: [] }),
        platformData: null,
        sources: [],
      }),
    ).rejects.toThrow(/writeHeader/);
    await b.writeHeader();
    expect(b.jobCount).toBe(0);
    expect(b.size).toBe(0); // the header waits in the open block
    await b.finish();
    expect(b.size).toBeGreaterThan(0);
  });
});

describe('BlockSlicer', () => {
  it.each([1, 7, 64, 100000])('cuts a part streamed in %i-byte chunks into its members', async (chunk) => {
    const { bytes, pending } = await sample();
    const ranges = allRanges(pending);
    const slicer = new BlockSlicer(ranges);
    const out: Array<{ id: string; bytes: Buffer }> = [];
    for (let i = 0; i < bytes.length; i += chunk) out.push(...slicer.push(bytes.subarray(i, i + chunk)));
    expect(slicer.complete).toBe(true);
    expect(out.map((m) => m.id)).toEqual(ranges.map((r) => r.id));
    for (const [i, r] of ranges.entries()) {
      expect(
        Buffer.compare(out[i]?.bytes ?? Buffer.alloc(0), bytes.subarray(r.offset, r.offset + r.length)),
      ).toBe(0);
    }
  });

  it('stray bytes after the last member → not complete', async () => {
    const { bytes, pending } = await sample();
    const slicer = new BlockSlicer(allRanges(pending));
    slicer.push(Buffer.concat([bytes, Buffer.from('x')]));
    expect(slicer.complete).toBe(false);
  });

  it('tilingProblem names gaps, overlaps, empty members and a wrong total', () => {
    expect(
      BlockSlicer.tilingProblem(
        [
          { offset: 0, length: 5 },
          { offset: 6, length: 5 },
        ],
        11,
      ),
    ).toMatch(/at byte 5/);
    expect(
      BlockSlicer.tilingProblem(
        [
          { offset: 0, length: 5 },
          { offset: 4, length: 5 },
        ],
        9,
      ),
    ).toMatch(/at byte 5/);
    expect(BlockSlicer.tilingProblem([{ offset: 0, length: 0 }], 0)).toMatch(/empty member/);
    expect(BlockSlicer.tilingProblem([{ offset: 0, length: 5 }], 6)).toMatch(/part has 6/);
    expect(BlockSlicer.tilingProblem([], 0)).toBeNull();
  });
});

describe('the archived row at rest', () => {
  /** One job with `row` through PartBuilder: its stored line and the record a reader gets back. */
  const roundTrip = async (row: Record<string, unknown>) => {
    const members: Buffer[] = [];
    const b = new PartBuilder(
      { shopId: SHOP, month: '2026-01', partName: 'p', partKey: 'k', runId: 'r', createdAt: 'c' },
      async (m) => {
        members.push(m);
      },
    );
    await b.writeHeader();
    await b.addJob({
      jobId: 'j1',
      meta: jobMeta(),
      details: details({ chunk_ids: ['p0'] }),
      platformData: null,
      sources: [src('job-details/j1/a.json.gz', 3)],
      row: { row: row as never, reduced: {} },
    });
    const m = await b.finish();
    const at = m.jobs.j1 as (typeof m.jobs)[string];
    const part = Buffer.concat(members);
    const block = part.subarray(at.offset, at.offset + at.length);
    const stored = JSON.parse(
      gunzipSync(block)
        .subarray(at.line?.offset, (at.line?.offset ?? 0) + (at.line?.length ?? 0))
        .toString(),
    );
    const read = decodeBlock(block, 'w', at.line, { shopId: SHOP }).record;
    return { stored, read: read.type === 'job' ? read.row : undefined };
  };
  const row = (completedAt: string, ttl: unknown) => ({
    completed_at: completedAt,
    job_id: 'j1',
    job_status: 'COMPLETED',
    ttl,
  });

  it('keeps the TTL as seconds after the completion (one constant a deployment), and reads the row back exactly', async () => {
    for (const completedAt of [
      '2026-01-15T13:40:56.959Z',
      '2026-01-15T13:40:56.959123+00:00',
      '2026-01-15T13:40:56Z',
    ]) {
      const want = row(completedAt, 1768484456 + 90 * 86400);
      const { stored, read } = await roundTrip(want);
      expect(stored.row).not.toHaveProperty('ttl');
      expect(stored.row_ttl_after).toBe(90 * 86400);
      expect(JSON.stringify(read)).toBe(JSON.stringify(want));
    }
  });

  it('keeps the TTL as it is when the completion is not a UTC timestamp or the TTL not whole seconds', async () => {
    for (const want of [
      row('2026-01-15T14:40:56.959+01:00', 1768484456),
      row('2026-02-30T13:40:56Z', 1768484456),
      row('2026-01-15T13:40:56.959Z', 1768484456.5),
      row('2026-01-15T13:40:56.959Z', '1768484456'),
    ]) {
      const { stored, read } = await roundTrip(want);
      expect(stored).not.toHaveProperty('row_ttl_after');
      expect(stored.row.ttl).toEqual(want.ttl);
      expect(JSON.stringify(read)).toBe(JSON.stringify(want));
    }
  });
});
