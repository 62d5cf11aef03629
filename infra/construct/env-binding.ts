import { METRICS_NAMESPACE } from '../../functions/metric-names';
import { ENV } from '../../shared/config';
import { ARCHIVER_SETTINGS, type ArchiverSettingName, type Settings } from '../../shared/settings';
import type { ResolvedSettings } from './props-validation';

/**
 * What the deployed steps need to know: where they work, the service name, and the archiver's
 * settings (shared/settings.ts ARCHIVER_SETTINGS) as resolved from the props; `maxSourceMb` unset
 * leaves each function to derive it from its own memory (shared/config.ts).
 */
export type ArchiverSettings = Pick<ResolvedSettings, Exclude<ArchiverSettingName, 'maxSourceMb'>> &
  Partial<Pick<Settings, 'maxSourceMb'>> & {
    readonly bucketName: string;
    readonly tableName: string;
    /** Powertools service name: the metrics' `service` dimension, unique per construct. */
    readonly serviceName: string;
  };

/** The one place that turns settings into Lambda environment variables (names: shared/config.ts `ENV`). */
export const archiverEnvironment = (s: ArchiverSettings): Record<string, string> => {
  const env: Record<string, string> = { [ENV.bucket]: s.bucketName, [ENV.table]: s.tableName };
  for (const name of ARCHIVER_SETTINGS) {
    const v = s[name];
    if (v !== undefined) env[ENV[name]] = String(v);
  }
  return {
    ...env,
    POWERTOOLS_SERVICE_NAME: s.serviceName,
    POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
    // Stack traces point into the TypeScript sources, not the bundle.
    NODE_OPTIONS: '--enable-source-maps',
  };
};
