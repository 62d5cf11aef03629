import { gunzipSync } from 'node:zlib';
import {
  BLOCK_BYTES,
  COLD_PREFIX,
  deflateBlock,
  gzipMemberLength,
  INDEX_PREFIX,
  parseSharedIndex,
  parseSharedIndexKey,
  parseSharedPartKey,
  SHARED_INDEX_PREFIX,
  sharedPartKey,
} from '../../../shared/archive/format';

/**
 * Where the bytes at rest of a packed fleet go (`npm run bench:archive -- --fleet-only`): pure, over
 * the objects the archive keeps. Parts are cut into their gzip members; each record kind's and job
 * field's cost is its marginal one — the blocks re-deflated (codec.ts, as written) without it — so
 * the costs overlap a little and do not sum to the total. Beside them, two counterfactuals: every
 * segment's lines in blocks shared across shops, and the gzip framing alone.
 */
interface Kept {
  readonly key: string;
  readonly bytes: Uint8Array;
}

type Line = Record<string, unknown>;

/** The members of a byte range, each as its lines (parsed). */
const blocksOf = (bytes: Buffer): Line[][] => {
  const out: Line[][] = [];
  for (let at = 0; at < bytes.length; ) {
    const m = gzipMemberLength(bytes.subarray(at));
    if (!('length' in m)) throw new Error(`fleet-bytes: no whole gzip member at byte ${at}`);
    const text = gunzipSync(bytes.subarray(at, at + m.length)).toString('utf8');
    out.push(
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line),
    );
    at += m.length;
  }
  return out;
};

/** Lines re-encoded as the writer encodes them (JSON, no spaces) into one member each block. */
const deflated = (blocks: readonly (readonly Line[])[]): number =>
  blocks
    .filter((b) => b.length > 0)
    .reduce(
      (n, b) => n + deflateBlock(Buffer.from(b.map((l) => `${JSON.stringify(l)}\n`).join(''))).length,
      0,
    );

/** All lines in blocks of up to BLOCK_BYTES, whatever segment they came from. */
const reblocked = (lines: readonly Line[]): Line[][] => {
  const out: Line[][] = [[]];
  let size = 0;
  for (const l of lines) {
    const n = Buffer.byteLength(JSON.stringify(l)) + 1;
    if (size > 0 && size + n > BLOCK_BYTES) {
      out.push([]);
      size = 0;
    }
    (out[out.length - 1] as Line[]).push(l);
    size += n;
  }
  return out;
};

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

export interface FleetBytes {
  readonly total: number;
  readonly byPrefix: Record<string, number>;
  readonly parts: number;
  readonly segments: number;
  readonly members: number;
  /** Bytes of the shared parts, as stored. */
  readonly sharedPartBytes: number;
  /** Uncompressed bytes of their lines. */
  readonly sharedPartLines: number;
  /** Marginal compressed cost of each record kind / job field, over all shared parts. */
  readonly marginal: Record<string, number>;
  /** The same lines in blocks shared across shops (one stream per part; shared-index@2). */
  readonly crossShopBlocks: number;
  /** The same lines in blocks of one shop each (each segment its own members; shared-index@1). */
  readonly perShopBlocks: number;
  readonly sharedIndexBytes: number;
  /** Marginal compressed cost of each part of the shared index. */
  readonly indexMarginal: Record<string, number>;
}

const without = (blocks: Line[][], drop: (l: Line) => Line | null): Line[][] =>
  blocks.map((b) =>
    b.flatMap((l): Line[] => {
      const kept = drop(l);
      return kept ? [kept] : [];
    }),
  );

/** The part's lines split into per-shop segments (each starts at its `part` header line). */
const bySegment = (lines: readonly Line[]): Line[][] => {
  const out: Line[][] = [];
  for (const l of lines) {
    if (l.type === 'part' || out.length === 0) out.push([]);
    (out[out.length - 1] as Line[]).push(l);
  }
  return out;
};

const dropField =
  (field: string) =>
  (l: Line): Line => {
    if (l.type !== 'job') return l;
    const { [field]: _gone, ...rest } = l;
    return rest;
  };

