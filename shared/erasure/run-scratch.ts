import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { RUNS_PREFIX, runPrefix, validateRunId } from '../archive/format';
import type { StepDeps } from '../archive/steps/context';
import { mapLimit } from '../concurrency';
import { ConcurrentModificationError } from '../errors';
import { getObjectBytes, type ListedObject, listAllArray, putConditional } from '../s3/objects';
import {
  type ShopMatcher,
  scratchNames,
  scrubBatchesJsonl,
  scrubPlannedJobs,
  scrubScratchObject,
} from './scrub';

/**
 * The S3 side of scrubbing run scratch (`job-details-runs/{run}/`) of forgotten shops (the byte and
 * JSON logic is scrub.ts): find the objects that name them, then rewrite each with If-Match on the
 * ETag read (a run may be writing its own scratch: a 412 re-reads and scrubs again) or delete it when
 * its key names a shop. Used by forget (forget-scratch.ts) and by a run's own Report (own-run.ts).
 */

/** Where forget leaves a note in a run it could not scrub yet (docs/erasure.md "Run scratch"). */
export const erasureMarkersPrefix = (runId: string): string => `${runPrefix(runId)}erasure/`;
export const erasureMarkerKey = (runId: string, requestId: string): string =>
  `${erasureMarkersPrefix(runId)}${requestId}.json`;

const PLAN_PAGE = /^(.*\/plan\/\d+\/)(batches\.jsonl|jobs\.jsonl\.gz)$/;
const JOBS = 'jobs.jsonl.gz';

/** Every run's scratch objects, by run id (keys outside a valid run id's folder are left alone). */
export const listRunScratch = async (deps: StepDeps): Promise<Map<string, ListedObject[]>> => {
  const runs = new Map<string, ListedObject[]>();
  for (const o of await listAllArray(deps.s3, deps.bucket, RUNS_PREFIX)) {
    const runId = o.key.slice(RUNS_PREFIX.length).split('/')[0] ?? '';
    try {
      validateRunId(runId);
    } catch {
      continue;
    }
    runs.set(runId, [...(runs.get(runId) ?? []), o]);
  }
  return runs;
};

/**
 * Keys among `objects` that name a shop (key or body), one GET each. A page's planned jobs
 * (`jobs.jsonl.gz`, the largest scratch) count when their page's batches name a shop (those bytes
 * are the shop's jobs) and when their own text does: another shop's job may name it in free text
 * on a page where it has no group (so each is read: a forget is rare, a run's scratch lives 3 days).
 */
export const findNamed = async (
  deps: StepDeps,
  objects: readonly ListedObject[],
  m: ShopMatcher,
): Promise<string[]> => {
  const keys = new Set(objects.map((o) => o.key));
  const named = await mapLimit(objects, deps.settings.readConcurrency, async (o) => {
    if (m.names(o.key)) return [o.key];
    const got = await getObjectBytes(deps.s3, deps.bucket, o.key);
    if (!got || !namesIn(o.key, got.bytes, m)) return [];
    const page = PLAN_PAGE.exec(o.key);
    const jobs = page?.[2] === 'batches.jsonl' ? `${page[1]}${JOBS}` : undefined;
    return jobs !== undefined && keys.has(jobs) ? [jobs, o.key] : [o.key];
  });
  return [...new Set(named.flat())];
};

/** scratchNames; planned jobs that do not inflate whole (a member emptied by an earlier scrub) are
 * scrubbed member by member, which keeps every member naming no shop as it is. */
const namesIn = (key: string, bytes: Buffer, m: ShopMatcher): boolean => {
  try {
    return scratchNames(key, bytes, m);
  } catch (err) {
    if (key.endsWith(`/${JOBS}`)) return true;
    throw err;
  }
};

const ATTEMPTS = 5;

/** Re-read and scrub again while the object changes under us (If-Match failed). */
const retrying = async (key: string, once: () => Promise<boolean>): Promise<boolean> => {
  for (let i = 0; i < ATTEMPTS; i++) {
    try {
      return await once();
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError)) throw err;
    }
  }
  throw new ConcurrentModificationError(key);
};

const put = (deps: StepDeps, key: string, bytes: Buffer, etag: string) =>
  putConditional(
    deps.s3,
    {
      Bucket: deps.bucket,
      Key: key,
      Body: bytes,
      ContentType: key.endsWith('.gz')
        ? 'application/gzip'
        : key.endsWith('.jsonl')
          ? 'application/x-ndjson'
          : 'application/json',
    },
    etag,
  );

/** One object: true when it was rewritten or deleted. */
const scrubOne = (deps: StepDeps, key: string, rel: string, m: ShopMatcher): Promise<boolean> =>
  retrying(key, async () => {
    if (m.names(key)) {
      await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));
      return true;
    }
    const got = await getObjectBytes(deps.s3, deps.bucket, key);
    if (!got) return false;
    const out = scrubScratchObject(rel, got.bytes, m);
    if (out.action === 'keep') return false;
    if (out.action === 'delete')
      await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: key }));
    else await put(deps, key, out.bytes, got.etag);
    return true;
  });

/**
 * A plan page: the planned jobs first (the shops' members emptied at their length, every other
 * group's range still valid, any other mention masked: scrub.ts scrubPlannedJobs), then the batches
 * without the shops' groups. A crash between leaves the batches naming the shop, so a rerun blanks
 * the same ranges again and finishes. Batches naming no shop (the shop named only in another shop's
 * free text) stay as they are. Returns the objects rewritten.
 */
const scrubPlanPage = async (deps: StepDeps, dir: string, m: ShopMatcher): Promise<number> => {
  let changed = 0;
  await retrying(`${dir}batches.jsonl`, async () => {
    changed = 0;
    const batches = await getObjectBytes(deps.s3, deps.bucket, `${dir}batches.jsonl`);
    const text = batches?.bytes.toString('utf8') ?? '';
    const named = m.names(text);
    const { text: kept, ranges } = named ? scrubBatchesJsonl(text, m) : { text, ranges: [] };
    const jobs = await getObjectBytes(deps.s3, deps.bucket, `${dir}${JOBS}`);
    if (jobs) {
      const scrubbed = scrubPlannedJobs(jobs.bytes, ranges, m);
      if (!scrubbed.equals(jobs.bytes)) {
        await put(deps, `${dir}${JOBS}`, scrubbed, jobs.etag);
        changed++;
      }
    }
    if (batches && named) {
      await put(deps, `${dir}batches.jsonl`, Buffer.from(kept, 'utf8'), batches.etag);
      changed++;
    }
    return changed > 0;
  });
  return changed;
};

/**
 * Scrubs the named keys (findNamed's); returns how many objects were rewritten or deleted (a plan
 * page's two files count two).
 */
export const scrubNamed = async (
  deps: StepDeps,
  named: readonly string[],
  m: ShopMatcher,
): Promise<number> => {
  const pages = new Set<string>();
  const rest: string[] = [];
  for (const key of named) {
    const page = PLAN_PAGE.exec(key);
    if (page?.[1] !== undefined && !m.names(key)) pages.add(page[1]);
    else rest.push(key);
  }
  let changed = 0;
  for (const dir of pages) changed += await scrubPlanPage(deps, dir, m);
  const done = await mapLimit(rest, deps.settings.readConcurrency, (key) =>
    scrubOne(deps, key, relOf(key), m),
  );
  return changed + done.filter(Boolean).length;
};

/** A scratch key below its run's folder (`plan/0/batches.jsonl`, `report.json`, …). */
const relOf = (key: string): string => key.slice(RUNS_PREFIX.length).split('/').slice(1).join('/');
