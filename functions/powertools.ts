import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { ObservabilitySink } from './sink';

/**
 * The Lambda sink: Powertools Logger and Metrics, writing to stdout where CloudWatch takes them
 * (structured log lines, EMF documents). Powertools also reads `POWERTOOLS_LOG_LEVEL` itself.
 */
export const powertoolsSink = (names: { serviceName: string; namespace: string }): ObservabilitySink => {
  const logger = new Logger({ serviceName: names.serviceName });
  const metrics = new Metrics({ namespace: names.namespace, serviceName: names.serviceName });
  return {
    logger: (keys, context) => {
      const child = logger.createChild({ persistentKeys: { ...keys } });
      if (context) child.addContext(context);
      return {
        info: (message, attributes) => child.info(message, attributes ?? {}),
        warn: (message, attributes) => child.warn(message, attributes ?? {}),
        error: (message, attributes) => child.error(message, attributes ?? {}),
      };
    },
    publish: (values) => {
      for (const m of values) metrics.addMetric(m.name, m.unit, m.value);
      metrics.publishStoredMetrics();
    },
  };
};
