import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { HOT_PREFIX } from '../archive/format';
import type { StepDeps } from '../archive/steps/context';
import { mapLimit } from '../concurrency';
import { META_JOB_ID, META_SHOP_ID } from '../details';
import { isNotFound, type ListedObject, listAll } from '../s3/objects';

/** HEADs in flight while attributing hot objects. */
const HEAD_CONCURRENCY = 16;

export interface ShopHotObjects {
  /** Keys of the shop's hot objects (flushes and platform data). */
  readonly keys: string[];
  /** Jobs they belong to that have no row (expired by TTL before archival). */
  readonly rowlessJobs: number;
  /** Objects under a job of the shop whose metadata names another shop: kept (not the shop's data). */
  readonly foreignKept: number;
  readonly listRequests: number;
  readonly headRequests: number;
}

/**
 * The shop's hot objects, in ONE walk over `job-details/` (keys / 1,000 LISTs):
 * - every object of a job that has a row of the shop (jobIds), checked by HEAD against its `shop-id`
 *   metadata (an object of another shop under the same job id is kept and counted);
 * - row-less jobs: a job whose newest object is older than `jobTtlDays` may be one whose row expired
 *   (the orphan sweep's rule, docs/steady-state.md); one HEAD of its first object says its shop.
 * Younger jobs without a row are not the shop's: the writer creates the row before a job's first
 * flush, and a row lives `jobTtlDays` after completion.
 */
export const findShopHotObjects = async (
  deps: StepDeps,
  shopId: string,
  jobIds: ReadonlySet<string>,
): Promise<ShopHotObjects> => {
  const oldBefore = deps.clock().getTime() - deps.settings.jobTtlDays * 86_400_000;
  const ours: ListedObject[] = [];
  const rowless: ListedObject[][] = [];
  // A job's keys are contiguous in key order: decide each job as the walk leaves it.
  const walk: { current: { jobId: string; objects: ListedObject[] } | null } = { current: null };
  let listed = 0;
  const close = () => {
    const current = walk.current;
    if (!current) return;
    if (jobIds.has(current.jobId)) ours.push(...current.objects);
    else {
      const newest = Math.max(
        ...current.objects.map((o) => o.lastModified?.getTime() ?? Number.POSITIVE_INFINITY),
      );
      if (newest < oldBefore) rowless.push(current.objects);
    }
    walk.current = null;
  };
  for await (const o of listAll(deps.s3, deps.bucket, HOT_PREFIX)) {
    listed++;
    const jobId = o.key.slice(HOT_PREFIX.length).split('/')[0] ?? '';
    if (walk.current?.jobId !== jobId) {
      close();
      walk.current = { jobId, objects: [] };
    }
    walk.current.objects.push(o);
  }
  close();

  let heads = 0;
  const meta = async (key: string): Promise<Record<string, string> | null> => {
    heads++;
    try {
      const h = await deps.s3.send(new HeadObjectCommand({ Bucket: deps.bucket, Key: key }));
      return h.Metadata ?? {};
    } catch (err) {
      if (isNotFound(err)) return null; // gone meanwhile: nothing to delete
      throw err;
    }
  };
  const keys: string[] = [];
  let foreignKept = 0;
  // A job with a row of the shop: its objects are the shop's unless their metadata names another shop.
  await mapLimit(ours, HEAD_CONCURRENCY, async (o) => {
    const m = await meta(o.key);
    if (m === null) return;
    const shop = m[META_SHOP_ID];
    if (shop === undefined || shop === shopId) keys.push(o.key);
    else foreignKept++;
  });
  // A row-less old job: the shop's if its first object's metadata names the shop and the job.
  let rowlessJobs = 0;
  await mapLimit(rowless, HEAD_CONCURRENCY, async (objects) => {
    const first = objects[0];
    if (!first) return;
    const jobId = first.key.slice(HOT_PREFIX.length).split('/')[0];
    const m = await meta(first.key);
    if (m?.[META_SHOP_ID] !== shopId || m[META_JOB_ID] !== jobId) return;
    rowlessJobs++;
    keys.push(first.key);
    for (const o of objects.slice(1)) {
      const mo = await meta(o.key);
      if (mo === null) continue;
      if (mo[META_SHOP_ID] === undefined || mo[META_SHOP_ID] === shopId) keys.push(o.key);
      else foreignKept++;
    }
  });
  return {
    keys: keys.sort(),
    rowlessJobs,
    foreignKept,
    listRequests: Math.max(1, Math.ceil(listed / 1000)),
    headRequests: heads,
  };
};
