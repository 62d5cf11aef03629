import type { OverdueRequest } from '../../erasure/summary';
import { InvalidInputError } from '../../errors';
import { validateMonth, validateShopId } from '../../ids';
import { TERMINAL_STATUSES } from '../../jobs/schema';
import { BATCH_GROUPS_MAX } from '../../settings';
import type { PlanCall } from './plan/plan';
import { parseRun, parseRunInput, runIdFromExecution } from './run-context';
import { checkJobsKey } from './run-files/planned-jobs';
import { parseTotals } from './run-totals';
import { bool, int, isObj, isoTime, obj, str, validId } from './shape';
import type {
  ArchiveCounts,
  BatchEvent,
  DeleteCounts,
  DeletedEarlier,
  GroupRef,
  GroupResult,
  MapRunOutput,
  PageState,
  PlannedBatch,
  PlannedGroup,
  RunContext,
  ScanState,
  TallyEvent,
} from './types';

/**
 * Validation of every handler event, before any I/O. Errors are InvalidInputError naming the field
 * (e.g. `archive.summary.archived`), so a wiring mistake in the state machine reads as one.
 */

const parseRange = (v: unknown, field: string): [number, number] => {
  if (!Array.isArray(v) || v.length !== 2) throw new InvalidInputError(field, 'expected [start, end]');
  const start = int(v[0], `${field}[0]`);
  const end = int(v[1], `${field}[1]`);
  if (end < start) throw new InvalidInputError(field, 'end before start');
  return [start, end];
};

export const parseGroup = (v: unknown, run: RunContext, field = 'group'): PlannedGroup => {
  const o = obj(v, field);
  const group: PlannedGroup = {
    shopId: validId(validateShopId, o.shopId, `${field}.shopId`),
    month: validId(validateMonth, o.month, `${field}.month`),
    jobsKey: str(o.jobsKey, `${field}.jobsKey`),
    jobsRange: parseRange(o.jobsRange, `${field}.jobsRange`),
    jobCount: int(o.jobCount, `${field}.jobCount`),
    ...(o.pack === true || o.pack === 'if-packed' ? { pack: o.pack } : {}),
  };
  if (o.pack !== undefined && o.pack !== true && o.pack !== 'if-packed')
    throw new InvalidInputError(`${field}.pack`, "expected true, 'if-packed' or absent");
  checkJobsKey(run, group, `${field}.jobsKey`);
  return group;
};

const parseArchiveCounts = (v: unknown, field: string): ArchiveCounts => {
  const o = obj(v, field);
  const n = (k: string) => int(o[k], `${field}.${k}`);
  return {
    archived: n('archived'),
    skipped: n('skipped'),
    quarantinedCount: n('quarantinedCount'),
    bytesIn: n('bytesIn'),
    bytesOut: n('bytesOut'),
    partName: o.partName === null ? null : str(o.partName, `${field}.partName`),
  };
};

const parseDeleteCounts = (v: unknown, field: string): DeleteCounts => {
  const o = obj(v, field);
  const n = (k: string) => int(o[k], `${field}.${k}`);
  return {
    objectsDeleted: n('objectsDeleted'),
    objectsKept: n('objectsKept'),
    deleteErrorCount: n('deleteErrorCount'),
    jobsCompleted: n('jobsCompleted'),
    ...(o.jobsWaiting !== undefined ? { jobsWaiting: n('jobsWaiting') } : {}),
    ...(o.deletedEarlier !== undefined
      ? { deletedEarlier: parseDeletedEarlier(o.deletedEarlier, `${field}.deletedEarlier`) }
      : {}),
  };
};

const parseDeletedEarlier = (v: unknown, field: string): DeletedEarlier => {
  const o = obj(v, field);
  return { jobs: int(o.jobs, `${field}.jobs`), parts: int(o.parts, `${field}.parts`) };
};

/** `Plan`: the first call carries the execution input, later ones the page state. */
export const parsePlanEvent = (v: unknown): PlanCall => {
  const o = obj(v, 'event');
  const state = o.state;
  if (isObj(state) && 'run' in state) {
    const s = parsePageState(state, 'state');
    if (s.cursor === null)
      throw new InvalidInputError(
        'state.cursor',
        'nothing left to plan (the Choice should have gone to Report)',
      );
    // Only the run Plan built for THIS execution: an execution input shaped like a page state (copied
    // from another run, or with a future `now`) must not skip buildRun's checks.
    if (
      s.run.runId !== runIdFromExecution(str(o.execution, 'execution')) ||
      s.run.startedAt !== isoTime(o.startTime, 'startTime')
    ) {
      throw new InvalidInputError(
        'state.run',
        "not this execution's run: only Plan's own page state is accepted",
      );
    }
    return { kind: 'next', state: s };
  }
  return {
    kind: 'first',
    input: parseRunInput(state, 'state'),
    execution: str(o.execution, 'execution'),
    startTime: str(o.startTime, 'startTime'),
  };
};

