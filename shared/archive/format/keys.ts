import { randomBytes } from 'node:crypto';
import { InvalidIdError } from '../../errors';
import { validateMonth, validateShopId } from '../../ids';

/**
 * Where archive objects live. Parts and indexes are under different top-level prefixes on purpose:
 * the lifecycle rule moves `job-details-cold/` to Glacier while indexes must stay instantly readable,
 * and S3 lifecycle filters match prefixes, not suffixes.
 */
export const HOT_PREFIX = 'job-details/';
export const COLD_PREFIX = 'job-details-cold/';
export const INDEX_PREFIX = 'job-details-index/';
export const RUNS_PREFIX = 'job-details-runs/';
/** The archiver's lasting state (the plan watermark): never expired, unlike the run scratch. */
export const STATE_PREFIX = 'job-details-state/';

/** Where planning resumes: docs/steady-state.md. */
export const WATERMARK_KEY = `${STATE_PREFIX}watermark.json`;
/** Own or shared, per shop-month of the months being archived for the first time (plan/pack-decisions.ts). */
export const PACK_DECISIONS_KEY = `${STATE_PREFIX}pack-decisions.json`;

/** The erasure records (docs/erasure.md): the request ledger, tombstones, rewrite journals. */
export const ERASURE_PREFIX = 'job-details-erasure/';

const PART_NAME = /^part-\d{8}T\d{6}Z-[a-z0-9]{8}\.jsonl\.gz$/;

/** `part-20260315T030000Z-k3jq2m7z.jsonl.gz`: sorts by creation time, unique without coordination. */
export const newPartName = (at: Date, random: () => string = () => randomSuffix()): string => {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
  return `part-${stamp}-${random()}.jsonl.gz`;
};

const randomSuffix = (): string =>
  Array.from(randomBytes(8), (b) => 'abcdefghijklmnopqrstuvwxyz234567'[b % 32]).join('');

export const validatePartName = (name: unknown): string => {
  if (typeof name !== 'string' || !PART_NAME.test(name)) {
    throw new InvalidIdError('part name', name, 'expected part-YYYYMMDDTHHMMSSZ-xxxxxxxx.jsonl.gz');
  }
  return name;
};

export const groupPrefix = (shopId: string, month: string): string =>
  `${COLD_PREFIX}${validateShopId(shopId)}/${validateMonth(month)}/`;

export const partKey = (shopId: string, month: string, partName: string): string =>
  `${groupPrefix(shopId, month)}${validatePartName(partName)}`;

export const monthIndexDir = (shopId: string, month: string): string =>
  `${INDEX_PREFIX}${validateShopId(shopId)}/${validateMonth(month)}/`;

/** The month index: the commit record of every part of the group. */
export const monthIndexKey = (shopId: string, month: string): string =>
  `${monthIndexDir(shopId, month)}index.json`;

/**
 * Packed shop-months (docs/archive-format.md, "Shared parts"): `_shared` is never a shop id (ids.ts:
 * ids start alphanumeric), so these keys never meet a shop's.
 */
/** The place of shared parts and indexes where a shop id would be (not a valid shop id: ids.ts). */
export const SHARED = '_shared';
export const SHARED_INDEX_PREFIX = `${INDEX_PREFIX}${SHARED}/`;

/** A shared part of a month: the segments of several small shop-months, one after the other. */
export const sharedPartKey = (month: string, partName: string): string =>
  `${COLD_PREFIX}${SHARED}/${validateMonth(month)}/${validatePartName(partName)}`;

export const sharedIndexDir = (month: string): string => `${SHARED_INDEX_PREFIX}${validateMonth(month)}/`;

/** The commit record of every shared part of the month, and each packed shop's view of them. */
export const sharedIndexKey = (month: string): string => `${sharedIndexDir(month)}shared.json`;

/** A shared part's intent, written before its first byte, removed at commit. */
export const sharedPendingKey = (month: string, partName: string): string =>
  `${sharedIndexDir(month)}pending/${validatePartName(partName)}.json`;

export const sharedPendingPrefix = (month: string): string => `${sharedIndexDir(month)}pending/`;

/** `job-details-index/_shared/{yyyy-mm}/shared.json` → its month, or null for other keys. */
export const parseSharedIndexKey = (key: string): string | null =>
  /^job-details-index\/_shared\/(\d{4}-\d{2})\/shared\.json$/.exec(key)?.[1] ?? null;

