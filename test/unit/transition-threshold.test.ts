import { DEFAULT_PRICES, type StorageClass } from '../../infra/cli/prices';
import {
  FOREVER_MONTHS_AS_PARTS,
  MAX_TRANSITION_MINIMUM_BYTES,
  monthsInClass,
  transitionBreakEvenBytes,
} from '../../infra/cli/transition-threshold';

/**
 * The size from which moving a part to its class pays for itself (the construct's default
 * transitionMinimumSize), against hand computations from the list prices written out here: Standard
 * $0.023, Glacier IR $0.004 (128 KB billed at least, transition $0.02 per 1,000), Flexible Retrieval
 * $0.0036 and Deep Archive $0.00099 a GB-month (32 KB in the class + 8 KB in Standard a part;
 * transitions $0.03 / $0.05 per 1,000; 90 / 180 days at least).
 */
const GB = 1024 ** 3;
const KB = 1024;
const STD = 0.023 / GB;

/** $ moving a part of `s` bytes saves over `m` months in the class (billed at least `minM`). */
const net = (s: number, cls: StorageClass, m: number): number => {
  const p = DEFAULT_PRICES;
  const billed = Math.max(m, p.classMinDays[cls] / 30);
  const ovh = p.classOverheadBytes[cls];
  return (
    s * STD * m -
    (Math.max(s, p.classMinObjectBytes[cls]) + ovh.inClass) * (p.classGbMonth[cls] / GB) * billed -
    ovh.inStandard * STD * m -
    p.transitionRequest[cls]
  );
};

describe('transitionBreakEvenBytes', () => {
  it('Deep Archive kept 60 months: (32 KB in the class + 8 KB in Standard + the transition) over the saving a byte', () => {
    const m = 59 - 1 / 30; // a part for 59 months, its first day in Standard
    expect(monthsInClass({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 })).toBeCloseTo(m, 12);
    const hand =
      (32 * KB * (0.00099 / GB) * m + 8 * KB * STD * m + 0.05 / 1000) / ((0.023 - 0.00099) * (m / GB));
    expect(hand / KB).toBeCloseTo(50.2, 1);
    const t = transitionBreakEvenBytes({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 });
    expect(t).toBe(Math.floor(hand));
    expect(t).toBe(51_400);
    // Parts of 30–40 KB lose a little by moving; from the threshold on they gain.
    expect(net(35 * KB, 'DEEP_ARCHIVE', m)).toBeLessThan(0);
    expect(net(t, 'DEEP_ARCHIVE', m)).toBeLessThanOrEqual(0);
    expect(net(t + 1, 'DEEP_ARCHIVE', m)).toBeGreaterThan(0);
  });

  it('Glacier IR kept 24 months: under 128 KB the class bills 128 KB whatever the size', () => {
    const m = 23 - 1 / 30;
    const hand = (128 * KB * (0.004 / GB) * m + 0.02 / 1000) / (STD * m);
    expect(hand / KB).toBeCloseTo(62.0, 1);
    const t = transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 24 });
    expect(t).toBe(Math.floor(hand));
    expect(t).toBe(63_449);
    expect(net(t + 1, 'GLACIER_IR', m)).toBeGreaterThan(0);
    expect(net(t - 1, 'GLACIER_IR', m)).toBeLessThan(0);
  });

  it('a shorter life needs bigger parts; kept forever is priced over FOREVER_MONTHS_AS_PARTS', () => {
    const gir = (r: number) => transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: r });
    expect([gir(12), gir(24), gir(60)]).toEqual([107_933, 63_449, 38_629]);
    expect(FOREVER_MONTHS_AS_PARTS).toBe(120);
    const m = 120 - 1 / 30;
    expect(gir(0)).toBe(Math.floor((128 * KB * (0.004 / GB) * m + 0.02 / 1000) / (STD * m)));
    expect(transitionBreakEvenBytes({ storageClass: 'GLACIER', retentionMonths: 24 })).toBe(88_090);
    for (const cls of ['GLACIER_IR', 'GLACIER', 'DEEP_ARCHIVE'] as const)
      expect(transitionBreakEvenBytes({ storageClass: cls, retentionMonths: 0 }) / KB).toBeLessThan(31);
  });

  it('bills the class’s minimum duration when the part expires sooner, and days in Standard first', () => {
    // Deep Archive kept 4 months: 3 months (less a day) in the class, billed 6 (180 days).
    const m = 3 - 1 / 30;
    const hand =
      (32 * KB * (0.00099 / GB) * 6 + 8 * KB * STD * m + 0.05 / 1000) / (STD * m - (0.00099 / GB) * 6);
    expect(transitionBreakEvenBytes({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 4 })).toBe(
      Math.floor(hand),
    );
    // 30 days in Standard first: a month less in the class.
    expect(
      transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 25, transitionAfterDays: 31 }),
    ).toBe(transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 24 }));
  });

  it('no part moves when the part never reaches the class or never pays back', () => {
    expect(
      transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 13, transitionAfterDays: 360 }),
    ).toBe(MAX_TRANSITION_MINIMUM_BYTES);
    // A class priced like Standard never saves anything.
    const same = { ...DEFAULT_PRICES, classGbMonth: { ...DEFAULT_PRICES.classGbMonth, DEEP_ARCHIVE: 0.023 } };
    expect(transitionBreakEvenBytes({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 }, same)).toBe(
      MAX_TRANSITION_MINIMUM_BYTES,
    );
    expect(MAX_TRANSITION_MINIMUM_BYTES).toBe(5 * 1024 ** 4);
  });
});
