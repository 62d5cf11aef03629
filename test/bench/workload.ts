import type { JsonObject } from '../../shared/details/json';
import type { ConflictItem } from '../../shared/details/payload';

/**
 * One deterministic "typical" 200-chunk indexing job (seed: ~10 writes, item grows to ~50 KB in the
 * legacy layout). The same outcomes feed both layouts, so only the storage layout differs.
 */
export const CHUNKS = 200;
export const CHUNKS_PER_FLUSH = 50;
/** Documents per JSONL chunk. */
export const DOCS_PER_CHUNK = 100;

export interface Details {
  failed: Record<string, string[]>;
  skipped: Record<string, string[]>;
  conflict: Record<string, ConflictItem[]>;
}

export interface ChunkOutcome {
  idx: number;
  processed: number;
  details: Details;
}

export interface Workload {
  shopId: string;
  totalItems: number;
  /** JSONL lines that failed to parse, skipped before any chunk runs (the seed's preparse delta). */
  preparseSkipped: Details;
  chunks: ChunkOutcome[];
  platformData: JsonObject;
}

/** mulberry32: a tiny seeded PRNG so every run measures the same job. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const FAILED_REASONS = ['mapping_error', 'search_rejected', 'payload_too_large'];
const SKIPPED_REASONS = ['unpublished', 'missing_required_field', 'duplicate_in_batch'];

const emptyDetails = (): Details => ({ failed: {}, skipped: {}, conflict: {} });

const push = <T>(m: Record<string, T[]>, reason: string, v: T): void => {
  m[reason] ??= [];
  (m[reason] as T[]).push(v);
};

export const buildWorkload = (seed = 20260314): Workload => {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const count = (mean: number) => Math.floor(rnd() * 2 * mean + 0.5);
  let product = 7_712_345_000_000;
  const docId = () => {
    product += 1 + Math.floor(rnd() * 50);
    return `gid://shopify/Product/${product}`;
  };

  const chunks: ChunkOutcome[] = [];
  for (let idx = 0; idx < CHUNKS; idx++) {
    const details = emptyDetails();
    const failed = count(1.3);
    const skipped = count(1.6);
    const conflict = count(0.45);
    for (let i = 0; i < failed; i++) push(details.failed, pick(FAILED_REASONS), docId());
    for (let i = 0; i < skipped; i++) push(details.skipped, pick(SKIPPED_REASONS), docId());
    for (let i = 0; i < conflict; i++) {
      const existing = 3 + Math.floor(rnd() * 40);
      push(details.conflict, 'version_conflict', {
        doc_id: docId(),
        existing_version: existing,
        incoming_version: existing - 1,
        message: 'document has a newer version in the index',
      });
    }
    chunks.push({ idx, processed: DOCS_PER_CHUNK - failed - skipped - conflict, details });
  }

  const preparseSkipped = emptyDetails();
  for (let i = 0; i < 12; i++)
    push(preparseSkipped.skipped, 'invalid_json', `line:${1 + Math.floor(rnd() * 20000)}`);

  return {
    shopId: 'acme-store.myshopify.com',
    totalItems: CHUNKS * DOCS_PER_CHUNK + 12,
    preparseSkipped,
    chunks,
    platformData: platformData(),
  };
};

/** The indexer settings the seed's update_platform_data stored (≈1.5 KB of JSON). */
const platformData = (): JsonObject => ({
  indexer: {
    index_name: 'acme-store-products-v7',
    mapping_version: 7,
    source: 'shopify_bulk_operation',
    locales: ['en', 'fr', 'de', 'es', 'it', 'nl'],
    currencies: ['USD', 'EUR', 'GBP', 'CAD'],
    batch_size: 500,
    refresh_interval: '30s',
    field_mappings: Object.fromEntries(
      [
        'title',
        'body_html',
        'vendor',
        'product_type',
        'handle',
        'tags',
        'status',
        'published_at',
        'variants.sku',
        'variants.price',
        'variants.compare_at_price',
        'variants.inventory_quantity',
        'options',
        'images.src',
        'metafields.custom.material',
        'metafields.custom.care',
        'collections.handle',
        'seo.title',
        'seo.description',
      ].map((f) => [
        f,
        { type: f.includes('price') ? 'scaled_float' : 'text', searchable: !f.startsWith('images') },
      ]),
    ),
  },
});

/** Chunk outcomes grouped the way the batcher flushes them. */
export const flushBatches = (w: Workload): ChunkOutcome[][] => {
  const out: ChunkOutcome[][] = [];
  for (let i = 0; i < w.chunks.length; i += CHUNKS_PER_FLUSH)
    out.push(w.chunks.slice(i, i + CHUNKS_PER_FLUSH));
  return out;
};

/** Reason maps of several chunks merged (list order = chunk order). */
export const mergeDetails = (parts: Details[]): Details => {
  const out = emptyDetails();
  for (const d of parts) {
    for (const kind of ['failed', 'skipped', 'conflict'] as const) {
      for (const [reason, list] of Object.entries(d[kind])) {
        for (const v of list) push(out[kind] as Record<string, unknown[]>, reason, v);
      }
    }
  }
  return out;
};

export const countsOf = (batch: ChunkOutcome[]) => {
  const n = (m: Record<string, unknown[]>) => Object.values(m).reduce((s, l) => s + l.length, 0);
  return batch.reduce(
    (c, ch) => ({
      processed: c.processed + ch.processed,
      failed: c.failed + n(ch.details.failed),
      skipped: c.skipped + n(ch.details.skipped),
      conflict: c.conflict + n(ch.details.conflict),
    }),
    { processed: 0, failed: 0, skipped: 0, conflict: 0 },
  );
};
