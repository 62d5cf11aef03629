import {
  DESIGN_HOT_OBJECTS_PER_MONTH,
  type DecomposableRun,
  decomposeSteadyYear,
  decompositionLines,
} from '../bench/archive/steady-year-decomposition';

const idle = (s3Requests: number): DecomposableRun => ({
  jobsArchived: 0,
  hotArchived: 0,
  s3Requests,
  hotGets: 0,
  groupsOk: 0,
});

// Two months of a whole-months schedule: each month a run that commits (reads the hot objects) and
// the next day's run that deletes them after the grace hour; idle runs in between.
const year: DecomposableRun[] = [
  idle(6),
  idle(2),
  { jobsArchived: 400, hotArchived: 0, s3Requests: 948, hotGets: 900, groupsOk: 43 },
  { jobsArchived: 0, hotArchived: 900, s3Requests: 38, hotGets: 0, groupsOk: 43 },
  idle(2),
  idle(5),
  { jobsArchived: 450, hotArchived: 0, s3Requests: 1050, hotGets: 1000, groupsOk: 43 },
  { jobsArchived: 0, hotArchived: 1000, s3Requests: 40, hotGets: 0, groupsOk: 43 },
  idle(2),
];

describe('decomposeSteadyYear', () => {
  const d = decomposeSteadyYear(year);

  it('splits the requests into hot GETs, idle runs and active overhead that add up to the total', () => {
    expect(d.s3Requests).toBe(2093);
    expect(d.hotArchived).toBe(1900);
    expect(d.hotGets).toEqual({ total: 1900, perArchivedHotObject: 1 });
    expect(d.idle).toEqual({ runs: 5, total: 17, meanPerRun: 17 / 5, perArchivedHotObject: 17 / 1900 });
    expect(d.activeOverhead.total).toBe(48 + 38 + 50 + 40);
    expect(d.hotGets.total + d.idle.total + d.activeOverhead.total).toBe(d.s3Requests);
    expect(d.perArchivedHotObject).toBeCloseTo(
      d.hotGets.perArchivedHotObject + d.idle.perArchivedHotObject + d.activeOverhead.perArchivedHotObject,
      12,
    );
  });

  it('charges active overhead per active run and per shop-month committed (not counted again by the deleting run)', () => {
    expect(d.activeOverhead.runs).toBe(4);
    expect(d.activeOverhead.perRun).toBe(176 / 4);
    expect(d.activeOverhead.shopMonths).toBe(86);
    expect(d.activeOverhead.perShopMonth).toBe(176 / 86);
    expect(d.monthsArchived).toBe(2);
    expect(d.hotArchivedPerMonth).toBe(950);
  });

  it("extrapolates the same fixed totals to the design's volume over the same months", () => {
    expect(d.extrapolated.hotObjectsPerMonth).toBe(DESIGN_HOT_OBJECTS_PER_MONTH);
    expect(d.extrapolated.hotArchived).toBe(2 * 343_000);
    expect(d.extrapolated.perArchivedHotObject).toBeCloseTo(1 + (17 + 176) / 686_000, 12);
    expect(decomposeSteadyYear(year, 950).extrapolated.perArchivedHotObject).toBeCloseTo(
      d.perArchivedHotObject,
      12,
    );
  });

  it('prints what is measured apart from what is extrapolated', () => {
    const lines = decompositionLines(d);
    expect(lines[0]).toMatch(
      /measured: 1\.102 = hot GETs 1\.000 .* \+ idle runs 0\.009 .* \+ active runs beyond the hot GETs 0\.093/,
    );
    expect(lines.at(-1)).toMatch(
      /^ {2}EXTRAPOLATED \(not measured\): at 343,000 hot objects a month .*: 1\.0003 /,
    );
  });

  it('has no runs to divide by without failing', () => {
    const empty = decomposeSteadyYear([]);
    expect(empty.perArchivedHotObject).toBe(0);
    expect(empty.extrapolated.perArchivedHotObject).toBe(0);
  });
});
