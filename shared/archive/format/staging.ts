import { CorruptObjectError } from '../../errors';
import type { ListedObject } from '../../s3/objects';
import type { PartDocFilters } from './doc-filter';
import { validatePartName } from './keys';
import type { ByteRange, IndexedJob, IndexedPart, Located } from './month-index';
import type { DetailCounts, SourceObject } from './records';

/**
 * Hand-off documents between the archive, verify and commit steps. They sit under the index prefix
 * (Standard storage) and are removed at commit. A part with a pending manifest but no index entry was
 * never committed: readers ignore it and a later run garbage-collects it.
 */
export const PENDING_FORMAT = 'job-details-archive/pending@2';
export const VERIFIED_FORMAT = 'job-details-archive/verified@1';
/**
 * The intent: written at the pending key BEFORE the part's first byte is uploaded, so every part a
 * crash can leave behind has a staging doc naming it (collected once abandoned, pending-gc.ts). The
 * per-group steps overwrite it with the manifest after the upload; the batch step, which verifies and
 * commits in memory, never needs more. Commit removes it.
 */
export const INTENT_FORMAT = 'job-details-archive/intent@1';

/** Which part a staging doc is about, and who wrote it. */
interface StagedIdentity {
  readonly shop_id: string;
  readonly month: string;
  readonly part: string;
  readonly part_key: string;
  readonly run_id: string;
  readonly created_at: string;
}

export interface PartIntent extends StagedIdentity {
  readonly format: typeof INTENT_FORMAT;
}

/** What the archive step wrote and expects verify to find. */
export interface PendingPart extends StagedIdentity {
  readonly format: typeof PENDING_FORMAT;
  readonly size: number;
  readonly sha256: string;
  readonly bytes_in: number;
  readonly header: Located;
  readonly platform_data: Readonly<Record<string, Located & { readonly sha256: string }>>;
  readonly jobs: Readonly<
    Record<
      string,
      Located & {
        readonly sha256: string;
        readonly status: string;
        readonly completed_at: string;
        readonly counts: DetailCounts;
        readonly platform_data_ref: string | null;
        readonly sources: readonly SourceObject[];
      }
    >
  >;
  /** Per-block document filters (verify checks them against the records and the stored member). */
  readonly doc_filters?: PartDocFilters;
  /** The part's trailing filters member (absent: no block lists a document). */
  readonly filters?: ByteRange;
}

/** What verify measured from the stored part: exactly what commit adds to the month index. */
export interface VerifiedPart {
  readonly format: typeof VERIFIED_FORMAT;
  readonly part: Omit<IndexedPart, 'committed_at'>;
  readonly jobs: Readonly<Record<string, Omit<IndexedJob, 'committed_at' | 'deleted_at'>>>;
}

const parseDoc = <T>(bytes: Uint8Array, key: string, format: string): T => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'not JSON', { cause: err });
  }
  if (!value || typeof value !== 'object' || (value as { format?: unknown }).format !== format) {
    throw new CorruptObjectError(key, `not a ${format} document`);
  }
  return value as T;
};

export const parsePendingPart = (bytes: Uint8Array, key: string): PendingPart =>
  parseDoc<PendingPart>(bytes, key, PENDING_FORMAT);

/** What a staging doc at a pending key is: the intent (upload not finished) or the manifest. */
export const parseStagingDoc = (bytes: Uint8Array, key: string): PendingPart | PartIntent => {
  let format: unknown;
  try {
    format = (JSON.parse(Buffer.from(bytes).toString('utf8')) as { format?: unknown } | null)?.format;
  } catch (err) {
    throw new CorruptObjectError(key, 'not JSON', { cause: err });
  }
  return format === INTENT_FORMAT
    ? parseDoc<PartIntent>(bytes, key, INTENT_FORMAT)
    : parseDoc<PendingPart>(bytes, key, PENDING_FORMAT);
};

export const parseVerifiedPart = (bytes: Uint8Array, key: string): VerifiedPart =>
  parseDoc<VerifiedPart>(bytes, key, VERIFIED_FORMAT);

/** A part's staging docs as listed under `pending/`. */
export interface StagedDocs {
  pending?: ListedObject;
  verified?: ListedObject;
}

/** Pending/verified docs of the group by part name; keys that are neither are left alone. */
export const stagedDocsByPart = (
  prefix: string,
  listed: readonly ListedObject[],
): Map<string, StagedDocs> => {
  const out = new Map<string, StagedDocs>();
  for (const o of listed) {
    const rest = o.key.slice(prefix.length);
    const verified = rest.endsWith('.verified.json');
    const name = verified
      ? rest.slice(0, -'.verified.json'.length)
      : rest.endsWith('.json')
        ? rest.slice(0, -5)
        : '';
    try {
      validatePartName(name);
    } catch {
      continue;
    }
    const docs = out.get(name) ?? {};
    if (verified) docs.verified = o;
    else docs.pending = o;
    out.set(name, docs);
  }
  return out;
};
