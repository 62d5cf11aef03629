import type { JsonObject } from '../../shared/details/json';
import type { ConflictItem } from '../../shared/details/payload';
import { InvalidInputError } from '../../shared/errors';
import { chunkIds } from '../../shared/ids';
import type { CreateJobInput } from '../../shared/jobs/create-job';
import { type FlushDetails, MAX_CHUNKS_PER_FLUSH } from '../../shared/jobs/record-flush';
import type { TerminalStatus } from '../../shared/jobs/schema';
import { type JobCounters, terminalStatusFor } from '../../shared/jobs/types';
import { createPrng, type Prng, seededJobIds } from './prng';

/**
 * The simulated indexer's plan (pure): which jobs a seeded fleet has and every write each job makes.
 * seed.ts replays the plan through the writer library; keeping the plan pure makes it deterministic
 * for a given seed and unit-testable without emulators.
 */
export interface FleetOptions {
  readonly shops: number;
  /** Jobs per shop, spread round-robin over the months. */
  readonly jobsPerShop: number;
  /** Calendar months (UTC) ending with the month of `now`, newest first. */
  readonly months: number;
  readonly seed: number;
  readonly now: Date;
}

export interface PlannedFlush {
  readonly at: Date;
  readonly chunkIds: string[];
  readonly counts: JobCounters;
  readonly details?: FlushDetails;
}

export interface PlannedJob {
  readonly shopId: string;
  readonly jobId: string;
  readonly createdAt: Date;
  /** When the last flush lands, i.e. the terminal write's `completed_at`. */
  readonly completedAt: Date;
  readonly status: TerminalStatus;
  readonly input: CreateJobInput;
  readonly platformData: JsonObject | null;
  readonly flushes: readonly PlannedFlush[];
  readonly large: boolean;
}

export const ITEMS_PER_CHUNK = 100;
const MINUTE = 60_000;

const FAILED_REASONS = {
  mapping_error: 4,
  invalid_price: 2,
  image_fetch_failed: 2,
  upstream_5xx: 1,
} as const;
const SKIPPED_REASONS = { unpublished: 5, no_variants: 2, hidden_out_of_stock: 1 } as const;
const PREPARSE_REASON = 'invalid_jsonl';
const STATUS_WEIGHTS = { COMPLETED: 60, FAILED: 25, CONFLICT: 15 } as const;
const JOB_TYPES = ['full_sync', 'incremental_sync', 'product_update'] as const;
const CURRENCIES = ['USD', 'EUR', 'GBP', 'CAD', 'AUD'] as const;
const LOCALES = ['en', 'de', 'fr', 'es'] as const;

export const shopIdFor = (index: number): string =>
  `shop-${String(index + 1).padStart(3, '0')}.myshopify.com`;

/** First instant (UTC) of the month `back` months before the month of `now`. */
export const monthStart = (now: Date, back: number): Date =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));

export const validateFleetOptions = (o: FleetOptions): void => {
  const whole = (field: string, v: number, min: number) => {
    if (!Number.isSafeInteger(v) || v < min)
      throw new InvalidInputError(field, `expected a whole number ≥ ${min}`);
  };
  whole('shops', o.shops, 1);
  whole('jobsPerShop', o.jobsPerShop, 1);
  whole('months', o.months, 1);
  whole('seed', o.seed, 0);
  if (!(o.now instanceof Date) || Number.isNaN(o.now.getTime()))
    throw new InvalidInputError('now', 'expected a date');
};

type Outcome = 'processed' | 'failed' | 'skipped' | 'conflict';

interface Item {
  readonly docId: string;
  readonly outcome: Outcome;
  readonly reason: string;
}

interface Rates {
  readonly failed: number;
  readonly skipped: number;
  readonly conflict: number;
}

/** Per-item outcome probabilities consistent with the status the job must end in. */
const ratesFor = (status: TerminalStatus, large: boolean, prng: Prng): Rates => {
  const r = (lo: number, hi: number) => lo + prng.next() * (hi - lo);
  switch (status) {
    case 'COMPLETED':
      // Half the small clean jobs have no details at all: nothing is ever written to S3 for them.
      // Large ones always skip thousands (the archive's big records).
      if (large) return { failed: 0, conflict: 0, skipped: r(0.1, 0.25) };
      return { failed: 0, conflict: 0, skipped: prng.chance(0.5) ? 0 : r(0.005, 0.08) };
    case 'FAILED':
      return { failed: large ? r(0.1, 0.3) : r(0.005, 0.06), skipped: r(0, 0.05), conflict: r(0, 0.01) };
    case 'CONFLICT':
      return { failed: 0, skipped: r(0, 0.04), conflict: large ? r(0.05, 0.15) : r(0.005, 0.05) };
  }
};

