import { InvalidInputError } from '../../shared/errors';
import { parseDateOrTimestamp, parseTimestamp, timestampProblem, tryParseTimestamp } from '../../shared/time';

describe('parseTimestamp: one parser for every timestamp a row, event or operator carries', () => {
  it.each([
    ['2026-08-03T10:15:30.123456+00:00', '2026-08-03T10:15:30.123Z'], // Python isoformat, aware
    ['2026-08-03T10:15:30+00:00', '2026-08-03T10:15:30.000Z'], // isoformat when microsecond == 0
    ['2026-08-03 10:15:30.5+00:00', '2026-08-03T10:15:30.500Z'], // str(datetime)
    ['2026-08-03T10:15:30.123Z', '2026-08-03T10:15:30.123Z'], // toISOString
    ['2026-08-03T10:15:30Z', '2026-08-03T10:15:30.000Z'], // seconds only
    ['2026-08-03T10:15Z', '2026-08-03T10:15:00.000Z'], // no seconds (ISO 8601 allows it)
    ['2026-08-03t10:15:30z', '2026-08-03T10:15:30.000Z'],
    ['2026-08-03T12:15:30.1+02:00', '2026-08-03T10:15:30.100Z'],
    ['2026-08-03T05:15:30-0500', '2026-08-03T10:15:30.000Z'],
    ['2026-08-03T10:15:30.123456789Z', '2026-08-03T10:15:30.123Z'],
  ])('%s → %s', (raw, iso) => {
    expect(parseTimestamp('t', raw).iso).toBe(iso);
  });

  it('a text parsed again gives the same answer, which no caller can change (the parse is remembered)', () => {
    const first = parseTimestamp('t', '2026-08-03T10:15:30+02:00');
    expect(() => {
      (first as { iso: string }).iso = 'x';
    }).toThrow(TypeError);
    expect(parseTimestamp('t', '2026-08-03T10:15:30+02:00')).toEqual({
      iso: '2026-08-03T08:15:30.000Z',
      ms: Date.parse('2026-08-03T08:15:30.000Z'),
      month: '2026-08',
    });
    // A refused text stays refused, with its reason, however often it is asked.
    for (let i = 0; i < 3; i++) expect(timestampProblem('2026-02-30T00:00:00Z')).toMatch(/does not exist/);
    // More texts than are remembered: each still parses to its own instant.
    for (let i = 0; i < 5000; i++) {
      const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
      expect(tryParseTimestamp(at)?.iso).toBe(at);
    }
  });

  it('the month is the UTC month of the instant', () => {
    expect(parseTimestamp('t', '2026-03-31T23:59:59Z').month).toBe('2026-03');
    expect(parseTimestamp('t', '2026-03-31T23:30:00-02:00').month).toBe('2026-04');
    expect(parseTimestamp('t', '2026-04-01T01:00:00.000001+02:00').month).toBe('2026-03');
  });

  it('normalized strings order like instants', () => {
    const a = parseTimestamp('t', '2026-08-03T11:00:00+02:00'); // 09:00Z
    const b = parseTimestamp('t', '2026-08-03T10:00:00Z');
    expect(a.iso < b.iso).toBe(true);
    expect(a.ms < b.ms).toBe(true);
  });

  it.each([
    ['2026-08-03T10:15:30', 'has no UTC offset'],
    ['2026-08-03T10:15:30.123456', 'has no UTC offset'],
    ['yesterday', 'is not an ISO-8601 timestamp'],
    ['2026-02-30T00:00:00Z', 'does not exist'],
    ['2026-08-03T24:00:00Z', 'does not exist'],
    ['2026-08-03T10:15:30+25:00', 'impossible UTC offset'],
    ['0000-01-01T00:00:00Z', 'does not exist'],
    ['', 'is not an ISO-8601 timestamp'],
  ])('refuses %j, quoting it', (raw, why) => {
    expect(() => parseTimestamp('row.completed_at', raw)).toThrow(InvalidInputError);
    expect(() => parseTimestamp('row.completed_at', raw)).toThrow(why);
    expect(() => parseTimestamp('row.completed_at', raw)).toThrow(JSON.stringify(raw));
    expect(tryParseTimestamp(raw)).toBeNull();
  });

  it('refuses non-strings with the value quoted', () => {
    expect(timestampProblem(1712345678)).toContain('1712345678');
    expect(timestampProblem(undefined)).toContain('undefined');
  });

  it('years 1–99 are not read as 1900s', () => {
    expect(parseTimestamp('t', '0050-01-01T00:00:00Z').iso).toBe('0050-01-01T00:00:00.000Z');
  });

  it('operators may give a calendar date (UTC midnight) or a timestamp', () => {
    expect(parseDateOrTimestamp('--now', '2026-03-01').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(parseDateOrTimestamp('--now', '2026-03-01T12:30:00+01:00').toISOString()).toBe(
      '2026-03-01T11:30:00.000Z',
    );
    expect(() => parseDateOrTimestamp('--now', '2026-02-31')).toThrow(InvalidInputError);
  });
});
