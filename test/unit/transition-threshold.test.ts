import { DEFAULT_PRICES, type StorageClass } from '../../infra/cli/prices';
import {
  FOREVER_MONTHS_AS_PARTS,
  MAX_TRANSITION_MINIMUM_BYTES,
  monthsInClass,
  transitionBreakEvenBytes,
} from '../../infra/cli/transition-threshold';
import { retentionDays } from '../../shared/settings';

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
    const m = (retentionDays(60) - 1) / 30; // a part lives 1,827 days (its expiration), its first in Standard
    expect(monthsInClass({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 })).toBeCloseTo(m, 12);
    const hand =
      (32 * KB * (0.00099 / GB) * m + 8 * KB * STD * m + 0.05 / 1000) / ((0.023 - 0.00099) * (m / GB));
    expect(hand / KB).toBeCloseTo(48.9, 1);
    const t = transitionBreakEvenBytes({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 });
    expect(t).toBe(Math.floor(hand));
    expect(t).toBe(50_109);
    // Parts of 30–40 KB lose a little by moving; from the threshold on they gain.
    expect(net(35 * KB, 'DEEP_ARCHIVE', m)).toBeLessThan(0);
    expect(net(t, 'DEEP_ARCHIVE', m)).toBeLessThanOrEqual(0);
    expect(net(t + 1, 'DEEP_ARCHIVE', m)).toBeGreaterThan(0);
  });

  it('Glacier IR kept 24 months: under 128 KB the class bills 128 KB whatever the size', () => {
    const m = (retentionDays(24) - 1) / 30;
    const hand = (128 * KB * (0.004 / GB) * m + 0.02 / 1000) / (STD * m);
    expect(hand / KB).toBeCloseTo(59.7, 1);
    const t = transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 24 });
    expect(t).toBe(Math.floor(hand));
    expect(t).toBe(61_165);
    expect(net(t + 1, 'GLACIER_IR', m)).toBeGreaterThan(0);
    expect(net(t - 1, 'GLACIER_IR', m)).toBeLessThan(0);
  });

  it('a shorter life needs bigger parts; kept forever is priced over FOREVER_MONTHS_AS_PARTS', () => {
    const gir = (r: number) => transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: r });
    expect([gir(12), gir(24), gir(60)]).toEqual([99_536, 61_165, 38_135]);
    expect(FOREVER_MONTHS_AS_PARTS).toBe(120);
    const m = 120 - 1 / 30;
    expect(gir(0)).toBe(Math.floor((128 * KB * (0.004 / GB) * m + 0.02 / 1000) / (STD * m)));
    expect(transitionBreakEvenBytes({ storageClass: 'GLACIER', retentionMonths: 24 })).toBe(84_029);
    for (const cls of ['GLACIER_IR', 'GLACIER', 'DEEP_ARCHIVE'] as const)
      expect(transitionBreakEvenBytes({ storageClass: cls, retentionMonths: 0 }) / KB).toBeLessThan(31);
  });

  it('bills the class’s minimum duration when the part expires sooner, and days in Standard first', () => {
    // Deep Archive kept 4 months: a part lives 122 days, 121 in the class, billed 180.
    const m = (retentionDays(4) - 1) / 30;
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
    // Kept 12 months (366 days), all of them in Standard first.
    expect(
      transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 12, transitionAfterDays: 366 }),
    ).toBe(MAX_TRANSITION_MINIMUM_BYTES);
    // A class priced like Standard never saves anything.
    const same = { ...DEFAULT_PRICES, classGbMonth: { ...DEFAULT_PRICES.classGbMonth, DEEP_ARCHIVE: 0.023 } };
    expect(transitionBreakEvenBytes({ storageClass: 'DEEP_ARCHIVE', retentionMonths: 60 }, same)).toBe(
      MAX_TRANSITION_MINIMUM_BYTES,
    );
    expect(MAX_TRANSITION_MINIMUM_BYTES).toBe(5 * 1024 ** 4);
  });
});

describe('transitionBreakEvenBytes: the part’s life is what the parts’ expiration rule gives it', () => {
  // details-bucket.ts retentionRules: `expire-archive-parts` expires a part retentionDays(retentionMonths)
  // days after the part itself was written (S3 counts from the object's creation), and the part is
  // written after its cohort's hot month. So a part lives retentionDays(r) days: transitionAfterDays in
  // Standard, the rest in the class — not `retentionMonths − 1` months (the cohort model's convention,
  // which counts the hot month the part never lived through).
  it('prices a part over retentionDays(retentionMonths) − transitionAfterDays days in the class', () => {
    for (const r of [2, 12, 24, 60]) {
      const h = { storageClass: 'GLACIER_IR' as const, retentionMonths: r, transitionAfterDays: 1 };
      expect(monthsInClass(h) * 30).toBeCloseTo(retentionDays(r) - 1, 6);
    }
  });

  it('Glacier IR kept 24 months: the threshold is where a move pays over the 730 days the part spends there', () => {
    const m = (retentionDays(24) - 1) / 30; // 24.33 months in the class
    const hand = Math.floor((128 * KB * (0.004 / GB) * m + 0.02 / 1000) / (STD * m));
    expect(hand).toBe(61_165);
    expect(net(hand + 1, 'GLACIER_IR', m)).toBeGreaterThan(0);
    // A part lives retentionDays(24) days, not 23 months: parts of 61,166 … 63,449 bytes pay for their move too.
    expect(transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 24 })).toBe(hand);
  });

  it('a part that reaches the class for a while gets a threshold, not "never move" (5 TiB)', () => {
    // Kept 13 months, 360 days in Standard: the part lives 396 days, 36 of them in Glacier IR (billed
    // 90). A 10 MB part saves ~$0.00013 by moving; the construct must not set 5 TiB here.
    const m = (retentionDays(13) - 360) / 30;
    expect(net(10 * 1024 * KB, 'GLACIER_IR', m)).toBeGreaterThan(0);
    expect(
      transitionBreakEvenBytes({ storageClass: 'GLACIER_IR', retentionMonths: 13, transitionAfterDays: 360 }),
    ).toBeLessThan(10 * 1024 * KB);
  });
});