const drawItems = (
  count: number,
  rates: Rates,
  status: TerminalStatus,
  docBase: number,
  prng: Prng,
): Item[] => {
  const items: Item[] = [];
  for (let i = 0; i < count; i++) {
    const docId = `gid://shopify/Product/${docBase + i}`;
    const u = prng.next();
    if (u < rates.failed) items.push({ docId, outcome: 'failed', reason: prng.weighted(FAILED_REASONS) });
    else if (u < rates.failed + rates.conflict)
      items.push({ docId, outcome: 'conflict', reason: 'stale_version' });
    else if (u < rates.failed + rates.conflict + rates.skipped) {
      items.push({ docId, outcome: 'skipped', reason: prng.weighted(SKIPPED_REASONS) });
    } else items.push({ docId, outcome: 'processed', reason: '' });
  }
  // The status decides the details, so make sure the one item that earns it is there.
  const last = items.length - 1;
  const lastItem = items[last];
  if (lastItem && status === 'FAILED' && !items.some((it) => it.outcome === 'failed')) {
    items[last] = { docId: lastItem.docId, outcome: 'failed', reason: 'mapping_error' };
  }
  if (lastItem && status === 'CONFLICT' && !items.some((it) => it.outcome === 'conflict')) {
    items[last] = { docId: lastItem.docId, outcome: 'conflict', reason: 'stale_version' };
  }
  return items;
};

const push = <T>(map: Record<string, T[]>, reason: string, value: T): void => {
  const list = map[reason];
  if (list) list.push(value);
  else map[reason] = [value];
};

/** Counts and reason maps of the items of one flush. */
const flushOf = (items: readonly Item[], prng: Prng): Pick<PlannedFlush, 'counts' | 'details'> => {
  const counts: JobCounters = { processed: 0, failed: 0, skipped: 0, conflict: 0 };
  const failed: Record<string, string[]> = {};
  const skipped: Record<string, string[]> = {};
  const conflict: Record<string, ConflictItem[]> = {};
  for (const it of items) {
    counts[it.outcome] += 1;
    if (it.outcome === 'failed') push(failed, it.reason, it.docId);
    if (it.outcome === 'skipped') push(skipped, it.reason, it.docId);
    if (it.outcome === 'conflict') {
      const existing = prng.int(2, 40);
      push(conflict, it.reason, {
        doc_id: it.docId,
        existing_version: existing,
        incoming_version: existing - prng.int(1, 3),
        message: 'document changed in the index after this job read it',
      });
    }
  }
  const any = counts.failed + counts.skipped + counts.conflict > 0;
  return { counts, ...(any ? { details: { failed, skipped, conflict } } : {}) };
};

const platformDataFor = (shopId: string, jobType: string, prng: Prng): JsonObject => ({
  indexer: {
    index_name: `products_${shopId.split('.')[0] ?? shopId}`,
    job_type: jobType,
    settings: {
      batch_size: 50,
      currency: prng.pick(CURRENCIES),
      locale: prng.pick(LOCALES),
      include_drafts: prng.chance(0.2),
    },
  },
  source: { platform: 'shopify', api_version: '2025-07', bulk_operation: prng.chance(0.5) },
});

