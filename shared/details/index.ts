/** Hot-path job details: key layout, wire format, pure codec/merge helpers, the S3 store. */
export {
  chunkIds,
  generateJobId,
} from '../ids';
export {
  decodeFlushBody,
  decodePlatformData,
  encodeFlushBody,
  encodePlatformData,
  GZIP_LEVEL,
  isGzip,
} from './codec';
export {
  createJobDetailsStoreProvider,
  getJobDetailsStore,
  resetJobDetailsStore,
} from './factory';
export {
  compareCodePoints,
  dedupeConflictItems,
  dedupeDocIds,
  flushIdForChunks,
} from './helpers';
export {
  canonicalJson,
  isRawJson,
  type JsonObject,
  MAX_JSON_DEPTH,
  parseJsonExact,
  rawJsonNumber,
} from './json';
export {
  classifyJobKey,
  DETAILS_ROOT,
  detailsKey,
  jobPrefix,
  parseFlushKey,
  platformDataKey,
} from './keys';
export {
  emptyJobDetails,
  mergeAllJobDetails,
  mergeJobDetails,
  normalizeJobDetails,
} from './merge';
export {
  type ConflictItem,
  type JobDetails,
  type JobDetailsPayload,
  PAYLOAD_FIELDS,
  parseJobDetailsPayload,
  validateJobDetailsPayload,
} from './payload';
export {
  JobDetailsStore,
  type JobDetailsStoreOptions,
  type JobObject,
  META_JOB_ID,
  META_SHOP_ID,
} from './store';
