import { makeStepDeps, type StepDeps } from '../shared/archive/steps/context';
import { createRequestMeter } from '../shared/archive/steps/meter';
import { dynamoClientFrom, s3ClientFrom } from '../shared/clients';
import { type Config, ENV, parseConfig, requireSetting } from '../shared/config';
import { countRequests } from '../shared/metrics';
import { DEFAULT_SERVICE_NAME, METRICS_NAMESPACE } from './metric-names';
import { powertoolsSink } from './powertools';
import type { ObservabilitySink } from './sink';

/**
 * A step's dependencies from settings and the names of its bucket and table: clients built from the
 * settings (shared/clients.ts), both counting their requests into one meter, from which each step
 * measures its own share (steps/meter.ts). The Lambda wiring below and `jobarchive run` build theirs
 * with it; tests build theirs from their own clients (test/support/archiver-fixtures.ts).
 */
export const buildStepDeps = (
  cfg: Config,
  where: { readonly bucket: string; readonly table: string },
  clock?: () => Date,
): StepDeps & { destroy(): void } => {
  const meter = createRequestMeter();
  const s3 = s3ClientFrom(cfg);
  const ddb = dynamoClientFrom(cfg);
  countRequests(s3, 's3', meter.sink);
  countRequests(ddb, 'dynamodb', meter.sink);
  const deps = makeStepDeps({ s3, ddb, ...where, settings: cfg, meter, ...(clock ? { clock } : {}) });
  return {
    ...deps,
    /** Closes the clients' sockets (a process that ends after its run; Lambda never calls it). */
    destroy: () => {
      s3.destroy();
      ddb.destroy();
    },
  };
};

interface LambdaWiring {
  readonly deps: StepDeps;
  readonly sink: ObservabilitySink;
}

/**
 * What a Lambda container's handlers use, built from `env` — the only place the archiver's handlers
 * read the environment (the construct sets it: infra/construct/env-binding.ts).
 */
export const lambdaWiring = (env: Record<string, string | undefined>): LambdaWiring => {
  const cfg = parseConfig(env);
  const serviceName = env.POWERTOOLS_SERVICE_NAME ?? DEFAULT_SERVICE_NAME;
  return {
    deps: buildStepDeps(cfg, {
      bucket: requireSetting(cfg, 'detailsBucket', ENV.bucket),
      table: requireSetting(cfg, 'jobsTable', ENV.table),
    }),
    sink: powertoolsSink({ serviceName, namespace: env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE }),
  };
};

// Built on the first invocation, once per container (importing a handler reads nothing).
let wired: LambdaWiring | undefined;
const lambda = (): LambdaWiring => {
  wired ??= lambdaWiring(process.env);
  return wired;
};

/** The container's step deps (functions/*.ts pass this to their factory). */
export const lambdaDeps = (): StepDeps => lambda().deps;

/** The container's Powertools sink, built with its deps. */
export const lambdaSink: ObservabilitySink = {
  logger: (keys, context) => lambda().sink.logger(keys, context),
  publish: (metrics) => lambda().sink.publish(metrics),
};
