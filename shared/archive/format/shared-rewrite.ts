import { createHash } from 'node:crypto';
import { InvalidInputError } from '../../errors';
import { sharedPartKey, validatePartName } from './keys';
import { type IndexedJob, type IndexedPart, jobEntries, type MonthIndex } from './month-index';
import type { SharedIndex, SharedPart } from './shared-index';

/**
 * Removing one shop from a shared part (docs/archive-format.md, "Removing one shop from a shared
 * part"): pure, in two halves so the index switch can be re-applied to a fresher index after a 412.
 *
 * `sharedPartWithoutShop` builds the new part: the old bytes less the shop's segment. Segments are
 * complete part@4 streams that start at gzip-member boundaries, so the others' bytes are copied as they
 * are — nothing is re-encoded — and only their offsets move. `null` bytes: the shop was alone in it.
 */
export interface PartWithoutShop {
  /** The new part's bytes (null: nothing left, the old part is only deleted). */
  readonly bytes: Buffer | null;
  /** sha256 (hex) of `bytes`: what the read-back must find. */
  readonly sha256: string | null;
  /** The new part as the shared index lists it, less what only its upload and commit know. */
  readonly part: Omit<SharedPart, 'etag' | 'run_id' | 'committed_at'> | null;
}

export const sharedPartWithoutShop = (
  bytes: Uint8Array,
  part: SharedPart,
  shopId: string,
  newName: string,
): PartWithoutShop => {
  validatePartName(newName);
  if (newName === part.name) throw new InvalidInputError('newName', 'the new part needs a name of its own');
  if (bytes.length !== part.size)
    throw new InvalidInputError('bytes', `part ${part.name} is ${part.size} bytes, got ${bytes.length}`);
  if (!Object.hasOwn(part.segments, shopId))
    throw new InvalidInputError('shopId', `part ${part.name} holds no segment of ${shopId}`);
  const kept = Object.entries(part.segments)
    .filter(([shop]) => shop !== shopId)
    .sort(([, a], [, b]) => a[0] - b[0]);
  if (kept.length === 0) return { bytes: null, sha256: null, part: null };
  const slices: Buffer[] = [];
  const segments: Record<string, readonly [number, number]> = {};
  let at = 0;
  for (const [shop, [offset, length]] of kept) {
    slices.push(Buffer.from(bytes.subarray(offset, offset + length)));
    segments[shop] = [at, length];
    at += length;
  }
  const out = Buffer.concat(slices);
  return {
    bytes: out,
    sha256: createHash('sha256').update(out).digest('hex'),
    part: { name: newName, size: out.length, segments },
  };
};

/** A view's entries of part `from` moved to part `to`, `delta` bytes further. */
const movedView = (view: MonthIndex, from: string, to: IndexedPart, delta: number): MonthIndex => {
  const shift = <T extends { offset: number }>(r: T): T => ({ ...r, offset: r.offset + delta });
  const jobs: Record<string, readonly IndexedJob[]> = {};
  for (const jobId of Object.keys(view.jobs)) {
    jobs[jobId] = jobEntries(view.jobs, jobId).map((e) =>
      e.part === from
        ? { ...shift(e), part: to.name, platform_data: e.platform_data ? shift(e.platform_data) : null }
        : e,
    );
  }
  return { ...view, parts: view.parts.map((p) => (p.name === from ? to : p)), jobs };
};

/** A view less part `name` and its entries (jobs left without any entry drop out). */
const withoutPart = (view: MonthIndex, name: string): MonthIndex => {
  const jobs: Record<string, readonly IndexedJob[]> = {};
  for (const jobId of Object.keys(view.jobs)) {
    const left = jobEntries(view.jobs, jobId).filter((e) => e.part !== name);
    if (left.length > 0) jobs[jobId] = left;
  }
  return { ...view, parts: view.parts.filter((p) => p.name !== name), jobs };
};

/**
 * The shared index after the switch from part `oldName` to `next` (the half re-applied on a 412):
 * the shop's view loses the part (the shop leaves the index with no part left), every other shop's
 * view points at its segment in the new part. `null` when the index no longer lists the old part
 * (switched already, by this or another writer).
 */
export const switchSharedPart = (
  index: SharedIndex,
  oldName: string,
  shopId: string,
  next: SharedPart | null,
  at: string,
): SharedIndex | null => {
  const old = index.parts.find((p) => p.name === oldName);
  if (!old) return null;
  const views = new Map(index.views);
  for (const shop of Object.keys(old.segments)) {
    const view = views.get(shop);
    if (!view) continue;
    const seg = next?.segments[shop];
    if (shop === shopId || !next || !seg) {
      const left = withoutPart(view, oldName);
      if (left.parts.length === 0) views.delete(shop);
      else views.set(shop, { ...left, updated_at: at });
      continue;
    }
    const before = view.parts.find((p) => p.name === oldName);
    if (!before) continue;
    const delta = seg[0] - (old.segments[shop]?.[0] ?? 0);
    const to: IndexedPart = {
      ...before,
      ...(before.doc_filters
        ? {
            doc_filters: {
              ...before.doc_filters,
              blocks: before.doc_filters.blocks.map((b) => ({ ...b, offset: b.offset + delta })),
            },
          }
        : {}),
      name: next.name,
      key: sharedPartKey(index.month, next.name),
      size: next.size,
      etag: next.etag,
    };
    views.set(shop, { ...movedView(view, oldName, to, delta), updated_at: at });
  }
  const parts = index.parts.flatMap((p) => (p.name !== oldName ? [p] : next ? [next] : []));
  return { month: index.month, updated_at: at, parts, views };
};
