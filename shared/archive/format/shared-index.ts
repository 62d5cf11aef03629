import { CorruptObjectError } from '../../errors';
import { deflateBlock, inflateBlocks } from './codec';
import { sharedPartKey } from './keys';
import { emptyMonthIndex, type MonthIndex } from './month-index';
import { checkIndex, mergeBlocks } from './month-index-read';
import { serializeMonthIndex } from './month-index-write';
import { checkFormat, INDEX_FORMAT, SHARED_INDEX_FORMAT } from './version';

/**
 * The shared index `job-details-index/_shared/{yyyy-mm}/shared.json`: the commit record of every shared
 * part of a month (docs/archive-format.md, "Shared parts"). One gzip member of JSON: the parts, each
 * with the byte range of every shop's segment, and per packed shop its **view** — that shop's month
 * index (as stored, less format and month) whose parts are the shared parts it is in. The
 * archiver reads and rewrites it whole with a conditional write, once per batch and month; a lookup
 * reads it whole (one GET) and takes one view.
 */
/** One shared part: what delete HEADs it against, and where each shop's segment lies in it. */
export interface SharedPart {
  readonly name: string;
  readonly size: number;
  readonly etag: string;
  readonly run_id: string;
  readonly committed_at: string;
  /** Shop → `[offset, length]` of its segment: the blocks holding its lines (on block boundaries). */
  readonly segments: Readonly<Record<string, readonly [number, number]>>;
  /** Compressed length of each block in order (blocks cut across shops, shared-blocks.ts). */
  readonly blocks: readonly number[];
  /** Length of the part's trailing document filters member, every shop's (absent: none). */
  readonly filters_bytes?: number;
}

export interface SharedIndex {
  readonly month: string;
  readonly updated_at: string;
  readonly parts: readonly SharedPart[];
  /** Shop → its view (a MonthIndex of that shop whose parts are shared parts). */
  readonly views: ReadonlyMap<string, MonthIndex>;
}

export const emptySharedIndex = (month: string, at: string): SharedIndex => ({
  month,
  updated_at: at,
  parts: [],
  views: new Map(),
});

/** The shop's view, or an empty month index when the shop has nothing packed in the month. */
export const sharedView = (index: SharedIndex, shopId: string, at = index.updated_at): MonthIndex =>
  index.views.get(shopId) ?? emptyMonthIndex(shopId, index.month, at);

/** A view as stored: the month index's stored JSON (one object, blocks merged) less format and month. */
const storedView = (view: MonthIndex): Record<string, unknown> => {
  const lines = inflateBlocks(serializeMonthIndex(view))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const [header, ...blocks] = lines;
  const { format: _f, month: _m, ...rest } = mergeBlocks(header, blocks) as Record<string, unknown>;
  return rest;
};

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export const serializeSharedIndex = (index: SharedIndex): Buffer => {
  const shops = [...index.views.keys()].sort(byCodePoint);
  const body = {
    format: SHARED_INDEX_FORMAT,
    month: index.month,
    updated_at: index.updated_at,
    parts: index.parts,
    shops: Object.fromEntries(shops.map((s) => [s, storedView(index.views.get(s) as MonthIndex)])),
  };
  return deflateBlock(Buffer.from(`${JSON.stringify(body)}\n`, 'utf8'));
};

const isRange = (v: unknown): v is [number, number] =>
  Array.isArray(v) &&
  v.length === 2 &&
  v.every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0);

/**
 * Parses and checks a shared index (malformed → CorruptObjectError naming the key). `only`: parse
 * just that shop's view (a lookup), the others are left out.
 */
export const parseSharedIndex = (bytes: Uint8Array, key: string, only?: string): SharedIndex => {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(inflateBlocks(bytes).toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new CorruptObjectError(key, 'shared index is not gzipped JSON', { cause: err });
  }
  const bad = (what: string): never => {
    throw new CorruptObjectError(key, what);
  };
  if (!value || typeof value !== 'object') bad('not an object');
  checkFormat('shared-index', value.format, key);
  const month = value.month;
  if (typeof month !== 'string' || typeof value.updated_at !== 'string') bad('needs month and updated_at');
  if (!Array.isArray(value.parts)) bad('needs a parts list');
  const parts = value.parts as SharedPart[];
  for (const p of parts) {
    if (!p || typeof p.name !== 'string' || typeof p.etag !== 'string' || typeof p.size !== 'number')
      bad('every part needs name, size and etag');
    sharedPartKey(month as string, p.name);
    if (!p.segments || typeof p.segments !== 'object') bad(`part ${p.name} needs segments`);
    for (const [shop, r] of Object.entries(p.segments)) {
      if (!isRange(r) || r[0] + r[1] > p.size) bad(`segment of ${shop} lies outside part ${p.name}`);
    }
    const ok =
      Array.isArray(p.blocks) &&
      p.blocks.every((n) => Number.isSafeInteger(n) && n > 0) &&
      p.blocks.reduce((n, b) => n + b, 0) + (p.filters_bytes ?? 0) === p.size;
    if (!ok) bad(`part ${p.name}: blocks (and filters_bytes) must be lengths that add up to its size`);
    const starts = new Set<number>();
    let at = 0;
    for (const b of p.blocks) {
      starts.add(at);
      at += b;
    }
    starts.add(at);
    for (const [shop, [o, l]] of Object.entries(p.segments))
      if (!starts.has(o) || !starts.has(o + l))
        bad(`segment of ${shop} does not fall on blocks of ${p.name}`);
  }
  const shops = value.shops;
  if (!shops || typeof shops !== 'object' || Array.isArray(shops)) bad('needs a shops map');
  const views = new Map<string, MonthIndex>();
  for (const [shop, stored] of Object.entries(shops as Record<string, Record<string, unknown>>)) {
    if (only !== undefined && shop !== only) continue;
    const view = checkIndex({ ...stored, format: INDEX_FORMAT, month }, key);
    if (view.shop_id !== shop) bad(`the view under ${shop} is of ${view.shop_id}`);
    for (const p of view.parts) {
      const shared = parts.find((s) => s.name === p.name);
      if (!p.shared || !shared || shared.size !== p.size || !shared.segments[shop])
        bad(`the view of ${shop} names part ${p.name}, which holds no segment of it`);
    }
    views.set(shop, view);
  }
  return { month: month as string, updated_at: value.updated_at as string, parts, views };
};

/** The index after `views` replaced theirs (a view with no part left drops out) and `part` was added. */
export const withViews = (
  index: SharedIndex,
  views: ReadonlyMap<string, MonthIndex>,
  at: string,
  part?: SharedPart,
): SharedIndex => {
  const next = new Map(index.views);
  for (const [shop, view] of views) {
    if (view.parts.length === 0) next.delete(shop);
    else next.set(shop, view);
  }
  const parts =
    part && !index.parts.some((p) => p.name === part.name) ? [...index.parts, part] : [...index.parts];
  return { month: index.month, updated_at: at, parts, views: next };
};