/** The page state; `field` prefixes the names in errors (Plan's `state`; none for Tally / Report). */
export const parsePageState = (v: unknown, field?: string): PageState => {
  const at = (name: string) => (field ? `${field}.${name}` : name);
  const o = obj(v, field ?? 'event');
  return {
    run: parseRun(o.run, at('run')),
    page: int(o.page, at('page'), 0, 1_000_000),
    cursor: o.cursor === null ? null : str(o.cursor, at('cursor')),
    totals: parseTotals(o.totals, at('totals')),
    ...(o.scan !== undefined ? { scan: parseScan(o.scan, at('scan')) } : {}),
  };
};

const statusKeys = (v: unknown, field: string): Record<string, string> => {
  const o = obj(v, field);
  const keys: Record<string, string> = {};
  for (const [status, key] of Object.entries(o)) {
    if (!(TERMINAL_STATUSES as readonly string[]).includes(status))
      throw new InvalidInputError(`${field}.${status}`, 'not a terminal status');
    keys[status] = str(key, `${field}.${status}`);
  }
  return keys;
};

export const parseScan = (v: unknown, field: string): ScanState => {
  const o = obj(v, field);
  let from: ScanState['from'] = null;
  if (o.from !== null) {
    const f = obj(o.from, `${field}.from`);
    from = {
      cutoff: isoTime(f.cutoff, `${field}.from.cutoff`),
      keys: statusKeys(f.keys, `${field}.from.keys`),
      ...(f.sweptAt !== undefined ? { sweptAt: isoTime(f.sweptAt, `${field}.from.sweptAt`) } : {}),
    };
  }
  return {
    etag: o.etag === null ? null : str(o.etag, `${field}.etag`),
    from,
    next: statusKeys(o.next, `${field}.next`),
    retried: int(o.retried, `${field}.retried`),
    carried: int(o.carried, `${field}.carried`),
    sweptAt: o.sweptAt === null ? null : isoTime(o.sweptAt, `${field}.sweptAt`),
    // Carried to the first page with jobs (plan.ts): dropped here, a run whose page 0 plans nothing never sweeps.
    ...(o.sweepWithWalk === undefined
      ? {}
      : { sweepWithWalk: isTrue(o.sweepWithWalk, `${field}.sweepWithWalk`) }),
    orphans: int(o.orphans, `${field}.orphans`),
    ...(o.lateRows === undefined ? {} : { lateRows: int(o.lateRows, `${field}.lateRows`) }),
    ...(o.packFrom === undefined
      ? {}
      : {
          packFrom:
            o.packFrom === null || o.packFrom === '' ? o.packFrom : isoTime(o.packFrom, `${field}.packFrom`),
        }),
    ...(o.quietPages === undefined ? {} : { quietPages: parsePages(o.quietPages, `${field}.quietPages`) }),
    ...(o.erasure === undefined ? {} : { erasure: parseScanErasure(o.erasure, `${field}.erasure`) }),
  };
};

const isTrue = (v: unknown, field: string): true => {
  if (v !== true) throw new InvalidInputError(field, 'expected true or absent');
  return true;
};

const parsePages = (v: unknown, field: string): number[] => {
  if (!Array.isArray(v)) throw new InvalidInputError(field, 'expected a list of pages');
  return v.map((p, i) => int(p, `${field}[${i}]`, 0, 1_000_000));
};

