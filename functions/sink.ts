import type { Context } from 'aws-lambda';
import type { RunReport } from '../shared/archive/steps/types';
import { RUN_METRICS } from './metric-names';

/**
 * Where the handlers' structured logs and metrics go, passed to each handler factory: Powertools
 * Logger and Metrics in Lambda (powertools.ts, wired in deps.ts), a capture in the local runner
 * (infra/local/capture.ts), which keeps them per run instead of printing them.
 */
export interface ObservabilitySink {
  /** The logger of one invocation: `keys` on every line, and Lambda's context when there is one. */
  logger(keys: Readonly<Record<string, string>>, context?: Context): StepLogger;
  /** One metrics document holding these values (never called with none). */
  publish(metrics: readonly StepMetric[]): void;
}

/** What a handler logs through (Powertools' Logger has this shape). */
export interface StepLogger {
  info(message: string, attributes?: Record<string, unknown>): void;
  warn(message: string, attributes?: Record<string, unknown>): void;
  error(message: string, attributes?: Record<string, unknown>): void;
}

/** A CloudWatch metric value (units as Powertools' MetricUnit names them). */
export interface StepMetric {
  readonly name: string;
  readonly unit: 'Count' | 'Bytes';
  readonly value: number;
}

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

/** The run's figures as metrics (pure mapping; `publishRunMetrics` sends them). */
export const runMetrics = (r: RunReport): StepMetric[] => [
  { name: RUN_METRICS.jobsArchived, unit: 'Count', value: r.jobsArchived },
  { name: RUN_METRICS.jobsQuarantined, unit: 'Count', value: r.jobsQuarantinedCount },
  { name: RUN_METRICS.groupsFailed, unit: 'Count', value: r.groupsFailedCount },
  { name: RUN_METRICS.bytesIn, unit: 'Bytes', value: r.bytesIn },
  { name: RUN_METRICS.bytesOut, unit: 'Bytes', value: r.bytesOut },
  { name: RUN_METRICS.objectsDeleted, unit: 'Count', value: r.objectsDeleted },
  { name: RUN_METRICS.partsWritten, unit: 'Count', value: r.partsWritten },
  { name: RUN_METRICS.erasureRequestsOverdue, unit: 'Count', value: r.erasureOverdueCount ?? 0 },
];

/** A dry run changes nothing, so it publishes nothing. */
export const publishRunMetrics = (sink: ObservabilitySink, r: RunReport): void => {
  if (!r.dryRun) sink.publish(runMetrics(r));
};

/** One line per group of a batch step: which shop-month, and how it went (batch steps carry failures). */
export const logGroups = (
  logger: StepLogger,
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
