import { type JsonObject, parseJobDetailsPayload } from '../details';
import { CorruptObjectError } from '../errors';
import { type JobRecord, PART_FORMAT, PART_FORMAT_V1, type PartRecord, type SourceObject } from './records';

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

const source = (v: unknown, where: string): SourceObject => {
  if (!isObj(v)) return fail(where, 'source entry must be an object');
  const size = optNum(v, 'size', where);
  if (size === null) return fail(where, 'source entry needs a size');
  return { key: str(v, 'key', where), size, etag: str(v, 'etag', where), sha256: str(v, 'sha256', where) };
};

/** The optional whole-row fields (records from before them have none). */
const rowFields = (value: Obj, where: string): Pick<JobRecord, 'row' | 'row_reduced' | 'inline'> => {
  const out: { row?: JsonObject | null; row_reduced?: Record<string, number>; inline?: string[] } = {};
  if (value.row !== undefined) {
    if (value.row !== null && !isObj(value.row)) return fail(where, 'field row must be an object or null');
    out.row = value.row as JsonObject | null;
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

export const parsePartRecord = (value: unknown, where: string): PartRecord => {
  if (!isObj(value)) return fail(where, 'record must be a JSON object');
  switch (value.type) {
    case 'part':
      if (value.format !== PART_FORMAT && value.format !== PART_FORMAT_V1)
        return fail(where, `unknown part format ${String(value.format)}`);
      return {
        type: 'part',
        format: value.format,
        shop_id: str(value, 'shop_id', where),
        month: str(value, 'month', where),
        part: str(value, 'part', where),
        run_id: str(value, 'run_id', where),
        created_at: str(value, 'created_at', where),
      };
    case 'platform_data':
      if (!('data' in value)) return fail(where, 'platform_data record needs data');
      return { type: 'platform_data', ref: str(value, 'ref', where), data: value.data };
    case 'job': {
      const job = value.job;
      if (!isObj(job)) return fail(where, 'job record needs a job object');
      if (!Array.isArray(value.sources)) return fail(where, 'job record needs sources');
      return {
        type: 'job',
        shop_id: str(value, 'shop_id', where),
        job_id: str(value, 'job_id', where),
        job: {
          status: str(job, 'status', where),
          created_at: optStr(job, 'created_at', where),
          started_at: optStr(job, 'started_at', where),
          completed_at: str(job, 'completed_at', where),
          job_type: optStr(job, 'job_type', where),
          platform: optStr(job, 'platform', where),
          total_items: optNum(job, 'total_items', where),
          processed_items: optNum(job, 'processed_items', where),
          failed_items: optNum(job, 'failed_items', where),
          skipped_items: optNum(job, 'skipped_items', where),
          conflict_items: optNum(job, 'conflict_items', where),
          retry_count: optNum(job, 'retry_count', where),
          error_message: optStr(job, 'error_message', where),
        },
        details: parseJobDetailsPayload(value.details, where),
        platform_data_ref: optStr(value, 'platform_data_ref', where),
        sources: value.sources.map((s) => source(s, where)),
        ...rowFields(value, where),
      };
    }
    default:
      return fail(where, `unknown record type ${JSON.stringify(value.type)}`);
  }
};
