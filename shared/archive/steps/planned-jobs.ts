import { CorruptObjectError, InvalidInputError } from '../../errors';
import { validateJobId } from '../../ids';
import { tryParseTimestamp } from '../../time';
import { getObjectBytes, putJson } from '../../s3/objects';
import { plannedJobsKey, runPrefix } from '../keys';
import type { StepDeps } from './context';
import { isObj } from './shape';
import {
  PLANNED_FORMAT,
  type PlannedGroup,
  type PlannedJob,
  type PlannedJobsDoc,
  type RunContext,
} from './types';

/** The planned-jobs documents Plan writes per group and every later step of the group reads. */

export const writePlannedJobs = async (deps: StepDeps, doc: PlannedJobsDoc): Promise<string> => {
  const key = plannedJobsKey(doc.run_id, doc.page, doc.shop_id, doc.month);
  await putJson(deps, key, doc);
  return key;
};

/**
 * `group.jobsKey` must be this run's planned-jobs document of this shop × month: a step never reads
 * (let alone acts on) a list from anywhere else. Returns the page it was planned on.
 */
export const jobsKeyPage = (run: RunContext, group: PlannedGroup, field: string): number => {
  const prefix = `${runPrefix(run.runId)}plan/`;
  const suffix = `/${group.shopId}/${group.month}.json`;
  const page =
    group.jobsKey.startsWith(prefix) && group.jobsKey.endsWith(suffix)
      ? group.jobsKey.slice(prefix.length, -suffix.length)
      : '';
  if (
    !/^\d+$/.test(page) ||
    plannedJobsKey(run.runId, Number(page), group.shopId, group.month) !== group.jobsKey
  ) {
    throw new InvalidInputError(field, `not this run's planned jobs of ${group.shopId} ${group.month}`);
  }
  return Number(page);
};

export const checkJobsKey = (run: RunContext, group: PlannedGroup, field: string): void => {
  jobsKeyPage(run, group, field);
};

export const readPlannedJobs = async (
  deps: StepDeps,
  run: RunContext,
  group: PlannedGroup,
): Promise<PlannedJob[]> => {
  const key = group.jobsKey;
  const got = await getObjectBytes(deps.s3, deps.bucket, key);
  if (!got) throw new CorruptObjectError(key, 'planned jobs document is missing');
  let v: unknown;
  try {
    v = JSON.parse(got.bytes.toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'planned jobs document is not JSON', { cause: err });
  }
  if (!isObj(v) || v.format !== PLANNED_FORMAT || !Array.isArray(v.jobs)) {
    throw new CorruptObjectError(key, `not a ${PLANNED_FORMAT} document`);
  }
  if (v.run_id !== run.runId || v.shop_id !== group.shopId || v.month !== group.month) {
    throw new CorruptObjectError(key, 'planned jobs document belongs to another run or group');
  }
  const seen = new Set<string>();
  for (const j of v.jobs) {
    if (
      !isObj(j) ||
      typeof j.job_id !== 'string' ||
      typeof j.completed_at !== 'string' ||
      typeof j.status !== 'string'
    ) {
      throw new CorruptObjectError(key, 'planned job entry needs job_id, status and completed_at');
    }
    // Job ids become hot-prefix keys below: checked again here, whoever wrote this document.
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
  }
  const jobs = v.jobs as PlannedJob[];
  if (jobs.length !== group.jobCount) {
    throw new CorruptObjectError(key, `holds ${jobs.length} jobs, the plan said ${group.jobCount}`);
  }
  return jobs;
};
