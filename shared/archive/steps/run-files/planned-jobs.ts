import { gunzipSync } from 'node:zlib';
import { classifyJobKey, type JobObject, jobPrefix } from '../../../details';
import { CorruptObjectError, InvalidInputError } from '../../../errors';
import { validateJobId } from '../../../ids';
import { getObjectBytes } from '../../../s3/objects';
import { tryParseTimestamp } from '../../../time';
import { plannedJobsKey, runPrefix } from '../../format';
import type { StepDeps } from '../context';
import { isObj } from '../shape';
import type { PlannedGroup, PlannedJob, RunContext } from '../types';

/**
 * The planned-jobs file Plan writes per page (plan-files.ts: one gzip member per group); the batch
 * steps and Report read their groups' byte ranges of it and inflate each group's member alone.
 */

/**
 * `group.jobsKey` must be this run's planned-jobs file: a step never reads (let alone acts on) a list
 * from anywhere else. Returns the page it was planned on.
 */
export const jobsKeyPage = (run: RunContext, group: PlannedGroup, field: string): number => {
  const prefix = `${runPrefix(run.runId)}plan/`;
  const suffix = plannedJobsKey(run.runId, 0).slice(`${prefix}0`.length);
  const page =
    group.jobsKey.startsWith(prefix) && group.jobsKey.endsWith(suffix)
      ? group.jobsKey.slice(prefix.length, -suffix.length)
      : '';
  if (!/^\d+$/.test(page) || plannedJobsKey(run.runId, Number(page)) !== group.jobsKey) {
    throw new InvalidInputError(field, `not this run's planned jobs of ${group.shopId} ${group.month}`);
  }
  return Number(page);
};

export const checkJobsKey = (run: RunContext, group: PlannedGroup, field: string): void => {
  jobsKeyPage(run, group, field);
};

const groupKey = (g: { shopId: string; month: string }): string => `${g.shopId}\u0000${g.month}`;

/**
 * A line's listed hot objects, checked: every key under the job's own prefix (a step never acts on a
 * key of another job), sizes whole numbers. Absent in a plan written without a listing.
 */
const parseObjects = (key: string, jobId: string, v: unknown): JobObject[] | undefined => {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw new CorruptObjectError(key, `job ${jobId}: objects is not a list`);
  const prefix = jobPrefix(jobId);
  return v.map((o) => {
    if (
      !isObj(o) ||
      typeof o.key !== 'string' ||
      !o.key.startsWith(prefix) ||
      typeof o.size !== 'number' ||
      !Number.isInteger(o.size) ||
      o.size < 0 ||
      (o.etag !== null && typeof o.etag !== 'string') ||
      (o.lastModified !== null &&
        (typeof o.lastModified !== 'string' || Number.isNaN(Date.parse(o.lastModified))))
    ) {
      throw new CorruptObjectError(key, `job ${jobId}: a listed object is not a hot object of the job`);
    }
    return {
      key: o.key,
      size: o.size,
      etag: o.etag === null ? undefined : (o.etag as string),
      lastModified: o.lastModified === null ? undefined : new Date(o.lastModified as string),
      kind: classifyJobKey(jobId, o.key),
    };
  });
};

/** A group's member inflated (an empty range: no lines). */
const groupText = (key: string, group: PlannedGroup, member: Buffer): string => {
  if (member.length === 0) return '';
  try {
    return gunzipSync(member).toString('utf8');
  } catch (err) {
    throw new CorruptObjectError(key, `${group.shopId} ${group.month}: planned jobs do not inflate`, {
      cause: err,
    });
  }
};

/** One group's lines, checked: ids safe, completed in the group's month, none twice, as many as planned. */
const parseGroupJobs = (
  key: string,
  group: PlannedGroup,
  text: string,
  listed: Map<string, JobObject[]>,
): PlannedJob[] => {
  const lines = text.split('\n');
  if (lines.pop() !== '')
    throw new CorruptObjectError(key, `${group.shopId} ${group.month}: range does not end a line`);
  const seen = new Set<string>();
  const jobs = lines.map((line) => {
    let j: unknown;
    try {
      j = JSON.parse(line);
    } catch (err) {
      throw new CorruptObjectError(key, 'planned job line is not JSON', { cause: err });
    }
    if (
      !isObj(j) ||
      typeof j.job_id !== 'string' ||
      typeof j.completed_at !== 'string' ||
      typeof j.status !== 'string'
    ) {
      throw new CorruptObjectError(key, 'planned job entry needs job_id, status and completed_at');
    }
    // Job ids become hot-prefix keys below: checked again here, whoever wrote this file.
    try {
      validateJobId(j.job_id);
    } catch (err) {
      throw new CorruptObjectError(key, `planned job id is unsafe: ${(err as Error).message}`);
    }
    if (
      tryParseTimestamp(j.completed_at)?.iso !== j.completed_at ||
      j.completed_at.slice(0, 7) !== group.month
    ) {
      throw new CorruptObjectError(key, `job ${j.job_id} did not complete in ${group.month}`);
    }
    if (seen.has(j.job_id)) throw new CorruptObjectError(key, `job ${j.job_id} is listed twice`);
    seen.add(j.job_id);
    const { objects, ...job } = j;
    const hot = parseObjects(key, j.job_id, objects);
    if (hot) listed.set(j.job_id, hot);
    return job as unknown as PlannedJob;
  });
  if (jobs.length !== group.jobCount) {
    throw new CorruptObjectError(
      key,
      `${group.shopId} ${group.month}: holds ${jobs.length} jobs, the plan said ${group.jobCount}`,
    );
  }
  return jobs;
};

/** Planned jobs of each group, by group. */
export interface BatchJobs {
  get(group: { shopId: string; month: string }): PlannedJob[];
  /** The hot objects Plan listed for each job (jobs of a plan without a listing are absent). */
  readonly listed: ReadonlyMap<string, JobObject[]>;
}

/**
 * The planned jobs of a batch's groups in ONE ranged GET (Plan wrote a batch's groups next to each
 * other in the page's file), each group's member inflated alone.
 */
export const readBatchJobs = async (
  deps: StepDeps,
  run: RunContext,
  groups: readonly PlannedGroup[],
): Promise<BatchJobs> => {
  const byGroup = new Map<string, PlannedJob[]>();
  const listed = new Map<string, JobObject[]>();
  const first = groups[0];
  if (first !== undefined) {
    const key = first.jobsKey;
    for (const g of groups) {
      checkJobsKey(run, g, 'group.jobsKey');
      if (g.jobsKey !== key) throw new InvalidInputError('group.jobsKey', 'a batch reads one plan page');
    }
    const start = Math.min(...groups.map((g) => g.jobsRange[0]));
    const end = Math.max(...groups.map((g) => g.jobsRange[1]));
    const got =
      end > start
        ? await getObjectBytes(deps.s3, deps.bucket, key, { offset: start, length: end - start })
        : null;
    if (end > start && (!got || got.bytes.length !== end - start)) {
      throw new CorruptObjectError(key, `planned jobs bytes ${start}-${end} are missing`);
    }
    for (const g of groups) {
      const [s, e] = g.jobsRange;
      const text = got ? groupText(key, g, got.bytes.subarray(s - start, e - start)) : '';
      byGroup.set(groupKey(g), parseGroupJobs(key, g, text, listed));
    }
  }
  return {
    listed,
    get: (group) => {
      const jobs = byGroup.get(groupKey(group));
      if (!jobs) throw new InvalidInputError('group', `${group.shopId} ${group.month} is not in this batch`);
      return jobs;
    },
  };
};
