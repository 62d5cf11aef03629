/**
 * The seeded PRNG and the simulated fleet plan behind `jobarchive seed`: same seed → same fleet
 * (ids, times, details), and every planned job is one the writer library accepts and ends in the
 * status it was planned for.
 */

import { monthStart, type PlannedJob, planFleet, shopIdFor } from '../../infra/cli/fleet';
import { createPrng, seededJobIds } from '../../infra/cli/prng';
import { validateJobId } from '../../shared/ids';
import { MAX_CHUNKS_PER_FLUSH } from '../../shared/jobs/record-flush';
import { terminalStatusFor } from '../../shared/jobs/types';

const NOW = new Date('2026-05-10T12:00:00.000Z');
const fleet = (seed: number, over: Partial<Parameters<typeof planFleet>[0]> = {}) =>
  planFleet({ shops: 6, jobsPerShop: 5, months: 3, seed, now: NOW, ...over });

describe('createPrng', () => {
  it('repeats its sequence for the same seed and differs for another', () => {
    const seq = (seed: number) => {
      const p = createPrng(seed);
      return Array.from({ length: 50 }, () => p.uint32());
    };
    expect(seq(7)).toEqual(seq(7));
    expect(seq(7)).not.toEqual(seq(8));
    // Seeds differing only above 32 bits still give different streams.
    expect(seq(1)).not.toEqual(seq(1 + 2 ** 32));
  });

  it('draws within the asked ranges', () => {
    const p = createPrng(3);
    for (let i = 0; i < 2000; i++) {
      const f = p.next();
      expect(f).toBeGreaterThanOrEqual(0);
      expect(f).toBeLessThan(1);
      const n = p.int(5, 9);
      expect(Number.isInteger(n) && n >= 5 && n <= 9).toBe(true);
    }
    const seen = new Set(Array.from({ length: 500 }, () => p.int(0, 3)));
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
    const w = Array.from({ length: 1000 }, () => p.weighted({ a: 9, b: 1 }));
    expect(w.filter((x) => x === 'a').length).toBeGreaterThan(800);
  });

  it('forks independent, reproducible streams', () => {
    const a = createPrng(11);
    const b = createPrng(11);
    expect(a.fork().uint32()).toBe(b.fork().uint32());
    expect(a.fork().uint32()).not.toBe(a.fork().uint32());
  });
});

describe('seededJobIds', () => {
  it('gives valid 13-char base32 job ids, the same ones for the same seed', () => {
    const ids = (seed: number) => {
      const next = seededJobIds(createPrng(seed));
      return Array.from({ length: 200 }, next);
    };
    const a = ids(5);
    expect(ids(5)).toEqual(a);
    expect(new Set(a).size).toBe(a.length);
    for (const id of a) {
      expect(id).toMatch(/^[a-z2-7]{13}$/);
      expect(validateJobId(id)).toBe(id);
    }
  });
});

const sumCounts = (j: PlannedJob) =>
  j.flushes.reduce(
    (c, f) => ({
      processed: c.processed + f.counts.processed,
      failed: c.failed + f.counts.failed,
      skipped: c.skipped + f.counts.skipped,
      conflict: c.conflict + f.counts.conflict,
    }),
    { processed: 0, failed: 0, skipped: 0, conflict: 0 },
  );

describe('planFleet', () => {
  it('is deterministic for a given seed and different for another', () => {
    expect(fleet(1)).toEqual(fleet(1));
    expect(fleet(1).map((j) => j.jobId)).not.toEqual(fleet(2).map((j) => j.jobId));
  });

  it('plans shops × jobs with distinct ids, every completion inside its month and before now', () => {
    const jobs = fleet(4);
    expect(jobs).toHaveLength(30);
    expect(new Set(jobs.map((j) => j.jobId)).size).toBe(30);
    expect(new Set(jobs.map((j) => j.shopId))).toEqual(new Set([0, 1, 2, 3, 4, 5].map(shopIdFor)));
    const oldest = monthStart(NOW, 2).getTime();
    const months = new Set<string>();
    for (const j of jobs) {
      expect(j.completedAt.getTime()).toBeGreaterThanOrEqual(oldest);
      expect(j.completedAt.getTime()).toBeLessThan(NOW.getTime());
      expect(j.createdAt.getTime()).toBeLessThanOrEqual(j.completedAt.getTime());
      // createJob's `now` is inside the target month.
      expect(j.createdAt.toISOString().slice(0, 7)).toBe(j.completedAt.toISOString().slice(0, 7));
      months.add(j.completedAt.toISOString().slice(0, 7));
    }
    expect([...months].sort()).toEqual(['2026-03', '2026-04', '2026-05']);
  });

  it('plans flushes the writer accepts, summing to the total and ending in the planned status', () => {
    const jobs = fleet(9, { shops: 10, jobsPerShop: 10 });
    for (const j of jobs) {
      const c = sumCounts(j);
      expect(c.processed + c.failed + c.skipped + c.conflict).toBe(j.input.totalItems);
      expect(terminalStatusFor(c)).toBe(j.status);
      const chunkIds = j.flushes.flatMap((f) => f.chunkIds);
      expect(new Set(chunkIds).size).toBe(chunkIds.length);
      for (const f of j.flushes) {
        expect(f.chunkIds.length).toBeGreaterThan(0);
        expect(f.chunkIds.length).toBeLessThanOrEqual(MAX_CHUNKS_PER_FLUSH);
        const ids = (m: Record<string, readonly unknown[]> | undefined) =>
          Object.values(m ?? {}).flat().length;
        // The details list exactly the items the counters count as failed / skipped / conflict.
        expect(ids(f.details?.failed)).toBe(f.counts.failed);
        expect(ids(f.details?.skipped)).toBe(f.counts.skipped);
        expect(ids(f.details?.conflict)).toBe(f.counts.conflict);
      }
      // The last flush lands at completion: that is the terminal write's completed_at.
      expect(j.flushes[j.flushes.length - 1]?.at).toEqual(j.completedAt);
    }
    const statuses = new Set(jobs.map((j) => j.status));
    expect(statuses).toEqual(new Set(['COMPLETED', 'FAILED', 'CONFLICT']));
    // Some jobs write no details at all; some large ones carry thousands of doc ids.
    expect(jobs.some((j) => j.flushes.every((f) => f.details === undefined))).toBe(true);
    const large = jobs.filter((j) => j.large);
    expect(large.length).toBeGreaterThan(0);
    expect(
      Math.max(...large.map((j) => sumCounts(j).failed + sumCounts(j).skipped + sumCounts(j).conflict)),
    ).toBeGreaterThan(1000);
  });
});
