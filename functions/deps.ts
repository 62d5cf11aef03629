import { s3ClientFrom, dynamoClientFrom } from '../shared/clients';
import { config, ENV, requireSetting, resetConfig } from '../shared/config';
import { countRequests } from '../shared/metrics';
import { makeStepDeps, type StepDeps } from '../shared/archive/steps/context';
import { createRequestMeter } from '../shared/archive/steps/meter';

/**
 * The archiver handlers' dependencies, built once per Lambda container from `config()`: both clients
 * count their requests into one meter, and each step measures its own share (steps/meter.ts).
 */
let deps: StepDeps | undefined;

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
    deps = makeStepDeps({ s3, ddb, bucket, table, settings: cfg, meter });
  }
  return deps;
};

/** Forget the clients and the parsed settings (the local runner calls this after changing env). */
export const resetDeps = (): void => {
  deps?.s3.destroy();
  deps = undefined;
  resetConfig();
};
