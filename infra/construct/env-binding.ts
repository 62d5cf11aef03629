import { METRICS_NAMESPACE } from '../../functions/metric-names';
import { ENV } from '../../shared/config';

/** What the deployed steps need to know; names come from shared/config.ts `ENV`, the only reader. */
export interface ArchiverSettings {
  readonly bucketName: string;
  readonly tableName: string;
  readonly olderThanDays: number;
  readonly graceHours: number;
  readonly jobTtlDays: number;
  readonly planPageGroups: number;
  readonly batchGroups: number;
  readonly batchJobs: number;
  readonly packBelowKb: number;
  readonly wholeMonths: boolean;
  readonly erasureDeadlineDays: number;
  /** Unset: each function derives it from its own memory (shared/config.ts). */
  readonly maxSourceMb?: number;
  /** Powertools service name: the metrics' `service` dimension, unique per construct. */
  readonly serviceName: string;
}

/** The one place that turns settings into Lambda environment variables. */
export const archiverEnvironment = (s: ArchiverSettings): Record<string, string> => ({
  [ENV.bucket]: s.bucketName,
  [ENV.table]: s.tableName,
  [ENV.olderThanDays]: String(s.olderThanDays),
  [ENV.graceHours]: String(s.graceHours),
  [ENV.jobTtlDays]: String(s.jobTtlDays),
  [ENV.planPageGroups]: String(s.planPageGroups),
  [ENV.batchGroups]: String(s.batchGroups),
  [ENV.batchJobs]: String(s.batchJobs),
  [ENV.packBelowKb]: String(s.packBelowKb),
  [ENV.wholeMonths]: String(s.wholeMonths),
  [ENV.erasureDeadlineDays]: String(s.erasureDeadlineDays),
  ...(s.maxSourceMb !== undefined ? { [ENV.maxSourceMb]: String(s.maxSourceMb) } : {}),
  POWERTOOLS_SERVICE_NAME: s.serviceName,
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  // Stack traces point into the TypeScript sources, not the bundle.
  NODE_OPTIONS: '--enable-source-maps',
});
