import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { validateJobId } from '../ids';
import { normalizeEtag } from '../s3/objects';
import { compareCodePoints } from './helpers';
import { classifyJobKey, DETAILS_ROOT, jobPrefix } from './keys';
import type { JobObject } from './store';

/**
 * Lists the hot objects of many jobs at once, with as few LIST requests as the keys allow: one walk
 * over `job-details/` in key order that reads pages of up to 1,000 keys and, wherever the next wanted
 * job lies beyond the page, jumps there with `StartAfter`. Wanted jobs that sit close together (a shop
 * with thousands of due jobs) share pages; a lone job costs one LIST, as listing its own prefix would.
 * So the requests are at most min(jobs, hot keys in the walked range / 1,000 + jumps). Keys of other
 * jobs met on the way are skipped. Each LIST is a fresh request (no continuation token to keep).
 */

/** The cursor logic (pure): where the walk goes after a page that ended at `lastKey`. */
export const nextStart = (
  prefixes: readonly string[],
  from: number,
  lastKey: string,
): { next: number; startAfter: string } => {
  let i = from;
  // A wanted prefix is passed when the page's last key sorts after everything under it.
  while (i < prefixes.length) {
    const p = prefixes[i] as string;
    if (lastKey > p && !lastKey.startsWith(p)) i++;
    else break;
  }
  const p = prefixes[i];
  const jump = p === undefined ? lastKey : justBelow(p);
  return { next: i, startAfter: jump > lastKey ? jump : lastKey };
};

/**
 * The StartAfter that lands on `job-details/{id}/` itself: `job-details/{id}.~`. Job ids use only
 * [A-Za-z0-9._-] (ids.ts), all below `~`, and `.` sorts below `/`, so every other job whose id starts
 * with `{id}-` or `{id}.` is skipped, and nothing under `{id}/` is.
 */
const justBelow = (prefix: string): string => `${prefix.slice(0, -1)}.~`;

export interface HotListing {
  readonly objects: ReadonlyMap<string, JobObject[]>;
  readonly requests: number;
}

export const listJobsObjects = async (
  s3: S3Client,
  bucket: string,
  jobIds: readonly string[],
  pageSize = 1000,
): Promise<HotListing> => {
  const ids = [...new Set(jobIds.map(validateJobId))];
  // Key order is the order of the prefixes (`a-b/` sorts before `a/`), not of the ids.
  const prefixes = ids.map(jobPrefix).sort(compareCodePoints);
  const idOf = new Map(ids.map((id) => [jobPrefix(id), id]));
  const objects = new Map<string, JobObject[]>(ids.map((id) => [id, []]));
  let requests = 0;
  let i = 0;
  let startAfter = justBelow(prefixes[0] ?? DETAILS_ROOT);
  while (i < prefixes.length) {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: DETAILS_ROOT,
        StartAfter: startAfter,
        MaxKeys: pageSize,
      }),
    );
    requests++;
    const contents = page.Contents ?? [];
    for (const o of contents) {
      if (o.Key === undefined) continue;
      const segment = o.Key.slice(DETAILS_ROOT.length, o.Key.indexOf('/', DETAILS_ROOT.length) + 1);
      const id = idOf.get(`${DETAILS_ROOT}${segment}`);
      if (id === undefined) continue;
      objects.get(id)?.push({
        key: o.Key,
        size: o.Size ?? 0,
        etag: normalizeEtag(o.ETag),
        lastModified: o.LastModified,
        kind: classifyJobKey(id, o.Key),
      });
    }
    const last = contents.at(-1)?.Key;
    if (!page.IsTruncated || last === undefined) break;
    ({ next: i, startAfter } = nextStart(prefixes, i, last));
  }
  return { objects, requests };
};
