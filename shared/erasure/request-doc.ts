import { ERASURE_PREFIX } from '../archive/format';
import { CorruptObjectError } from '../errors';
import { ERASURE_KINDS, type ErasureKind, type ErasureState } from './summary';

/**
 * An erasure request as stored in the ledger (shared/erasure/ledger.ts): its keys, its record and
 * the record's parser. Apart from the ledger's I/O so the erasure summary's rebuild can read requests
 * without importing the ledger (which updates that summary).
 */
export const REQUESTS_PREFIX = `${ERASURE_PREFIX}requests/`;
/**
 * An empty marker per completed request, so the runs that look for open (overdue) requests list the
 * completed ones instead of reading them: a year of requests costs a LIST, not a GET each.
 */
export const COMPLETE_PREFIX = `${ERASURE_PREFIX}complete/`;
export const ERASURE_REQUEST_FORMAT = 'job-details-archive/erasure-request@1';

/** What an erasure removed: counts and names of kinds of things, never content or document ids. */
export type ErasureReceipt = Readonly<Record<string, number | string | boolean | null>>;

export interface ErasureRequest {
  readonly format: typeof ERASURE_REQUEST_FORMAT;
  /** `{yyyymmddThhmmssZ}-{kind}-{8 base32}` or the caller's id (a webhook's id): key-safe. */
  readonly id: string;
  readonly kind: ErasureKind;
  readonly shopId: string;
  /** redact-doc only, until complete; then removed (docSha256 stays). */
  readonly docId?: string;
  /** sha256 hex of the document id (redact-doc): lets a receipt be matched without keeping the id. */
  readonly docSha256?: string;
  readonly receivedAt: string;
  readonly state: ErasureState;
  /** Why a request waits (e.g. `restore`: a Glacier part must be restored first). */
  readonly pendingReason?: string;
  readonly updatedAt: string;
  readonly completedAt?: string;
  /** Runs (execution names, CLI run ids) that worked on it, in order, each once. */
  readonly runs: readonly string[];
  readonly receipt?: ErasureReceipt;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/** A stored record checked field by field (CorruptObjectError names the key and the field). */
export const parseRequest = (key: string, bytes: Buffer): ErasureRequest => {
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new CorruptObjectError(key, 'not JSON', { cause: err });
  }
  const r = v as Partial<ErasureRequest> | null;
  const bad = (field: string): never => {
    throw new CorruptObjectError(key, `erasure request field ${field} is missing or malformed`);
  };
  if (typeof r !== 'object' || r === null) return bad('(record)');
  if (r.format !== ERASURE_REQUEST_FORMAT) bad('format');
  if (!isString(r.id)) bad('id');
  if (!ERASURE_KINDS.includes(r.kind as ErasureKind)) bad('kind');
  if (!isString(r.shopId)) bad('shopId');
  if (!isString(r.receivedAt)) bad('receivedAt');
  if (r.state !== 'received' && r.state !== 'pending' && r.state !== 'complete') bad('state');
  if (!Array.isArray(r.runs) || !r.runs.every(isString)) bad('runs');
  return r as ErasureRequest;
};
