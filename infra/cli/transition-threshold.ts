import { retentionDays } from '../../shared/settings';
import { DEFAULT_PRICES, type Prices, type StorageClass } from './prices';

/**
 * The size from which moving an archive part to its storage class pays for itself: the one rule for
 * the construct's default `transitionMinimumSize` (the lifecycle rule's `ObjectSizeGreaterThan`),
 * `jobarchive lifecycle` and `jobarchive cost` (which prices the parts the construct would move).
 * Pure: list prices (prices.ts) and the part's months in the class, nothing else.
 */

/** S3's largest object (5 TiB): `ObjectSizeGreaterThan` at most this; at it no part moves. */
export const MAX_TRANSITION_MINIMUM_BYTES = 5 * 1024 ** 4;
/** The construct's `transitionAfterDays` default. */
export const DEFAULT_TRANSITION_AFTER_DAYS = 1;
/**
 * A part kept forever (retention 0) is priced over this many months as a part: ten years. Longer
 * barely moves the break-even (the transition fee is spread thinner; the monthly saving stays).
 */
export const FOREVER_MONTHS_AS_PARTS = 120;

const GB = 1024 ** 3;
const DAYS_PER_MONTH = 30;

export interface TransitionHorizon {
  readonly storageClass: StorageClass;
  /** The deployment's retentionMonths: a part expires retentionDays(it) days after it is written; 0: forever. */
  readonly retentionMonths: number;
  /** Days a part stays in Standard before its transition. */
  readonly transitionAfterDays?: number;
}

/**
 * Months a part spends in the class: the parts' expiration rule (details-bucket.ts retentionRules)
 * deletes a part `retentionDays(retentionMonths)` days after it was written (S3 counts from the
 * object's creation; forever: FOREVER_MONTHS_AS_PARTS), less its `transitionAfterDays` in Standard.
 */
export const monthsInClass = (h: TransitionHorizon): number => {
  const days =
    h.retentionMonths === 0 ? FOREVER_MONTHS_AS_PARTS * DAYS_PER_MONTH : retentionDays(h.retentionMonths);
  return Math.max(0, (days - (h.transitionAfterDays ?? DEFAULT_TRANSITION_AFTER_DAYS)) / DAYS_PER_MONTH);
};

/**
 * The smallest part size (bytes) whose move to the class saves money over its months there, as the
 * lifecycle rule's `ObjectSizeGreaterThan`: parts larger than it move. For a part of `s` bytes kept
 * `M` months in the class, moving saves
 *
 *   s·std·M − (max(s, min) + overheadInClass)·class·max(M, minDays/30) − overheadInStandard·std·M − transition
 *
 * (std, class: $ per byte-month; min: the class's minimum billable object size, Glacier IR 128 KB;
 * the per-object overhead, Flexible Retrieval / Deep Archive 32 KB billed in the class and 8 KB in
 * Standard; a part deleted before the class's minimum duration is billed the rest of it). The root
 * of that piecewise-linear function, rounded down to whole bytes. A class that never pays back (no
 * months in the class, or the class billed longer than Standard's saving lasts) gives
 * MAX_TRANSITION_MINIMUM_BYTES: no part moves.
 */
export const transitionBreakEvenBytes = (h: TransitionHorizon, p: Prices = DEFAULT_PRICES): number => {
  const cls = h.storageClass;
  const months = monthsInClass(h);
  if (!(months > 0)) return MAX_TRANSITION_MINIMUM_BYTES;
  const billedMonths = Math.max(months, p.classMinDays[cls] / DAYS_PER_MONTH);
  const std = (p.standardGbMonth / GB) * months; // $ a byte saved in Standard over the months
  const inClass = (p.classGbMonth[cls] / GB) * billedMonths; // $ a byte billed in the class
  const min = p.classMinObjectBytes[cls];
  const ovh = p.classOverheadBytes[cls];
  const fixed = ovh.inClass * inClass + ovh.inStandard * std + p.transitionRequest[cls];
  // Under the minimum billable size the class bills `min` whatever the part's size.
  const belowMin = (fixed + min * inClass) / std;
  if (belowMin <= min) return clamp(belowMin);
  if (!(std > inClass)) return MAX_TRANSITION_MINIMUM_BYTES;
  return clamp(fixed / (std - inClass));
};

const clamp = (bytes: number): number =>
  Math.min(MAX_TRANSITION_MINIMUM_BYTES, Math.max(0, Math.floor(bytes)));
