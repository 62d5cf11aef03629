import { CorruptObjectError } from '../../../errors';
import { getJson, putJson } from '../../../s3/objects';
import { type GroupFindingsKind, groupFindingsKey, planFindingsKey } from '../../format';
import type { StepDeps } from '../context';
import { isObj } from '../shape';
import type { GroupItem, QuarantinedJob } from '../types';
import { jobsKeyPage } from './planned-jobs';

/**
 * Findings documents: the complete list behind a count the state carries (quarantined jobs, delete
 * errors). Written by the step that found them, before it returns, so the attempt whose result
 * Step Functions keeps is the one that wrote last; Report reads one only when that result's count is
 * > 0, which makes a document left by an earlier, failed attempt harmless.
 */
export const FINDINGS_FORMAT = 'job-details-archive/findings@1';

export type FindingsKind = GroupFindingsKind | 'plan-quarantined';

export interface FindingsDoc<T> {
  readonly format: typeof FINDINGS_FORMAT;
  readonly run_id: string;
  readonly page: number;
  readonly kind: FindingsKind;
  /** Absent for plan-time findings (their rows may not even have a valid shop id). */
  readonly shop_id?: string;
  readonly month?: string;
  readonly items: T[];
}

export type QuarantineItem = { jobId: string; reason: string };
export type DeleteErrorItem = { key: string; code: string };

/** Writes a group's findings of one kind; returns the key. Nothing is written for an empty list. */
export const writeGroupFindings = async <T>(
  deps: StepDeps,
  event: GroupItem,
  kind: GroupFindingsKind,
  items: readonly T[],
): Promise<string | null> => {
  if (items.length === 0) return null;
  const { run, group } = event;
  const page = jobsKeyPage(run, group, 'group.jobsKey');
  const key = groupFindingsKey(run.runId, page, group.shopId, group.month, kind);
  const doc: FindingsDoc<T> = {
    format: FINDINGS_FORMAT,
    run_id: run.runId,
    page,
    kind,
    shop_id: group.shopId,
    month: group.month,
    items: [...items],
  };
  await putJson(deps, key, doc);
  return key;
};

export const writePlanFindings = async (
  deps: StepDeps,
  runId: string,
  page: number,
  items: readonly QuarantinedJob[],
): Promise<string | null> => {
  if (items.length === 0) return null;
  const key = planFindingsKey(runId, page);
  const doc: FindingsDoc<QuarantinedJob> = {
    format: FINDINGS_FORMAT,
    run_id: runId,
    page,
    kind: 'plan-quarantined',
    items: [...items],
  };
  await putJson(deps, key, doc);
  return key;
};

const strings = (v: unknown, fields: readonly string[]): boolean =>
  isObj(v) && fields.every((f) => typeof v[f] === 'string');

const ITEM_FIELDS: Record<FindingsKind, readonly string[]> = {
  quarantined: ['jobId', 'reason'],
  'delete-errors': ['key', 'code'],
  'plan-quarantined': ['shopId', 'jobId', 'reason'],
};

/** Reads a findings document a result said exists; missing or foreign is a CorruptObjectError. */
export const readFindings = async <T>(
  deps: StepDeps,
  key: string,
  expect: { runId: string; page: number; kind: FindingsKind },
): Promise<T[]> => {
  const v = await getJson(deps, key, 'findings document');
  if (v === null) throw new CorruptObjectError(key, 'findings document is missing');
  if (
    !isObj(v) ||
    v.format !== FINDINGS_FORMAT ||
    v.run_id !== expect.runId ||
    v.page !== expect.page ||
    v.kind !== expect.kind ||
    !Array.isArray(v.items)
  ) {
    throw new CorruptObjectError(key, `not this run's ${expect.kind} ${FINDINGS_FORMAT} document`);
  }
  const fields = ITEM_FIELDS[expect.kind];
  if (!v.items.every((item) => strings(item, fields))) {
    throw new CorruptObjectError(key, `every item needs ${fields.join(', ')}`);
  }
  return v.items as T[];
};
