import { validateFlushId, validateJobId } from '../ids';

/**
 * The hot layout (seed Phase 1). Keys derive from the job id alone — no pointer lives in DynamoDB —
 * and every id is validated before it becomes a key segment.
 */
export const DETAILS_ROOT = 'job-details/';
export const FLUSH_SUFFIX = '.json.gz';
export const PLATFORM_DATA_NAME = 'platform-data.json';

/** `job-details/{job_id}/` — the trailing slash keeps job `j1` from listing job `j10`'s objects. */
export const jobPrefix = (jobId: string): string => `${DETAILS_ROOT}${validateJobId(jobId)}/`;

/** `job-details/{job_id}/{flush_id}.json.gz` */
export const detailsKey = (jobId: string, flushId: string): string =>
  `${jobPrefix(jobId)}${validateFlushId(flushId)}${FLUSH_SUFFIX}`;

/** `job-details/{job_id}/platform-data.json` */
export const platformDataKey = (jobId: string): string => `${jobPrefix(jobId)}${PLATFORM_DATA_NAME}`;

export type JobObjectKind = 'flush' | 'platform-data' | 'other';

/** The job and flush ids of a flush key, or undefined when `key` is not one. */
export const parseFlushKey = (key: string): { jobId: string; flushId: string } | undefined => {
  if (!key.startsWith(DETAILS_ROOT) || !key.endsWith(FLUSH_SUFFIX)) return undefined;
  const parts = key.slice(DETAILS_ROOT.length, -FLUSH_SUFFIX.length).split('/');
  if (parts.length !== 2) return undefined;
  const [jobId, flushId] = parts as [string, string];
  try {
    // Re-deriving the key proves both segments are valid ids.
    return detailsKey(jobId, flushId) === key ? { jobId, flushId } : undefined;
  } catch {
    return undefined;
  }
};

/**
 * What a key listed under job `jobId`'s prefix holds. Anything we would not have written ourselves (a
 * nested key, a flush name that fails id validation) is `other`: readers skip it, the archiver decides.
 */
export const classifyJobKey = (jobId: string, key: string): JobObjectKind => {
  if (key === platformDataKey(jobId)) return 'platform-data';
  return parseFlushKey(key)?.jobId === jobId ? 'flush' : 'other';
};
