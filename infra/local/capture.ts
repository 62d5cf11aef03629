import { DEFAULT_SERVICE_NAME, METRICS_NAMESPACE } from '../../functions/metric-names';
import type { ObservabilitySink, StepLogger } from '../../functions/sink';

/** What the handlers of one local run logged and published, kept instead of printed. */
export interface CapturingSink extends ObservabilitySink {
  /** Log lines as Powertools Logger structures them (level, message, timestamp, service, keys, attributes). */
  readonly logs: Record<string, unknown>[];
  /** Metrics as the CloudWatch embedded metric format documents Powertools Metrics publishes. */
  readonly metrics: Record<string, unknown>[];
}

/**
 * The local runner's sink. In Lambda, Powertools writes logs and EMF documents to stdout, where
 * CloudWatch takes them; in process each run keeps its own, so overlapping runs never mix lines and
 * nothing global (console, environment) changes. The shapes follow Powertools' output: a log line's
 * `level`, `message`, `timestamp`, `service`, the Lambda context's `function_*` fields, then the
 * invocation's keys and the line's attributes; a metrics document's `_aws` directive with one
 * `service` dimension, then the values.
 */
export const capturingSink = (
  names: { serviceName: string; namespace: string } = {
    serviceName: DEFAULT_SERVICE_NAME,
    namespace: METRICS_NAMESPACE,
  },
): CapturingSink => {
  const logs: Record<string, unknown>[] = [];
  const metrics: Record<string, unknown>[] = [];
  return {
    logs,
    metrics,
    logger: (keys, context): StepLogger => {
      const fn = context
        ? {
            function_name: context.functionName,
            function_memory_size: Number(context.memoryLimitInMB),
            function_arn: context.invokedFunctionArn,
            function_request_id: context.awsRequestId,
          }
        : {};
      const line =
        (level: string) =>
        (message: string, attributes: Record<string, unknown> = {}): void => {
          logs.push({
            level,
            message,
            timestamp: new Date().toISOString(),
            service: names.serviceName,
            ...fn,
            ...keys,
            ...attributes,
          });
        };
      return { info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
    },
    publish: (values) => {
      metrics.push({
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [
            {
              Namespace: names.namespace,
              Dimensions: [['service']],
              Metrics: values.map((m) => ({ Name: m.name, Unit: m.unit })),
            },
          ],
        },
        service: names.serviceName,
        ...Object.fromEntries(values.map((m) => [m.name, m.value])),
      });
    },
  };
};
