import { InvalidInputError } from '../../shared/errors';
import { type Prices, requestPrice, type StorageClass } from './prices';

/**
 * The cost model behind `jobarchive cost` (pure). Three ways to keep a month's job details for the
 * retention horizon, every figure per month and cumulative:
 *
 * - hot: the flush objects stay in S3 Standard until they expire;
 * - lifecycle: a rule moves the small objects themselves to the class after the first month
 *   (transition fee per object, the class's per-object minimum and overhead, minimum duration);
 * - archive: this archiver — its measured requests, Lambda time, state transitions and read units
 *   once per cohort, then the archive's measured bytes at rest (parts in the class when S3 would
 *   move them, i.e. ≥ 128 KB; indexes in Standard), plus lookups.
 *
 * Every month J jobs complete (a cohort); each cohort is kept `retentionMonths` and then deleted.
 * The writes of the hot path are the same in all three and left out.
 */
export interface Measured {
  /** Where the figures came from (shown in the output). */
  readonly source: string;
  readonly objectsPerJob: number;
  readonly bytesPerJob: number;
  /** S3 requests of the archiver per hot object, by API call (`GetObject`, `ListObjectsV2`, …). */
  readonly s3RequestsPerObject: Readonly<Record<string, number>>;
  readonly taskInvocationsPerJob: number;
  readonly taskSecondsPerJob: number;
  readonly stateTransitionsPerJob: number;
  readonly dynamodbReadUnitsPerJob: number;
  /** Archive bytes at rest / hot bytes replaced. */
  readonly bytesAtRestRatio: number;
  /** Of the bytes at rest, the share in indexes (Standard for good). */
  readonly indexShare: number;
  readonly partsPerJob: number;
  readonly averagePartBytes: number;
  readonly lookupRequests: number;
  readonly lookupBytes: number;
}

export interface Workload {
  readonly jobsPerMonth: number;
  readonly objectsPerJob: number;
  readonly bytesPerJob: number;
  readonly retentionMonths: number;
  readonly storageClass: StorageClass;
  readonly lookupsPerMonth: number;
  readonly lambdaMemoryMb: number;
}

export interface MonthCost {
  readonly month: number;
  readonly hot: number;
  readonly lifecycle: number;
  readonly archive: number;
}

export interface CostResult {
  readonly workload: Workload;
  readonly months: MonthCost[];
  readonly cumulative: MonthCost[];
  /** First month whose cumulative archive cost is at most keeping the objects hot; null: never. */
  readonly breakEvenVsHot: number | null;
  readonly breakEvenVsLifecycle: number | null;
  /** One-time cost of archiving one cohort, by component. */
  readonly archiveOneTime: Readonly<Record<string, number>>;
}

const GB = 1024 ** 3;
const DAYS_PER_MONTH = 30;
/** S3 lifecycle does not move objects under 128 KB unless a size filter says so (the construct's default). */
const TRANSITION_MIN_BYTES = 128 * 1024;

export const validateWorkload = (w: Workload): Workload => {
  const positive = (field: string, v: number, whole = false) => {
    if (!Number.isFinite(v) || v < 0 || (whole && !Number.isInteger(v)))
      throw new InvalidInputError(field, `expected a ${whole ? 'whole ' : ''}number ≥ 0, got ${v}`);
  };
  positive('--jobs-per-month', w.jobsPerMonth);
  positive('--objects-per-job', w.objectsPerJob);
  positive('--bytes-per-job', w.bytesPerJob);
  positive('--retention-months', w.retentionMonths, true);
  positive('--lookups-per-month', w.lookupsPerMonth);
  if (w.retentionMonths < 2)
    throw new InvalidInputError(
      '--retention-months',
      'expected at least 2 (archival starts after the first)',
    );
  return w;
};

/** One cohort's one-time archival cost, by component. */
export const archiveOneTime = (w: Workload, m: Measured, p: Prices): Record<string, number> => {
  const objects = w.jobsPerMonth * w.objectsPerJob;
  const s3 = Object.entries(m.s3RequestsPerObject).reduce(
    (s, [call, n]) => s + n * objects * requestPrice(call, p),
    0,
  );
  const jobs = w.jobsPerMonth;
  const partsMove = m.averagePartBytes >= TRANSITION_MIN_BYTES;
  return {
    s3Requests: s3,
    lambda:
      jobs *
      (m.taskInvocationsPerJob * p.lambdaRequest +
        m.taskSecondsPerJob * (w.lambdaMemoryMb / 1024) * p.lambdaGbSecond),
    stepFunctions: jobs * m.stateTransitionsPerJob * p.stateTransition,
    dynamodb: jobs * m.dynamodbReadUnitsPerJob * p.dynamodbReadUnit,
    transitions: partsMove ? jobs * m.partsPerJob * p.transitionRequest[w.storageClass] : 0,
  };
};

