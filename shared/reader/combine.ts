import { type JobDetails, type JobDetailsPayload, mergeAllJobDetails } from '../details';
import type { JobRecord } from '../archive/records';
import { sourceOf } from './tally';
import type { ReadSource } from './types';

/**
 * Merges what both sides found. Archived records come first (oldest archival first), then the hot
 * flushes, which are the newest; mergeAllJobDetails keeps first-occurrence order and drops repeats,
 * so a job archived but not yet deleted (same data on both sides) comes out once. Pure.
 */
export const combineDetails = (
  archived: readonly JobRecord[],
  hot: readonly JobDetailsPayload[],
): { details: JobDetails | null; source: ReadSource } => {
  if (archived.length === 0 && hot.length === 0) return { details: null, source: 'none' };
  return {
    details: mergeAllJobDetails([...archived.map((r) => r.details), ...hot]),
    source: sourceOf(hot.length > 0, archived.length > 0),
  };
};

/** Hot platform-data.json is overwritten in place, so when present it is the newest; else the archive's. */
export const choosePlatformData = (
  hot: unknown | null,
  archived: unknown | null,
): { data: unknown | null; source: ReadSource } =>
  hot !== null
    ? { data: hot, source: 'hot' }
    : archived !== null
      ? { data: archived, source: 'archive' }
      : { data: null, source: 'none' };
