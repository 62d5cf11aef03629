// From the modules themselves, not the details index: that loads the S3 store (and the AWS SDK), which
// the construct (archive-sql → flatten → here) must not pull into a CDK app or its jsii package.
import type { JsonObject } from '../../details/json';
import { DETAILS_ROOT } from '../../details/keys';
import { parseJobDetailsPayload } from '../../details/payload';
import { CorruptObjectError } from '../../errors';
import { expandDetails } from './doc-lists';
import {
  type ArchivedJobMeta,
  expandRow,
  type JobRecord,
  metaFromRow,
  type PartRecord,
  type RecordSource,
} from './records';
import { checkFormat, PART_FORMAT } from './version';

/** Shape checks for records read back from a part; anything unexpected is corruption, named by `where`. */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const fail = (where: string, reason: string): never => {
  throw new CorruptObjectError(where, reason);
};

const str = (o: Obj, f: string, where: string): string =>
  typeof o[f] === 'string' ? (o[f] as string) : fail(where, `field ${f} must be a string`);

const optStr = (o: Obj, f: string, where: string): string | null =>
  o[f] === null || o[f] === undefined ? null : str(o, f, where);

const optNum = (o: Obj, f: string, where: string): number | null =>
  o[f] === null || o[f] === undefined
    ? null
    : typeof o[f] === 'number' && Number.isFinite(o[f])
      ? (o[f] as number)
      : fail(where, `field ${f} must be a number`);

const source = (v: unknown, where: string): RecordSource => {
  if (!isObj(v)) return fail(where, 'source entry must be an object');
  const size = optNum(v, 'size', where);
  if (size === null) return fail(where, 'source entry needs a size');
  return { key: str(v, 'key', where), size };
};

/** A record's job meta: whole (a record without a row) or its difference from the row's. */
const jobMeta = (job: Obj, row: unknown, where: string): ArchivedJobMeta => {
  const base = isObj(row) ? metaFromRow(row) : null;
  const has = (f: string) => job[f] !== undefined;
  const pickStr = (f: keyof ArchivedJobMeta, required: boolean) =>
    has(f) || !base ? (required ? str(job, f, where) : optStr(job, f, where)) : (base[f] as string | null);
  const pickNum = (f: keyof ArchivedJobMeta) =>
    has(f) || !base ? optNum(job, f, where) : (base[f] as number | null);
  return {
    status: pickStr('status', true) as string,
    created_at: pickStr('created_at', false),
    started_at: pickStr('started_at', false),
    completed_at: pickStr('completed_at', true) as string,
    job_type: pickStr('job_type', false),
    platform: pickStr('platform', false),
    total_items: pickNum('total_items'),
    processed_items: pickNum('processed_items'),
    failed_items: pickNum('failed_items'),
    skipped_items: pickNum('skipped_items'),
    conflict_items: pickNum('conflict_items'),
    retry_count: pickNum('retry_count'),
    error_message: pickStr('error_message', false),
  };
};

/** A record's sources: `{name: size}` under the job's hot prefix, or (a key elsewhere) a list of {key, size}. */
const sources = (value: Obj, jobId: string, where: string): RecordSource[] => {
  const v = value.sources;
  if (Array.isArray(v)) return v.map((s) => source(s, where));
  if (!isObj(v)) return fail(where, 'job record needs sources');
  return Object.entries(v).map(([name, size]) =>
    typeof size === 'number' && Number.isSafeInteger(size) && size >= 0
      ? { key: `${DETAILS_ROOT}${jobId}/${name}`, size }
      : fail(where, `source ${name} needs a size`),
  );
};

/** The optional whole-row fields. */
const rowFields = (
  value: Obj,
  shopId: string,
  where: string,
): Pick<JobRecord, 'row' | 'row_reduced' | 'inline'> => {
  const out: { row?: JsonObject | null; row_reduced?: Record<string, number>; inline?: string[] } = {};
  if (value.row !== undefined) {
    if (value.row !== null && !isObj(value.row)) return fail(where, 'field row must be an object or null');
    const omitted = value.row_omitted ?? [];
    if (!Array.isArray(omitted) || !omitted.every((a) => typeof a === 'string'))
      return fail(where, 'field row_omitted must be a list of attribute names');
    const ttlAfter = value.row_ttl_after;
    if (ttlAfter !== undefined && !(typeof ttlAfter === 'number' && Number.isSafeInteger(ttlAfter)))
      return fail(where, 'field row_ttl_after must be a whole number of seconds');
    if (value.row === null) out.row = null;
    else {
      try {
        out.row = expandRow(value.row as JsonObject, shopId, str(value, 'job_id', where), omitted, ttlAfter);
      } catch (err) {
        if (err instanceof CorruptObjectError) throw err;
        return fail(where, (err as Error).message);
      }
    }
  }
  if (value.row_reduced !== undefined) {
    const r = value.row_reduced;
    if (!isObj(r) || !Object.values(r).every((n) => typeof n === 'number'))
      return fail(where, 'field row_reduced must map attribute names to sizes');
    out.row_reduced = r as Record<string, number>;
  }
  if (value.inline !== undefined) {
    if (!Array.isArray(value.inline) || !value.inline.every((a) => typeof a === 'string'))
      return fail(where, 'field inline must be a list of attribute names');
    out.inline = value.inline as string[];
  }
  return out;
};

/**
 * A record read back from a part. Job records of own parts carry no shop id: `shopId` (the part's,
 * from its header or key) fills it in; without it such a record is corrupt.
 */
export const parsePartRecord = (value: unknown, where: string, shopId?: string): PartRecord => {
  if (!isObj(value)) return fail(where, 'record must be a JSON object');
  switch (value.type) {
    case 'part':
      checkFormat('part', value.format, where);
      return {
        type: 'part',
        format: PART_FORMAT,
        shop_id: str(value, 'shop_id', where),
        month: str(value, 'month', where),
        run_id: str(value, 'run_id', where),
      };
    case 'platform_data':
      if (!('data' in value)) return fail(where, 'platform_data record needs data');
      return { type: 'platform_data', ref: str(value, 'ref', where), data: value.data };
    case 'job': {
      const shop =
        value.shop_id !== undefined
          ? str(value, 'shop_id', where)
          : (shopId ?? fail(where, 'job record needs a shop_id (or the part header naming one)'));
      const jobId = str(value, 'job_id', where);
      // An empty meta diff is left out.
      const job = value.job ?? {};
      const rows = rowFields(value, shop, where);
      if (!isObj(job)) return fail(where, 'job record needs a job object');
      return {
        type: 'job',
        shop_id: shop,
        job_id: jobId,
        job: jobMeta(job, rows.row, where),
        details: parseJobDetailsPayload(expandDetails(value.details, where), where),
        platform_data_ref: optStr(value, 'platform_data_ref', where),
        sources: sources(value, jobId, where),
        ...rows,
      };
    }
    case 'doc_filters':
      // Its content is read by doc-filter.ts (search, verify, reindex); whole-part readers skip it.
      return { type: 'doc_filters' };
    default:
      return fail(where, `unknown record type ${JSON.stringify(value.type)}`);
  }
};
