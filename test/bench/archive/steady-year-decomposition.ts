/**
 * Where steady-year's S3 requests go: the parts that grow with volume (one GET per archived hot
 * object, the floor; LIST and DeleteObjects pages of the hot prefix, one per 1,000 keys) and the parts
 * that do not, or not in step (idle runs' watermark and report, and what active runs spend beyond
 * those: plan files, indexes, intents, parts, reports). At the bench's volume the fixed parts are
 * divided by a few hundred objects a month; the extrapolation keeps the per-object parts as measured
 * and divides the same fixed totals by the design's volume instead. Pure: per-run figures in.
 */

/** The design's volume (seeds/000): 100,000 jobs a month × 3.43 hot objects per job. */
export const DESIGN_HOT_OBJECTS_PER_MONTH = 343_000;

/** What the decomposition reads of each run (SteadyRun's fields). */
export interface DecomposableRun {
  readonly jobsArchived: number;
  readonly hotArchived: number;
  readonly s3Requests: number;
  /** GetObject on `job-details/` keys (the request trace). */
  readonly hotGets: number;
  /** ListObjectsV2 and DeleteObjects on `job-details/` (pages of up to 1,000 keys). */
  readonly hotPages: number;
  /** Shop-months the run's groups completed (the report's groupsOk). */
  readonly groupsOk: number;
}

export interface SteadyDecomposition {
  readonly hotArchived: number;
  readonly s3Requests: number;
  /** S3 requests per archived hot object: floor + idle + active overhead. */
  readonly perArchivedHotObject: number;
  /** Hot GETs of every run: what scales with volume, 1 per archived hot object at the floor. */
  readonly hotGets: { readonly total: number; readonly perArchivedHotObject: number };
  /** LIST and DeleteObjects pages of the hot prefix in every run (the orphan sweeps' included): grow with it. */
  readonly hotPages: { readonly total: number; readonly perArchivedHotObject: number };
  /** Runs that archived and deleted nothing: their requests beyond hot GETs and pages. */
  readonly idle: {
    readonly runs: number;
    readonly total: number;
    readonly meanPerRun: number;
    readonly perArchivedHotObject: number;
  };
  /** Runs that archived or deleted: their requests beyond hot GETs and pages. */
  readonly activeOverhead: {
    readonly runs: number;
    readonly total: number;
    readonly perRun: number;
    /** Shop-months committed: groupsOk of the runs that archived jobs (not of the runs that only delete). */
    readonly shopMonths: number;
    readonly perShopMonth: number;
    readonly perArchivedHotObject: number;
  };
  /** Months archived (runs that archived jobs: one a month with whole months) and their mean volume. */
  readonly monthsArchived: number;
  readonly hotArchivedPerMonth: number;
  /**
   * EXTRAPOLATED, not measured: the same idle and active-overhead totals over the same months, with
   * `hotObjectsPerMonth` archived a month and the measured hot GETs and pages per archived hot object.
   */
  readonly extrapolated: {
    readonly hotObjectsPerMonth: number;
    readonly hotArchived: number;
    readonly perArchivedHotObject: number;
  };
}

const sum = (runs: readonly DecomposableRun[], f: (r: DecomposableRun) => number) =>
  runs.reduce((a, r) => a + f(r), 0);

export const decomposeSteadyYear = (
  runs: readonly DecomposableRun[],
  hotObjectsPerMonth = DESIGN_HOT_OBJECTS_PER_MONTH,
): SteadyDecomposition => {
  const isIdle = (r: DecomposableRun) => r.jobsArchived === 0 && r.hotArchived === 0;
  const idle = runs.filter(isIdle);
  const active = runs.filter((r) => !isIdle(r));
  const committing = runs.filter((r) => r.jobsArchived > 0);
  const hotArchived = sum(runs, (r) => r.hotArchived);
  const per = (x: number) => x / Math.max(1, hotArchived);
  const hotGets = sum(runs, (r) => r.hotGets);
  const hotPages = sum(runs, (r) => r.hotPages);
  const beyond = (r: DecomposableRun) => r.s3Requests - r.hotGets - r.hotPages;
  const idleTotal = sum(idle, beyond);
  const activeTotal = sum(active, beyond);
  const shopMonths = sum(committing, (r) => r.groupsOk);
  const s3Requests = sum(runs, (r) => r.s3Requests);
  const months = committing.length;
  const designHot = hotObjectsPerMonth * months;
  return {
    hotArchived,
    s3Requests,
    perArchivedHotObject: per(s3Requests),
    hotGets: { total: hotGets, perArchivedHotObject: per(hotGets) },
    hotPages: { total: hotPages, perArchivedHotObject: per(hotPages) },
    idle: {
      runs: idle.length,
      total: idleTotal,
      meanPerRun: idleTotal / Math.max(1, idle.length),
      perArchivedHotObject: per(idleTotal),
    },
    activeOverhead: {
      runs: active.length,
      total: activeTotal,
      perRun: activeTotal / Math.max(1, active.length),
      shopMonths,
      perShopMonth: activeTotal / Math.max(1, shopMonths),
      perArchivedHotObject: per(activeTotal),
    },
    monthsArchived: months,
    hotArchivedPerMonth: hotArchived / Math.max(1, months),
    extrapolated: {
      hotObjectsPerMonth,
      hotArchived: designHot,
      perArchivedHotObject: per(hotGets + hotPages) + (idleTotal + activeTotal) / Math.max(1, designHot),
    },
  };
};

const f = (x: number, d = 3) => x.toFixed(d);
const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** The decomposition as printed under steady-year's summary. */
export const decompositionLines = (d: SteadyDecomposition): string[] => [
  `  S3 requests per archived hot object, measured: ${f(d.perArchivedHotObject)} = hot GETs ${f(d.hotGets.perArchivedHotObject)} + hot-prefix LIST/DeleteObjects pages ${f(d.hotPages.perArchivedHotObject)} (these two grow with volume) + idle runs ${f(d.idle.perArchivedHotObject)} (fixed: per day) + active runs ${f(d.activeOverhead.perArchivedHotObject)} (per run, shop-month, part, batch)`,
  `    hot GETs ${d.hotGets.total}; hot-prefix pages ${d.hotPages.total} (the orphan sweeps' LISTs included)`,
  `    idle runs: ${d.idle.runs}, ${d.idle.total} requests beyond hot pages, ${f(d.idle.meanPerRun, 2)} a run`,
  `    active runs beyond hot GETs and pages: ${d.activeOverhead.runs} runs, ${d.activeOverhead.total} requests, ${f(d.activeOverhead.perRun, 1)} a run, ${f(d.activeOverhead.perShopMonth, 2)} per shop-month committed (${d.activeOverhead.shopMonths})`,
  `    volume: ${int(d.hotArchived)} hot objects archived in ${d.monthsArchived} month${d.monthsArchived === 1 ? '' : 's'}, ${int(d.hotArchivedPerMonth)} a month`,
  `  EXTRAPOLATED (not measured): at ${int(d.extrapolated.hotObjectsPerMonth)} hot objects a month (the design's), hot GETs and pages per object as measured, the idle and active totals above unchanged: ${f(d.extrapolated.perArchivedHotObject, 4)} per archived hot object — a lower bound: more parts and Map batches at that volume add to the active runs' part`,
];
