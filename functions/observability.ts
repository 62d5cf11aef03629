import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import type { RunReport } from '../shared/archive/steps/types';
import { DEFAULT_SERVICE_NAME, METRICS_NAMESPACE, RUN_METRICS } from './metric-names';

/**
 * Structured logs and metrics of the archiver's Lambda functions, through Powertools. Built once per
 * container (like the clients in deps.ts) and reset by the local runner, which changes where they
 * write. Powertools reads `POWERTOOLS_SERVICE_NAME` / `POWERTOOLS_METRICS_NAMESPACE` (the construct
 * sets both, see `archiverEnvironment`) and `POWERTOOLS_LOG_LEVEL`.
 */

interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
}

let current: Observability | undefined;

export const observability = (): Observability => {
  current ??= {
    logger: new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME }),
    metrics: new Metrics({
      namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
      serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME,
    }),
  };
  return current;
};

/** Forget the logger and metrics (the local runner calls this after changing their environment). */
export const resetObservability = (): void => {
  current = undefined;
};

const field = (o: unknown, ...path: string[]): string | undefined => {
  let v: unknown = o;
  for (const p of path)
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/**
 * The keys every log line of one invocation carries: the run, and the batch (`page/batch`) or the
 * shop × month.
 * Read leniently from the raw event (logging must not depend on the event being valid).
 */
export const invocationKeys = (event: unknown): Record<string, string> => {
  const runId =
    field(event, 'run', 'runId') ?? field(event, 'state', 'run', 'runId') ?? field(event, 'execution');
  const shopId = field(event, 'group', 'shopId');
  const month = field(event, 'group', 'month');
  const b = typeof event === 'object' && event !== null ? (event as { batch?: unknown }).batch : undefined;
  const batch =
    typeof b === 'object' && b !== null && 'page' in b && 'batch' in b
      ? `${String((b as { page: unknown }).page)}/${String((b as { batch: unknown }).batch)}`
      : undefined;
  return {
    ...(runId !== undefined ? { runId } : {}),
    ...(batch !== undefined ? { batch } : {}),
    ...(shopId !== undefined ? { shopId } : {}),
    ...(month !== undefined ? { month } : {}),
  };
};

/** A logger for one invocation: its own keys, so concurrent local invocations never share them. */
export const invocationLogger = (event: unknown, context: Context | undefined): Logger => {
  const logger = observability().logger.createChild({ persistentKeys: invocationKeys(event) });
  if (context) logger.addContext(context);
  return logger;
};

/** The run's figures as metrics (pure mapping; `publishRunMetrics` sends them). */
type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

export const runMetrics = (r: RunReport): Array<{ name: string; unit: Unit; value: number }> => [
  { name: RUN_METRICS.jobsArchived, unit: MetricUnit.Count, value: r.jobsArchived },
  { name: RUN_METRICS.jobsQuarantined, unit: MetricUnit.Count, value: r.jobsQuarantinedCount },
  { name: RUN_METRICS.groupsFailed, unit: MetricUnit.Count, value: r.groupsFailedCount },
  { name: RUN_METRICS.bytesIn, unit: MetricUnit.Bytes, value: r.bytesIn },
  { name: RUN_METRICS.bytesOut, unit: MetricUnit.Bytes, value: r.bytesOut },
  { name: RUN_METRICS.objectsDeleted, unit: MetricUnit.Count, value: r.objectsDeleted },
  { name: RUN_METRICS.partsWritten, unit: MetricUnit.Count, value: r.partsWritten },
  { name: RUN_METRICS.erasureRequestsOverdue, unit: MetricUnit.Count, value: r.erasureOverdueCount ?? 0 },
];

export const publishRunMetrics = (r: RunReport): void => {
  if (r.dryRun) return;
  const { metrics } = observability();
  for (const m of runMetrics(r)) metrics.addMetric(m.name, m.unit, m.value);
  metrics.publishStoredMetrics();
};

/** One line per group of a batch step: which shop-month, and how it went (batch steps carry failures). */
export const logGroups = (
  logger: Logger,
  step: string,
  groups: ReadonlyArray<{ group: { shopId: string; month: string }; failed?: unknown; error?: unknown }>,
): void => {
  for (const g of groups) {
    const failed = g.failed === true ? g.error : typeof g.failed === 'object' ? g.failed : undefined;
    const keys = { shopId: g.group.shopId, month: g.group.month };
    if (failed !== undefined) logger.warn(`${step}: group failed`, { ...keys, failure: failed });
    else logger.info(`${step}: group done`, keys);
  }
};
