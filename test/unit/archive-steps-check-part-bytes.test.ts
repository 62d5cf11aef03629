import type { StagedPart } from '../../shared/archive/steps/archive/staged';
import { checkPartBytes } from '../../shared/archive/steps/verify/verify-part';
import { type BuiltPart, buildPart, details } from '../support/archive-fixture';

/**
 * checkPartBytes (steps/verify/verify-part.ts) on a packed segment as built: `records: false` checks its
 * framing (members, lines, size, sha256) and leaves its records to the check where the shared part stores
 * them (verify-shared.ts, tested in archive-steps-verify-shared.test.ts), so no record is decoded twice.
 */
const segment = (filters?: false) =>
  buildPart({
    shopId: 'seg.myshopify.com',
    month: '2026-01',
    shopOnLines: true,
    ...(filters === false ? { filters } : {}),
    jobs: [1, 2, 3].map((n) => ({
      jobId: `sg${n}`,
      details: details({ chunk_ids: ['p0'], failed: { r: [`doc-${n}`] } }),
      platformData: { n },
    })),
  });

const staged = (b: BuiltPart): StagedPart => ({ ...(b.pending as StagedPart), etag: 'e' });

const problem = async (m: StagedPart, bytes: Buffer, records?: boolean): Promise<string | null> => {
  try {
    await checkPartBytes(
      m,
      'test',
      [bytes],
      (reason) => {
        throw new Error(reason);
      },
      records === undefined ? {} : { records },
    );
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

/** The manifest with one job's entry changed (its bytes stay as built). */
const withJob = (m: StagedPart, change: (e: StagedPart['jobs'][string]) => StagedPart['jobs'][string]) => {
  const [id, e] = Object.entries(m.jobs)[0] as [string, StagedPart['jobs'][string]];
  return { ...m, jobs: { ...m.jobs, [id]: change(e) } };
};

describe('checkPartBytes of a packed segment', () => {
  it('passes an intact segment either way', async () => {
    const b = await segment(false);
    expect(staged(b).doc_filters).toBeUndefined();
    expect(await problem(staged(b), b.bytes)).toBeNull();
    expect(await problem(staged(b), b.bytes, false)).toBeNull();
  });

  it('framing alone leaves the records to be decoded where they are stored', async () => {
    const b = await segment(false);
    // A manifest whose record says another status than the stored line: only decoding finds it.
    const m = withJob(staged(b), (e) => ({ ...e, status: 'failed' }));
    expect(await problem(m, b.bytes)).toMatch(/status or completed_at differs/);
    expect(await problem(m, b.bytes, false)).toBeNull();
  });

  it('framing alone still refuses lines the manifest does not tile, other bytes and a short segment', async () => {
    const b = await segment(false);
    const m = staged(b);
    const longer = withJob(m, (e) => ({
      ...e,
      line: { offset: e.line?.offset ?? 0, length: (e.line?.length ?? 0) + 1 },
    }));
    expect(await problem(longer, b.bytes, false)).toMatch(/line/);
    expect(await problem({ ...m, sha256: '0'.repeat(64) }, b.bytes, false)).toMatch(/sha256/);
    expect(await problem(m, b.bytes.subarray(0, b.bytes.length - 1), false)).not.toBeNull();
  });

  it('checks a manifest with document filters whole (its filters need the decoded records)', async () => {
    const b = await segment();
    expect(staged(b).doc_filters?.blocks.length).toBeGreaterThan(0);
    const m = withJob(staged(b), (e) => ({ ...e, status: 'failed' }));
    expect(await problem(m, b.bytes, false)).toMatch(/status or completed_at differs/);
  });
});