/** $ per month of one cohort, `age` months after it completed (1 = its first month, hot everywhere). */
const cohortMonth = (w: Workload, m: Measured, p: Prices, age: number) => {
  const cls = w.storageClass;
  const objects = w.jobsPerMonth * w.objectsPerJob;
  const hotGb = (w.jobsPerMonth * w.bytesPerJob) / GB;
  const hot = hotGb * p.standardGbMonth;
  if (age === 1) return { hot, lifecycle: hot, archive: hot };
  const objectBytes = w.objectsPerJob > 0 ? w.bytesPerJob / w.objectsPerJob : 0;
  const ovh = p.classOverheadBytes[cls];
  const billed = Math.max(objectBytes, p.classMinObjectBytes[cls]) + ovh.inClass;
  const lifecycle =
    ((objects * billed) / GB) * p.classGbMonth[cls] + ((objects * ovh.inStandard) / GB) * p.standardGbMonth;
  const atRest = (w.jobsPerMonth * w.bytesPerJob * m.bytesAtRestRatio) / GB;
  const partsMove = m.averagePartBytes >= TRANSITION_MIN_BYTES;
  const partGb = atRest * (1 - m.indexShare);
  const parts = w.jobsPerMonth * m.partsPerJob;
  const partBilledGb = partsMove
    ? (Math.max(partGb, (parts * p.classMinObjectBytes[cls]) / GB) + (parts * ovh.inClass) / GB) *
        p.classGbMonth[cls] +
      ((parts * ovh.inStandard) / GB) * p.standardGbMonth
    : partGb * p.standardGbMonth;
  const archive = partBilledGb + atRest * m.indexShare * p.standardGbMonth;
  return { hot, lifecycle, archive };
};

/** Lookups of one month over the jobs kept then (each lookup reads one job). */
const lookupMonth = (w: Workload, m: Measured, p: Prices) => {
  const cls = w.storageClass;
  const n = w.lookupsPerMonth;
  const hot = n * (p.putRequest + w.objectsPerJob * p.getRequest); // one LIST, a GET per object
  const objectGb = (w.objectsPerJob > 0 ? w.bytesPerJob : 0) / GB;
  const restore = p.classRestoreRequest[cls];
  const lifecycle =
    n *
    (p.putRequest +
      w.objectsPerJob * (p.classGetRequest[cls] + restore) +
      objectGb * p.classRetrievalGb[cls]);
  // The archive reads a range of one part; a class that needs a restore restores the whole part.
  const readGb = (restore > 0 ? m.averagePartBytes : m.lookupBytes) / GB;
  const archive =
    n * (m.lookupRequests * p.classGetRequest[cls] + restore + readGb * p.classRetrievalGb[cls]);
  return { hot, lifecycle, archive };
};

export const costModel = (w: Workload, m: Measured, p: Prices): CostResult => {
  validateWorkload(w);
  const once = archiveOneTime(w, m, p);
  const onceTotal = Object.values(once).reduce((s, x) => s + x, 0);
  const cls = w.storageClass;
  const objects = w.jobsPerMonth * w.objectsPerJob;
  const lifecycleOnce = objects * p.transitionRequest[cls];
  // Deleting before the class's minimum duration bills the rest, once, at deletion.
  const keptInClassDays = (w.retentionMonths - 1) * DAYS_PER_MONTH;
  const shortfallMonths = Math.max(0, p.classMinDays[cls] - keptInClassDays) / DAYS_PER_MONTH;
  const months: MonthCost[] = [];
  const horizon = w.retentionMonths * 2; // long enough to reach steady state and show it
  for (let t = 1; t <= horizon; t++) {
    let hot = 0;
    let lifecycle = 0;
    let archive = 0;
    for (let age = 1; age <= Math.min(t, w.retentionMonths); age++) {
      const c = cohortMonth(w, m, p, age);
      hot += c.hot;
      lifecycle += c.lifecycle;
      archive += c.archive;
      if (age === 2) {
        lifecycle += lifecycleOnce;
        archive += onceTotal;
      }
      if (age === w.retentionMonths && shortfallMonths > 0) {
        lifecycle += cohortMonth(w, m, p, 2).lifecycle * shortfallMonths;
      }
    }
    const l = lookupMonth(w, m, p);
    months.push({
      month: t,
      hot: hot + l.hot,
      lifecycle: lifecycle + l.lifecycle,
      archive: archive + l.archive,
    });
  }
  const cumulative: MonthCost[] = [];
  let acc = { hot: 0, lifecycle: 0, archive: 0 };
  for (const c of months) {
    acc = { hot: acc.hot + c.hot, lifecycle: acc.lifecycle + c.lifecycle, archive: acc.archive + c.archive };
    cumulative.push({ month: c.month, ...acc });
  }
  // Archival only differs from month 2 on; "pays" = cumulative at most the alternative.
  const first = (other: 'hot' | 'lifecycle') =>
    cumulative.find((c) => c.month >= 2 && c.archive <= c[other] + 1e-12)?.month ?? null;
  return {
    workload: w,
    months,
    cumulative,
    breakEvenVsHot: first('hot'),
    breakEvenVsLifecycle: first('lifecycle'),
    archiveOneTime: once,
  };
};
