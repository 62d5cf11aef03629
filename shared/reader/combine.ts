import type { JobRecord } from '../archive/format';
import { type JobDetails, type JobDetailsPayload, mergeAllJobDetails } from '../details';
import type { ReadSource } from './types';

/** Which side(s) contributed to a result. */
export const sourceOf = (hot: boolean, archive: boolean): ReadSource =>
  hot && archive ? 'both' : hot ? 'hot' : archive ? 'archive' : 'none';

/** Where anything in a combined result came from (e.g. details from the archive, platform data hot). */
export const combineSources = (...sources: ReadSource[]): ReadSource =>
  sources.every((s) => s === 'row' || s === 'none') && sources.includes('row')
    ? 'row'
    : sourceOf(
        sources.some((s) => s === 'hot' || s === 'both'),
        sources.some((s) => s === 'archive' || s === 'both'),
      );

/**
 * Merges what both sides found. Archived records come first (oldest archival first), then the hot
 * flushes, which are the newest; mergeAllJobDetails keeps first-occurrence order and drops repeats,
 * so a job archived but not yet deleted (same data on both sides) comes out once. Pure.
 */
export const combineDetails = (
  archived: readonly JobRecord[],
  hot: readonly JobDetailsPayload[],
  inline: JobDetails | null = null,
): { details: JobDetails | null; source: ReadSource } => {
  // A job archived with no flush objects has a record with empty details: it reads as null, exactly
  // as the same job did while hot (no objects → null), whatever side answered.
  const withDetails = archived.filter((r) => !isEmptyDetails(r.details));
  if (withDetails.length === 0 && hot.length === 0) {
    if (inline) return { details: inline, source: 'row' };
    return { details: null, source: archived.length > 0 ? 'archive' : 'none' };
  }
  // Inline details first: the design's dual-read prefers them; S3 objects are merged in.
  return {
    details: mergeAllJobDetails([...(inline ? [inline] : []), ...withDetails.map((r) => r.details), ...hot]),
    source: sourceOf(hot.length > 0, archived.length > 0),
  };
};

const isEmptyDetails = (d: JobDetails): boolean =>
  d.chunk_ids.length === 0 &&
  [d.failed, d.skipped, d.conflict].every((m) => Object.values(m).every((l) => l.length === 0));

/**
 * Inline platform_data on a pre-migration row wins (the dual-read prefers the row); otherwise hot
 * platform-data.json, overwritten in place, is the newest when present; else the archive's.
 */
export const choosePlatformData = (
  hot: unknown | null,
  archived: unknown | null,
  inline: unknown | null = null,
): { data: unknown | null; source: ReadSource } =>
  inline !== null
    ? { data: inline, source: 'row' }
    : hot !== null
      ? { data: hot, source: 'hot' }
      : archived !== null
        ? { data: archived, source: 'archive' }
        : { data: null, source: 'none' };