const parseScanErasure = (v: unknown, field: string): NonNullable<ScanState['erasure']> => {
  const o = obj(v, field);
  if (!Array.isArray(o.overdue)) throw new InvalidInputError(`${field}.overdue`, 'expected a list');
  const overdue = o.overdue.map((x, i): OverdueRequest => {
    const at = `${field}.overdue[${i}]`;
    const r = obj(x, at);
    if (r.kind !== 'forget-shop' && r.kind !== 'redact-doc')
      throw new InvalidInputError(`${at}.kind`, 'not an erasure kind');
    if (r.state !== 'received' && r.state !== 'pending')
      throw new InvalidInputError(`${at}.state`, 'not an open state');
    return {
      id: str(r.id, `${at}.id`),
      kind: r.kind,
      shopId: str(r.shopId, `${at}.shopId`),
      receivedAt: str(r.receivedAt, `${at}.receivedAt`),
      state: r.state,
      ...(r.pendingReason !== undefined
        ? { pendingReason: str(r.pendingReason, `${at}.pendingReason`) }
        : {}),
      ageDays: int(r.ageDays, `${at}.ageDays`),
    };
  });
  return {
    overdueCount: int(o.overdueCount, `${field}.overdueCount`),
    overdue,
    pendingRedactions: int(o.pendingRedactions, `${field}.pendingRedactions`),
  };
};

/** The group of a result: only shop and month travel (the Pass states copy those two fields). */
const parseGroupRef = (v: unknown, field: string): GroupRef => {
  const o = obj(v, field);
  return {
    shopId: validId(validateShopId, o.shopId, `${field}.shopId`),
    month: validId(validateMonth, o.month, `${field}.month`),
  };
};

export const parseGroupResult = (v: unknown, field: string): GroupResult => {
  const o = obj(v, field);
  const group = parseGroupRef(o.group, `${field}.group`);
  if (o.failed !== undefined) {
    if (!bool(o.failed, `${field}.failed`))
      throw new InvalidInputError(`${field}.failed`, 'expected true when present');
    // Catch output: Error / Cause are strings, but be lenient about what a Pass state copied in.
    const asText = (x: unknown) => (typeof x === 'string' ? x : x === undefined ? '' : JSON.stringify(x));
    return { group, failed: true, error: asText(o.error), cause: asText(o.cause) };
  }
  return {
    group,
    archive: parseArchiveCounts(o.archive, `${field}.archive`),
    delete: parseDeleteCounts(o.delete, `${field}.delete`),
  };
};

/** A batch of this run: its groups, each with this run's planned-jobs key. */
export const parseBatch = (v: unknown, run: RunContext, field = 'batch'): PlannedBatch => {
  const o = obj(v, field);
  if (!Array.isArray(o.groups) || o.groups.length === 0 || o.groups.length > BATCH_GROUPS_MAX)
    throw new InvalidInputError(`${field}.groups`, `expected 1 to ${BATCH_GROUPS_MAX} groups`);
  return {
    page: int(o.page, `${field}.page`),
    batch: int(o.batch, `${field}.batch`),
    groups: o.groups.map((g, i) => parseGroup(g, run, `${field}.groups[${i}]`)),
    ...(o.collectShared === undefined
      ? {}
      : {
          collectShared: (() => {
            if (!Array.isArray(o.collectShared))
              throw new InvalidInputError(`${field}.collectShared`, 'expected an array of months');
            return o.collectShared.map((m, i) => validId(validateMonth, m, `${field}.collectShared[${i}]`));
          })(),
        }),
  };
};

/** Child execution input / ArchiveBatch event: `{run, batch}`. */
export const parseBatchEvent = (v: unknown): BatchEvent => {
  const o = obj(v, 'event');
  const run = parseRun(o.run);
  return { run, batch: parseBatch(o.batch, run) };
};

export const parseTallyEvent = (v: unknown): TallyEvent => {
  const o = obj(v, 'event');
  const state = parsePageState(o);
  let mapRun: MapRunOutput | undefined;
  if (o.mapRun !== undefined) {
    const m = obj(o.mapRun, 'mapRun');
    const d = obj(m.ResultWriterDetails, 'mapRun.ResultWriterDetails');
    mapRun = {
      MapRunArn: str(m.MapRunArn, 'mapRun.MapRunArn'),
      ResultWriterDetails: {
        Bucket: str(d.Bucket, 'mapRun.ResultWriterDetails.Bucket'),
        Key: str(d.Key, 'mapRun.ResultWriterDetails.Key'),
      },
    };
  }
  return {
    ...state,
    planQuarantined: int(o.planQuarantined, 'planQuarantined'),
    groups: int(o.groups, 'groups'),
    resultsPrefix: str(o.resultsPrefix, 'resultsPrefix'),
    ...(mapRun ? { mapRun } : {}),
  };
};

export const parseReportEvent = (v: unknown): PageState => {
  const s = parsePageState(v);
  if (s.cursor !== null) throw new InvalidInputError('cursor', 'the run still has pages to plan');
  return s;
};