const planJob = (
  shopId: string,
  jobId: string,
  window: { start: number; end: number },
  large: boolean,
  prng: Prng,
): PlannedJob => {
  const status = prng.weighted(STATUS_WEIGHTS);
  const preparse = prng.chance(0.15);
  const totalFromChunks = large ? prng.int(5_000, 20_000) : Math.round(20 * 125 ** prng.next());
  const rates = ratesFor(status, large, prng);
  const docBase = 7_000_000_000_000 + prng.int(0, 999_999) * 100_000;
  const items = drawItems(totalFromChunks, rates, status, docBase, prng);

  // Chunks of ITEMS_PER_CHUNK items (p0, p1, …), plus an optional `preparse` chunk of lines that did
  // not parse (seed Phase 2: the batcher merges it into the first flush).
  const chunks: { id: string; items: Item[] }[] = [];
  if (preparse) {
    const bad = prng.int(1, 5);
    chunks.push({
      id: chunkIds.preparse,
      items: Array.from({ length: bad }, (_, i) => ({
        docId: `line:${i + 1}`,
        outcome: 'skipped' as const,
        reason: PREPARSE_REASON,
      })),
    });
  }
  for (let i = 0; i * ITEMS_PER_CHUNK < items.length; i++) {
    chunks.push({ id: chunkIds.part(i), items: items.slice(i * ITEMS_PER_CHUNK, (i + 1) * ITEMS_PER_CHUNK) });
  }
  const totalItems = chunks.reduce((n, c) => n + c.items.length, 0);

  // When: completed somewhere in the window; the job ran for minutes (hours when large) before it.
  const completed = Math.floor(window.start + prng.next() * Math.max(1, window.end - window.start));
  const duration = (large ? prng.int(20, 180) : prng.int(1, 30)) * MINUTE;
  const created = Math.max(window.start, completed - duration);

  // Flushes of 3–50 chunks (the batcher flushes every 50 chunks or on its timer).
  const groups: (typeof chunks)[] = [];
  for (let i = 0; i < chunks.length; ) {
    const n = Math.min(MAX_CHUNKS_PER_FLUSH, prng.int(3, 50));
    groups.push(chunks.slice(i, i + n));
    i += n;
  }
  const flushes: PlannedFlush[] = groups.map((g, i) => ({
    // Evenly spaced; the last one lands exactly at completion and triggers the terminal write.
    at: new Date(created + Math.round(((completed - created) * (i + 1)) / groups.length)),
    chunkIds: g.map((c) => c.id),
    ...flushOf(
      g.flatMap((c) => c.items),
      prng,
    ),
  }));

  const counters = flushes.reduce<JobCounters>(
    (c, f) => ({
      processed: c.processed + f.counts.processed,
      failed: c.failed + f.counts.failed,
      skipped: c.skipped + f.counts.skipped,
      conflict: c.conflict + f.counts.conflict,
    }),
    { processed: 0, failed: 0, skipped: 0, conflict: 0 },
  );
  const jobType = prng.pick(JOB_TYPES);
  const withPlatform = prng.chance(0.9);
  return {
    shopId,
    jobId,
    createdAt: new Date(created),
    completedAt: new Date(completed),
    status: terminalStatusFor(counters),
    large,
    input: {
      shopId,
      jobType,
      platform: 'shopify',
      totalItems,
      ...(prng.chance(0.3) ? { initiatorUserId: `user-${prng.int(1, 40)}` } : {}),
      ...(prng.chance(0.1) ? { retryCount: prng.int(1, 2) } : {}),
      estimatedTimeMinutes: Math.max(1, Math.round(duration / MINUTE)),
    },
    platformData: withPlatform ? platformDataFor(shopId, jobType, prng) : null,
    flushes,
  };
};

/**
 * The whole fleet, shop by shop. Job `j` of shop `s` completes in month `(s + j) mod months` back
 * from `now`, so every month gets jobs; nothing completes after `now - 1 min`. Every job draws from
 * its own forked PRNG, so one job's shape never shifts another's.
 */
export const planFleet = (o: FleetOptions): PlannedJob[] => {
  validateFleetOptions(o);
  const root = createPrng(o.seed);
  const nextId = seededJobIds(root.fork());
  const latest = o.now.getTime() - MINUTE;
  const totalJobs = o.shops * o.jobsPerShop;
  const jobs: PlannedJob[] = [];
  for (let s = 0; s < o.shops; s++) {
    const shopId = shopIdFor(s);
    for (let j = 0; j < o.jobsPerShop; j++) {
      const back = (s + j) % o.months;
      const start = monthStart(o.now, back).getTime();
      const end = Math.min(monthStart(o.now, back - 1).getTime() - 1, latest);
      const prng = root.fork();
      // A few large jobs: ~3 %, and always one in a fleet of 20+ so demos show one.
      const large = prng.chance(0.03) || (s === 0 && j === 1 && totalJobs >= 20);
      jobs.push(planJob(shopId, nextId(), { start, end: Math.max(start, end) }, large, prng));
    }
  }
  return jobs;
};

/** Totals of a plan, for the human summary. */
export const fleetStats = (jobs: readonly PlannedJob[]) => {
  const byStatus: Record<string, number> = {};
  let flushes = 0;
  let detailObjects = 0;
  let docIds = 0;
  for (const j of jobs) {
    byStatus[j.status] = (byStatus[j.status] ?? 0) + 1;
    flushes += j.flushes.length;
    for (const f of j.flushes) {
      if (f.details) detailObjects++;
      docIds += f.counts.failed + f.counts.skipped + f.counts.conflict;
    }
  }
  return { jobs: jobs.length, byStatus, flushes, detailObjects, docIds };
};
