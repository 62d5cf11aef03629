import { RESTORE_TIERS, type RestoreTier } from '../config';
import { InvalidInputError } from '../errors';
import { validateJobId, validateMonth, validateShopId } from '../ids';
import { checkSetting, SETTINGS } from '../settings';
import { parseTimestamp } from '../time';
import type { JobDetailsReaderOptions, JobQuery } from './types';

/** Pure checks of what callers pass in; everything here runs before any request. */

export const DEFAULT_SEARCH_MONTHS = 24;
/**
 * How far `createdAt` may lie after `completedAt` (two writers' clocks) before a query is refused:
 * within it, the job is read as if created when it completed.
 */
export const MAX_CLOCK_SKEW_MS = 60 * 60_000;
const MAX_SEARCH_MONTHS = 1200;

export interface ReaderSettings {
  readonly restoreTier: RestoreTier;
  readonly restoreDays: number;
  readonly searchMonths: number;
  readonly readConcurrency: number;
  readonly retentionMonths: number;
  readonly clock: () => Date;
}

const wholeNumber = (
  field: string,
  value: number | undefined,
  dflt: number,
  min: number,
  max: number,
): number => {
  const n = value ?? dflt;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new InvalidInputError(field, `expected a whole number in [${min}, ${max}], got ${String(value)}`);
  }
  return n;
};

export const readerSettings = (opts: JobDetailsReaderOptions = {}): ReaderSettings => {
  const tier = opts.restoreTier ?? 'Standard';
  if (!(RESTORE_TIERS as readonly string[]).includes(tier)) {
    throw new InvalidInputError(
      'restoreTier',
      `expected one of ${RESTORE_TIERS.join(', ')}, got ${String(tier)}`,
    );
  }
  return {
    restoreTier: tier,
    restoreDays: checkSetting('restoreDays', opts.restoreDays ?? SETTINGS.restoreDays.default),
    searchMonths: wholeNumber('searchMonths', opts.searchMonths, DEFAULT_SEARCH_MONTHS, 1, MAX_SEARCH_MONTHS),
    readConcurrency: checkSetting(
      'readConcurrency',
      opts.readConcurrency ?? SETTINGS.readConcurrency.default,
    ),
    retentionMonths: checkSetting(
      'retentionMonths',
      opts.retentionMonths ?? SETTINGS.retentionMonths.default,
    ),
    clock: opts.clock ?? (() => new Date()),
  };
};

/** A query with ids checked and the months decided. `months: null` = search the shop's indexes. */
export interface ResolvedQuery {
  readonly shopId: string;
  readonly jobId: string;
  readonly completedAt: string | null;
  /** Newest first, distinct. */
  readonly months: readonly string[] | null;
  /** For a search: months older than this cannot hold the job (it did not exist yet). */
  readonly searchFrom: string | null;
}

const nextMonth = (month: string): string => {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12
    ? `${String(y + 1).padStart(4, '0')}-01`
    : `${month.slice(0, 4)}-${String(m + 1).padStart(2, '0')}`;
};

/** `from`..`to` inclusive, newest first, at most `limit` (the newest ones). */
export const monthRange = (from: string, to: string, limit: number): string[] => {
  validateMonth(from);
  validateMonth(to);
  const out: string[] = [];
  // yyyy-mm strings order like the months they name.
  for (let m = from; m <= to; m = nextMonth(m)) out.push(m);
  return out.reverse().slice(0, limit);
};

const timestamp = (field: string, value: unknown): string => parseTimestamp(field, value).iso;
const monthOf = (iso: string): string => iso.slice(0, 7); // of a normalized timestamp

/**
 * Validates a query (InvalidIdError / InvalidInputError, no I/O) and decides where to look:
 * explicit months, else createdAt..completedAt, else a search (`months: null`) of the months from
 * createdAt on, when given.
 */
export const resolveQuery = (q: JobQuery, searchMonths: number): ResolvedQuery => {
  if (typeof q !== 'object' || q === null) throw new InvalidInputError('query', 'must be an object');
  const shopId = validateShopId(q.shopId);
  const jobId = validateJobId(q.jobId);
  const completedAt = q.completedAt === undefined ? null : timestamp('completedAt', q.completedAt);
  const createdAt = q.createdAt === undefined ? null : timestamp('createdAt', q.createdAt);
  // Two writers' clocks: a created_at a little after completed_at is skew, not a different job. The
  // months then start at the earlier of the two; beyond the bound the caller passed the wrong times.
  if (createdAt !== null && completedAt !== null && createdAt > completedAt) {
    if (Date.parse(createdAt) - Date.parse(completedAt) > MAX_CLOCK_SKEW_MS) {
      throw new InvalidInputError(
        'createdAt',
        `${createdAt} is after completedAt ${completedAt} by more than the ${MAX_CLOCK_SKEW_MS / 60_000} minutes of clock skew tolerated`,
      );
    }
  }
  const firstMonth = createdAt !== null && completedAt !== null && createdAt > completedAt ? null : createdAt;

  if (q.months !== undefined) {
    if (!Array.isArray(q.months)) throw new InvalidInputError('months', 'must be a list of yyyy-mm');
    const months = [...new Set(q.months.map(validateMonth))].sort().reverse();
    if (months.length > searchMonths) {
      throw new InvalidInputError(
        'months',
        `${months.length} months asked for, at most ${searchMonths} (searchMonths)`,
      );
    }
    return { shopId, jobId, completedAt, months, searchFrom: null };
  }
  if (completedAt !== null) {
    const months = monthRange(monthOf(firstMonth ?? completedAt), monthOf(completedAt), searchMonths);
    return { shopId, jobId, completedAt, months, searchFrom: null };
  }
  return {
    shopId,
    jobId,
    completedAt,
    months: null,
    searchFrom: createdAt === null ? null : monthOf(createdAt),
  };
};
