import { InvalidInputError } from '../../shared/errors';

/**
 * A small seeded PRNG (mulberry32: 32-bit state, passes the usual smoke tests, trivially portable).
 * `seed` must reproduce byte-identical fleets across runs and machines, which Math.random cannot.
 */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform 32-bit unsigned integer. */
  uint32(): number;
  /** Whole number in [min, max] (both inclusive). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
  /** One key of `weights`, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K;
  /** An independent generator derived from this one's next output (for per-job streams). */
  fork(): Prng;
}

export const createPrng = (seed: number): Prng => {
  if (!Number.isSafeInteger(seed))
    throw new InvalidInputError('seed', `expected a whole number, got ${seed}`);
  // Fold the (up to 53-bit) seed into 32 bits so large seeds still differ from small ones.
  let state = (seed ^ Math.floor(seed / 0x1_0000_0000)) >>> 0;
  const uint32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const next = (): number => uint32() / 0x1_0000_0000;
  const prng: Prng = {
    next,
    uint32,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new InvalidInputError('items', 'cannot pick from an empty list');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    weighted: (weights) => {
      const entries = Object.entries(weights) as [keyof typeof weights & string, number][];
      const total = entries.reduce((s, [, w]) => s + w, 0);
      let r = next() * total;
      for (const [k, w] of entries) {
        r -= w;
        if (r < 0) return k;
      }
      return (entries[entries.length - 1] as [keyof typeof weights & string, number])[0];
    },
    fork: () => createPrng(uint32()),
  };
  return prng;
};

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * Job ids in the production shape (13 lower-case base32 characters = 64 bits + 1 padding bit, like
 * shared/ids generateJobId), but drawn from `prng` so a seeded fleet gets the same ids every run.
 */
export const seededJobIds =
  (prng: Prng): (() => string) =>
  () => {
    let bits = (BigInt(prng.uint32()) << 32n) | BigInt(prng.uint32());
    bits <<= 1n;
    let out = '';
    for (let i = 12; i >= 0; i--) out += BASE32[Number((bits >> BigInt(i * 5)) & 31n)];
    return out;
  };
