import { InvalidInputError } from '../../errors';
import { type RequestCounts, zeroCounts } from '../../metrics';
import { int, obj } from './shape';
import type { RunTotals } from './types';

/** The run's totals: zero, and parsed back from a state payload. */

export const zeroTotals = (): RunTotals => ({
  jobsPlanned: 0,
  jobsArchived: 0,
  jobsSkipped: 0,
  jobsQuarantined: 0,
  partsWritten: 0,
  bytesIn: 0,
  bytesOut: 0,
  objectsDeleted: 0,
  objectsKept: 0,
  deleteErrors: 0,
  jobsDeleted: 0,
  groupsOk: 0,
  groupsFailed: 0,
  requests: zeroCounts(),
});

const COUNT_FIELDS = [
  'jobsPlanned',
  'jobsArchived',
  'jobsSkipped',
  'jobsQuarantined',
  'partsWritten',
  'bytesIn',
  'bytesOut',
  'objectsDeleted',
  'objectsKept',
  'deleteErrors',
  'jobsDeleted',
  'groupsOk',
  'groupsFailed',
] as const;

export const parseRequests = (v: unknown, field: string): RequestCounts => {
  const o = obj(v, field);
  const byType: Record<string, number> = {};
  if (o.byType !== undefined) {
    for (const [k, n] of Object.entries(obj(o.byType, `${field}.byType`))) {
      if (!/^(s3|dynamodb)\.[A-Za-z0-9]+$/.test(k))
        throw new InvalidInputError(`${field}.byType`, `unknown request type ${JSON.stringify(k)}`);
      byType[k] = int(n, `${field}.byType.${k}`);
    }
  }
  return {
    s3: int(o.s3, `${field}.s3`),
    dynamodb: int(o.dynamodb, `${field}.dynamodb`),
    ...(o.byType !== undefined ? { byType } : {}),
  };
};

export const parseTotals = (v: unknown, field = 'totals'): RunTotals => {
  const o = obj(v, field);
  const t = zeroTotals();
  for (const k of COUNT_FIELDS) t[k] = int(o[k], `${field}.${k}`);
  t.requests = parseRequests(o.requests, `${field}.requests`);
  return t;
};
