import {
  DESIGN_HOT_OBJECTS_PER_MONTH,
  type DecomposableRun,
  decomposeSteadyYear,
  decompositionLines,
} from '../bench/archive/steady-year-decomposition';

const idle = (s3Requests: number, hotPages = 0): DecomposableRun => ({
  jobsArchived: 0,
  hotArchived: 0,
  s3Requests,
  hotGets: 0,
  hotPages,
  groupsOk: 0,
});

// Two months of a whole-months schedule: each month a run that commits (reads the hot objects) and
// the next day's run that deletes them after the grace hour; idle runs in between, two of them
// listing the hot prefix (an orphan sweep).
const year: DecomposableRun[] = [
  idle(6, 2),
  idle(2),
  { jobsArchived: 400, hotArchived: 0, s3Requests: 948, hotGets: 900, hotPages: 1, groupsOk: 43 },
  { jobsArchived: 0, hotArchived: 900, s3Requests: 38, hotGets: 0, hotPages: 2, groupsOk: 43 },
  idle(2),
  idle(5, 1),
  { jobsArchived: 450, hotArchived: 0, s3Requests: 1050, hotGets: 1000, hotPages: 1, groupsOk: 43 },
  { jobsArchived: 0, hotArchived: 1000, s3Requests: 40, hotGets: 0, hotPages: 2, groupsOk: 43 },
  idle(2),
];

describe('decomposeSteadyYear', () => {
  const d = decomposeSteadyYear(year);

  it('splits the requests into hot GETs, hot pages, idle runs and active overhead that add up to the total', () => {
    expect(d.s3Requests).toBe(2093);
    expect(d.hotArchived).toBe(1900);
    expect(d.hotGets).toEqual({ total: 1900, perArchivedHotObject: 1 });
    expect(d.hotPages).toEqual({ total: 9, perArchivedHotObject: 9 / 1900 });
    expect(d.idle).toEqual({ runs: 5, total: 14, meanPerRun: 14 / 5, perArchivedHotObject: 14 / 1900 });
    expect(d.activeOverhead.total).toBe(47 + 36 + 49 + 38);
    expect(d.hotGets.total + d.hotPages.total + d.idle.total + d.activeOverhead.total).toBe(d.s3Requests);
    expect(d.perArchivedHotObject).toBeCloseTo(
      d.hotGets.perArchivedHotObject +
        d.hotPages.perArchivedHotObject +
        d.idle.perArchivedHotObject +
        d.activeOverhead.perArchivedHotObject,
      12,
    );
  });

  it('charges active overhead per active run and per shop-month committed (not counted again by the deleting run)', () => {
    expect(d.activeOverhead.runs).toBe(4);
    expect(d.activeOverhead.perRun).toBe(170 / 4);
    expect(d.activeOverhead.shopMonths).toBe(86);
    expect(d.activeOverhead.perShopMonth).toBe(170 / 86);
    expect(d.monthsArchived).toBe(2);
    expect(d.hotArchivedPerMonth).toBe(950);
  });

  it("extrapolates: hot GETs and pages per object as measured, the fixed totals over the design's volume", () => {
    expect(d.extrapolated.hotObjectsPerMonth).toBe(DESIGN_HOT_OBJECTS_PER_MONTH);
    expect(d.extrapolated.hotArchived).toBe(2 * 343_000);
    expect(d.extrapolated.perArchivedHotObject).toBeCloseTo(1 + 9 / 1900 + (14 + 170) / 686_000, 12);
    // At the measured volume the extrapolation is the measurement.
    expect(decomposeSteadyYear(year, 950).extrapolated.perArchivedHotObject).toBeCloseTo(
      d.perArchivedHotObject,
      12,
    );
  });

  it('prints what is measured apart from what is extrapolated', () => {
    const lines = decompositionLines(d);
    expect(lines[0]).toMatch(
      /measured: 1\.102 = hot GETs 1\.000 \+ hot-prefix LIST\/DeleteObjects pages 0\.005 .* \+ idle runs 0\.007 .* \+ active runs 0\.089 /,
    );
    expect(lines.at(-1)).toMatch(
      /^ {2}EXTRAPOLATED \(not measured\): at 343,000 hot objects a month .*: 1\.0050 /,
    );
  });

  it('has no runs to divide by without failing', () => {
    const empty = decomposeSteadyYear([]);
    expect(empty.perArchivedHotObject).toBe(0);
    expect(empty.extrapolated.perArchivedHotObject).toBe(0);
  });
});
