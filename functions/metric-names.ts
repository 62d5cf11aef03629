/**
 * The names the archiver's functions log and publish metrics under, apart from Powertools (which
 * powertools.ts loads): the construct reads them to configure alarms and the functions'
 * environment, and must not load a runtime library it does not deploy.
 */
export const METRICS_NAMESPACE = 'JobDetailsArchive';
export const DEFAULT_SERVICE_NAME = 'job-details-archive';

/**
 * Set to `true` (the construct's `runMetrics` prop) for the Report step to publish RUN_METRICS: 8
 * custom metrics at $0.30 a month each, so off by default.
 */
export const RUN_METRICS_ENV = 'JDA_RUN_METRICS';

/** Metrics the Report step publishes once per run (never for a dry run: it changes nothing). */
export const RUN_METRICS = {
  jobsArchived: 'JobsArchived',
  jobsQuarantined: 'JobsQuarantined',
  groupsFailed: 'GroupsFailed',
  bytesIn: 'BytesIn',
  bytesOut: 'BytesOut',
  objectsDeleted: 'ObjectsDeleted',
  partsWritten: 'PartsWritten',
  /** Erasure requests past their deadline (docs/erasure.md); the construct alarms on it. */
  erasureRequestsOverdue: 'ErasureRequestsOverdue',
} as const;