/** `job-details-cold/_shared/{yyyy-mm}/{part}` → month and part name, or null. */
export const parseSharedPartKey = (key: string): { month: string; partName: string } | null => {
  const m = /^job-details-cold\/_shared\/(\d{4}-\d{2})\/([^/]+)$/.exec(key);
  return m?.[1] && m[2] && PART_NAME.test(m[2]) ? { month: m[1], partName: m[2] } : null;
};

/** Every month index of a shop sits under this prefix (list it without Delimiter). */
export const shopIndexPrefix = (shopId: string): string => `${INDEX_PREFIX}${validateShopId(shopId)}/`;

/** A part's intent (staging.ts), written before its first byte, removed at commit. */
export const pendingKey = (shopId: string, month: string, partName: string): string =>
  `${monthIndexDir(shopId, month)}pending/${validatePartName(partName)}.json`;

export const pendingPrefix = (shopId: string, month: string): string =>
  `${monthIndexDir(shopId, month)}pending/`;

/** `job-details-index/{shop}/{yyyy-mm}/index.json` → its shop and month, or null for other keys. */
export const parseMonthIndexKey = (key: string): { shopId: string; month: string } | null => {
  const m = /^job-details-index\/([^/]+)\/(\d{4}-\d{2})\/index\.json$/.exec(key);
  return m?.[1] && m[2] ? { shopId: m[1], month: m[2] } : null;
};

/** `job-details-cold/{shop}/{yyyy-mm}/{part}` → its parts, or null. */
export const parsePartKey = (key: string): { shopId: string; month: string; partName: string } | null => {
  const m = /^job-details-cold\/([^/]+)\/(\d{4}-\d{2})\/([^/]+)$/.exec(key);
  return m?.[1] && m[2] && m[3] && PART_NAME.test(m[3])
    ? { shopId: m[1], month: m[2], partName: m[3] }
    : null;
};

/** When a part was written, from its name (`part-20260315T030000Z-…`); null for another key. */
export const partWrittenAt = (key: string): Date | null => {
  const m = /(?:^|\/)part-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-[a-z0-9]{8}\.jsonl\.gz$/.exec(key);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
};

/** Run ids come from execution names; keep them key-safe. */
export const validateRunId = (runId: unknown): string => {
  if (typeof runId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$/.test(runId)) {
    throw new InvalidIdError('run id', runId, 'expected 1-80 of [A-Za-z0-9_-]');
  }
  return runId;
};

export const runPrefix = (runId: string): string => `${RUNS_PREFIX}${validateRunId(runId)}/`;

/**
 * A plan page's planned jobs: JSONL, one job per line, each shop-month's lines one gzip member (so a
 * shop-month is a byte range and a batch one ranged GET).
 */
export const plannedJobsKey = (runId: string, page: number): string =>
  `${runPrefix(runId)}plan/${page}/jobs.jsonl.gz`;

/** A plan page's batches: JSONL, one batch of shop-months per line (the Distributed Map's ItemReader). */
export const planBatchesKey = (runId: string, page: number): string =>
  `${runPrefix(runId)}plan/${page}/batches.jsonl`;

/** Where the page's Map run writes its results (ResultWriter Prefix; AWS adds `/{map run id}/…`). */
export const mapResultsPrefix = (runId: string, page: number): string => `${runPrefix(runId)}results/${page}`;

/** A page's group results: one JSON document, gzip. */
export const pageResultsKey = (runId: string, page: number): string =>
  `${runPrefix(runId)}pages/${page}.json.gz`;

export const reportKey = (runId: string): string => `${runPrefix(runId)}report.json`;

/** Requests of the page's failed ArchiveBatch attempts (a Task retried after a thrown error). */
export const failedAttemptsPrefix = (runId: string, page: number): string =>
  `${runPrefix(runId)}attempts/${page}/`;

/**
 * Findings: the complete lists a step found (quarantined jobs, delete errors) when they are too long
 * for the state, which carries counts and a short sample. One document per writer, so a retried step
 * overwrites only its own.
 */
export const findingsPrefix = (runId: string): string => `${runPrefix(runId)}findings/`;

export type GroupFindingsKind = 'quarantined' | 'delete-errors';

export const groupFindingsKey = (
  runId: string,
  page: number,
  shopId: string,
  month: string,
  kind: GroupFindingsKind,
): string => `${findingsPrefix(runId)}${page}/${validateShopId(shopId)}/${validateMonth(month)}/${kind}.json`;

/** Plan-time quarantines of one page (two segments below the page: never a group's key). */
export const planFindingsKey = (runId: string, page: number): string =>
  `${findingsPrefix(runId)}${page}/plan-quarantined.json`;
