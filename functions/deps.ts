import { makeStepDeps, type StepDeps } from '../shared/archive/steps/context';
import { createRequestMeter } from '../shared/archive/steps/meter';
import { dynamoClientFrom, s3ClientFrom } from '../shared/clients';
import { config, ENV, requireSetting, resetConfig } from '../shared/config';
import { countRequests } from '../shared/metrics';

/**
 * The archiver handlers' dependencies, built once per Lambda container from `config()`: both clients
 * count their requests into one meter, and each step measures its own share (steps/meter.ts).
 */
let deps: StepDeps | undefined;
let clockOverride: (() => Date) | undefined;

/**
 * Moves the handlers' clock (part stamps, commit times, abandoned-part age) — for tests that must see
 * what a run does hours later. Read on every call, so clients built before keep working.
 */
export const setHandlerClock = (clock?: () => Date): void => {
  clockOverride = clock;
};

export const getDeps = (): StepDeps => {
  if (!deps) {
    const cfg = config();
    const bucket = requireSetting(cfg, 'detailsBucket', ENV.bucket);
    const table = requireSetting(cfg, 'jobsTable', ENV.table);
    const meter = createRequestMeter();
    const s3 = s3ClientFrom(cfg);
    const ddb = dynamoClientFrom(cfg);
    countRequests(s3, 's3', meter.sink);
    countRequests(ddb, 'dynamodb', meter.sink);
    const clock = () => clockOverride?.() ?? new Date();
    deps = makeStepDeps({ s3, ddb, bucket, table, settings: cfg, meter, clock });
  }
  return deps;
};

/** Forget the clients and the parsed settings (the local runner calls this after changing env). */
export const resetDeps = (): void => {
  deps?.s3.destroy();
  deps = undefined;
  resetConfig();
};
