import { InvalidInputError } from '../../../errors';
import { TERMINAL_STATUSES } from '../../../jobs/schema';
import { isObj } from '../shape';

/**
 * Where Plan resumes: which terminal status it is querying and the GSI key of the last item it
 * consumed (an item-level ExclusiveStartKey, so a page can stop mid-Query when a limit is hit).
 * Opaque to the state machine: base64url JSON.
 */
export interface GsiStartKey {
  readonly pk: string;
  readonly sk: string;
  readonly job_status: string;
  readonly status_created_at: string;
}

export interface PlanCursor {
  /** Index into TERMINAL_STATUSES. */
  readonly statusIndex: number;
  /** null: start that status from the beginning. */
  readonly startKey: GsiStartKey | null;
}

export const encodeCursor = (c: PlanCursor): string =>
  Buffer.from(JSON.stringify({ s: c.statusIndex, k: c.startKey }), 'utf8').toString('base64url');

const bad = (field: string, reason: string): never => {
  throw new InvalidInputError(field, reason);
};

export const decodeCursor = (cursor: string, field = 'cursor'): PlanCursor => {
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]+$/.test(cursor))
    return bad(field, 'not a cursor Plan returned');
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return bad(field, 'not a cursor Plan returned');
  }
  if (!isObj(v)) return bad(field, 'not a cursor Plan returned');
  const s = v.s;
  if (typeof s !== 'number' || !Number.isInteger(s) || s < 0 || s >= TERMINAL_STATUSES.length) {
    return bad(field, 'unknown status position');
  }
  if (v.k === null) return { statusIndex: s, startKey: null };
  const k = v.k;
  if (!isObj(k)) return bad(field, 'start key must be an object or null');
  const fields = ['pk', 'sk', 'job_status', 'status_created_at'] as const;
  for (const f of fields)
    if (typeof k[f] !== 'string' || k[f] === '') return bad(field, `start key needs ${f}`);
  if (Object.keys(k).length !== fields.length) return bad(field, 'start key has extra fields');
  if (k.job_status !== TERMINAL_STATUSES[s]) return bad(field, 'start key belongs to another status');
  return {
    statusIndex: s,
    startKey: {
      pk: k.pk as string,
      sk: k.sk as string,
      job_status: k.job_status as string,
      status_created_at: k.status_created_at as string,
    },
  };
};
