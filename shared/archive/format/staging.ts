import { CorruptObjectError } from '../../errors';
import type { ListedObject } from '../../s3/objects';
import type { PartDocFilters } from './doc-filter';
import { validatePartName } from './keys';
import type { ByteRange, IndexedJob, IndexedPart, Located } from './month-index';
import type { DetailCounts, SourceObject } from './records';
import { checkFormat, INTENT_FORMAT } from './version';

/**
 * Hand-off between the archive, verify and commit steps. The only one stored is the intent, under the
 * index prefix (Standard storage), removed at commit: a part with an intent but no index entry was
 * never committed; readers ignore it and a later run garbage-collects it. The manifest and what verify
 * measured stay in memory (the batch step verifies and commits in one invocation).
 *
 * The intent is written at the pending key BEFORE the part's first byte is uploaded, so every part a
 * crash can leave behind has a staging doc naming it (collected once abandoned, pending-gc.ts).
 */
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
  /** version.ts INTENT_FORMAT. */
  readonly format: string;
}

/** The intent of a part (see above), in the current format. */
export const newIntent = (identity: StagedIdentity): PartIntent => ({ format: INTENT_FORMAT, ...identity });

/** What the archive step wrote and expects verify to find. */
export interface PendingPart extends StagedIdentity {
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
  readonly part: Omit<IndexedPart, 'committed_at'>;
  readonly jobs: Readonly<Record<string, Omit<IndexedJob, 'committed_at' | 'deleted_at'>>>;
}

/** An intent read back (a pending doc); anything else is a CorruptObjectError naming the key. */
export const parseIntent = (bytes: Uint8Array, key: string): PartIntent => {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'not JSON', { cause: err });
  }
  if (!value || typeof value !== 'object') throw new CorruptObjectError(key, 'not an object');
  checkFormat('intent', (value as { format?: unknown }).format, key);
  return value as PartIntent;
};

/** A part's staging docs as listed under `pending/`. */
export interface StagedDocs {
  pending?: ListedObject;
}

/** Pending docs (intents) of the group by part name; other keys are left alone. */
export const stagedDocsByPart = (
  prefix: string,
  listed: readonly ListedObject[],
): Map<string, StagedDocs> => {
  const out = new Map<string, StagedDocs>();
  for (const o of listed) {
    const rest = o.key.slice(prefix.length);
    const name = rest.endsWith('.json') ? rest.slice(0, -5) : '';
    try {
      validatePartName(name);
    } catch {
      continue;
    }
    out.set(name, { pending: o });
  }
  return out;
};
