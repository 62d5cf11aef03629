import { CorruptObjectError, InvalidInputError } from '../../../errors';
import { addCounts, type RequestCounts, zeroCounts } from '../../../metrics';
import { getObjectBytes } from '../../../s3/objects';
import type { StepDeps } from '../context';
import { parseBatchEvent, parseGroupResult } from '../events';
import { parseRequests } from '../run-totals';
import { isObj } from '../shape';
import type { GroupResult, TallyEvent } from '../types';

/**
 * Reads what a page's Distributed Map run left through its ResultWriter (Transformation NONE, JSON):
 * `{Prefix}/{map run id}/manifest.json` names result files by status, each a JSON array of child
 * executions (`Status`, `Input` and `Output` as JSON strings, `Error` / `Cause` when failed). A
 * succeeded child's output is its batch's group results; a failed or pending child's input names the
 * groups that therefore failed. Every planned group must be accounted for, or Tally fails the run.
 */
export interface PageMapResults {
  readonly results: GroupResult[];
  /** Requests of the batches themselves (batch-result `overhead`). */
  readonly overhead: RequestCounts;
}

const STATUSES = ['SUCCEEDED', 'FAILED', 'PENDING'] as const;

const readJson = async (deps: StepDeps, key: string, what: string): Promise<unknown> => {
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) throw new CorruptObjectError(key, `${what} is missing`);
  try {
    return JSON.parse(got.bytes.toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, `${what} is not JSON`, { cause: err });
  }
};

const jsonField = (entry: Record<string, unknown>, field: string, key: string): unknown => {
  const text = entry[field];
  if (typeof text !== 'string') throw new CorruptObjectError(key, `a result entry has no ${field}`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CorruptObjectError(key, `a result entry's ${field} is not JSON`, { cause: err });
  }
};

export const readPageMapResults = async (deps: StepDeps, event: TallyEvent): Promise<PageMapResults> => {
  if (!event.mapRun) {
    if (event.groups > 0)
      throw new InvalidInputError('mapRun', `the page planned ${event.groups} groups but ran no Map`);
    return { results: [], overhead: zeroCounts() };
  }
  const { Bucket, Key } = event.mapRun.ResultWriterDetails;
  if (
    Bucket !== deps.bucket ||
    !Key.startsWith(`${event.resultsPrefix}/`) ||
    !Key.endsWith('/manifest.json')
  ) {
    throw new InvalidInputError(
      'mapRun.ResultWriterDetails',
      `not this page's results: s3://${Bucket}/${Key}`,
    );
  }
  const manifest = await readJson(deps, Key, 'Map run manifest');
  if (!isObj(manifest) || !isObj(manifest.ResultFiles))
    throw new CorruptObjectError(Key, 'not a Map run manifest (no ResultFiles)');
  const dir = Key.slice(0, -'manifest.json'.length);
  const results: GroupResult[] = [];
  let overhead = zeroCounts();
  for (const status of STATUSES) {
    const files = manifest.ResultFiles[status] ?? [];
    if (!Array.isArray(files)) throw new CorruptObjectError(Key, `ResultFiles.${status} is not a list`);
    for (const f of files) {
      const fileKey = isObj(f) && typeof f.Key === 'string' ? f.Key : '';
      if (!fileKey.startsWith(dir))
        throw new CorruptObjectError(Key, `result file outside the run: ${fileKey}`);
      const entries = await readJson(deps, fileKey, 'Map run result file');
      if (!Array.isArray(entries)) throw new CorruptObjectError(fileKey, 'not a list of child executions');
      for (const entry of entries) {
        if (!isObj(entry)) throw new CorruptObjectError(fileKey, 'a result entry is not an object');
        if (status === 'SUCCEEDED') {
          const out = jsonField(entry, 'Output', fileKey);
          if (!isObj(out) || !Array.isArray(out.results))
            throw new CorruptObjectError(fileKey, 'a child output has no results');
          out.results.forEach((r, i) => {
            results.push(parseGroupResult(r, `results[${i}]`));
          });
          overhead = addCounts(overhead, parseRequests(out.overhead, 'overhead'));
        } else {
          const { batch } = parseBatchEvent(jsonField(entry, 'Input', fileKey));
          const error = typeof entry.Error === 'string' ? entry.Error : `States.${status}`;
          const cause =
            typeof entry.Cause === 'string' ? entry.Cause : `the batch's child execution ended ${status}`;
          for (const g of batch.groups)
            results.push({ group: { shopId: g.shopId, month: g.month }, failed: true, error, cause });
        }
      }
    }
  }
  if (results.length !== event.groups) {
    throw new CorruptObjectError(Key, `results cover ${results.length} of the page's ${event.groups} groups`);
  }
  return { results, overhead };
};