export const fleetBytes = (objects: readonly Kept[]): FleetBytes => {
  const byPrefix: Record<string, number> = {};
  for (const o of objects) {
    const prefix = o.key.startsWith(SHARED_INDEX_PREFIX)
      ? SHARED_INDEX_PREFIX
      : o.key.startsWith(`${COLD_PREFIX}_shared/`)
        ? `${COLD_PREFIX}_shared/`
        : `${o.key.split('/')[0]}/`;
    byPrefix[prefix] = (byPrefix[prefix] ?? 0) + o.bytes.length;
  }
  const bytesOf = new Map(objects.map((o) => [o.key, Buffer.from(o.bytes)]));
  const segmentBlocks: Line[][][] = [];
  const partLines: Line[][] = [];
  let sharedIndexBytes = 0;
  let segments = 0;
  const indexMarginal: Record<string, number> = {};
  for (const o of objects) {
    const month = parseSharedIndexKey(o.key);
    if (month === null) continue;
    sharedIndexBytes += o.bytes.length;
    const index = parseSharedIndex(o.bytes, o.key);
    const body = JSON.parse(gunzipSync(o.bytes).toString('utf8')) as {
      parts: { segments: unknown }[];
      shops: Record<string, { parts: unknown[]; jobs?: unknown; docs?: unknown }>;
    };
    const size = (v: unknown) => deflateBlock(Buffer.from(`${JSON.stringify(v)}\n`)).length;
    const whole = size(body);
    const cut = (name: string, f: (b: typeof body) => unknown) => {
      indexMarginal[name] = (indexMarginal[name] ?? 0) + whole - size(f(structuredClone(body)));
    };
    cut('parts[].segments', (b) => ({ ...b, parts: b.parts.map(({ segments: _s, ...p }) => p) }));
    cut('views: parts', (b) => ({
      ...b,
      shops: Object.fromEntries(Object.entries(b.shops).map(([s, v]) => [s, { ...v, parts: [] }])),
    }));
    cut('views: document filters (docs)', (b) => ({
      ...b,
      shops: Object.fromEntries(Object.entries(b.shops).map(([s, { docs: _d, ...v }]) => [s, v])),
    }));
    cut('views: jobs', (b) => ({
      ...b,
      shops: Object.fromEntries(Object.entries(b.shops).map(([s, { jobs: _j, ...v }]) => [s, v])),
    }));
    for (const p of index.parts) {
      const part = bytesOf.get(sharedPartKey(index.month, p.name));
      if (!part) throw new Error(`fleet-bytes: shared part ${p.name} is not among the kept objects`);
      const blocks = blocksOf(part);
      segmentBlocks.push(blocks);
      segments += Object.keys(p.segments).length;
      partLines.push(blocks.flat());
    }
  }
  const blocks = segmentBlocks.flat();
  const stored = deflated(blocks);
  const marginal: Record<string, number> = {};
  const cost = (name: string, drop: (l: Line) => Line | null) => {
    marginal[name] = stored - deflated(without(blocks, drop));
  };
  cost('part header line', (l) => (l.type === 'part' ? null : l));
  cost('platform_data lines', (l) => (l.type === 'platform_data' ? null : l));
  for (const f of [
    'row',
    'sources',
    'details',
    'job',
    'row_omitted',
    'row_reduced',
    'platform_data_ref',
    'shop_id',
  ])
    cost(`job.${f}`, dropField(f));
  const sharedParts = objects.filter((o) => parseSharedPartKey(o.key) !== null);
  return {
    total: objects.reduce((n, o) => n + o.bytes.length, 0),
    byPrefix,
    parts: objects.filter((o) => o.key.startsWith(COLD_PREFIX)).length,
    segments,
    members: blocks.length,
    sharedPartBytes: sharedParts.reduce((n, o) => n + o.bytes.length, 0),
    sharedPartLines: blocks.flat().reduce((n, l) => n + Buffer.byteLength(JSON.stringify(l)) + 1, 0),
    marginal: { ...marginal, 'gzip framing (18 B a member)': 18 * blocks.length },
    crossShopBlocks: partLines.reduce((n, lines) => n + deflated(reblocked(lines)), 0),
    perShopBlocks: partLines.reduce(
      (n, lines) => n + bySegment(lines).reduce((m, seg) => m + deflated(reblocked(seg)), 0),
      0,
    ),
    sharedIndexBytes,
    indexMarginal,
  };
};

export const fleetBytesLines = (objects: readonly Kept[]): string[] => {
  const f = fleetBytes(objects);
  return [
    `Where the fleet's bytes at rest go (${kb(f.total)} kept in all)`,
    ...Object.entries(f.byPrefix)
      .sort(([, a], [, b]) => b - a)
      .map(([p, n]) => `  under ${p}: ${kb(n)}`),
    `  shared parts: ${kb(f.sharedPartBytes)} in ${f.segments} segments, ${f.members} gzip members (${kb(f.sharedPartLines)} of JSONL, ${(f.sharedPartLines / Math.max(1, f.sharedPartBytes)).toFixed(2)}:1)`,
    '  marginal cost in the shared parts (blocks re-deflated without it):',
    ...Object.entries(f.marginal).map(
      ([k, n]) => `    ${k}: ${kb(n)} (${((100 * n) / f.sharedPartBytes).toFixed(1)} %)`,
    ),
    `  the same lines in blocks shared across shops (shared-index@2): ${kb(f.crossShopBlocks)}; in blocks of one shop each (shared-index@1): ${kb(f.perShopBlocks)}`,
    `  shared index: ${kb(f.sharedIndexBytes)}; marginal cost:`,
    ...Object.entries(f.indexMarginal).map(([k, n]) => `    ${k}: ${kb(n)}`),
    `  other indexes: ${kb(f.byPrefix[INDEX_PREFIX] ?? 0)}`,
  ];
};
