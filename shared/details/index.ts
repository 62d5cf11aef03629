/** Hot-path job details: key layout, wire format, pure codec/merge helpers, the S3 store. */
export {
  chunkIds,
  generateJobId,
  validateChunkId,
  validateFlushId,
  validateJobId,
  validateShopId,
} from '../ids';
export {
  decodeFlushBody,
  decodePlatformData,
  encodeFlushBody,
  encodePlatformData,
  GZIP_LEVEL,
  gzipDeterministic,
  isGzip,
  MAX_DECOMPRESSED_BYTES,
} from './codec';
export {
  createJobDetailsStoreProvider,
  getJobDetailsStore,
  type JobDetailsStoreGetter,
  resetJobDetailsStore,
} from './factory';
export {
  compareCodePoints,
  conflictItemKey,
  dedupeConflictItems,
  dedupeDocIds,
  FLUSH_ID_LENGTH,
  flushIdForChunks,
  sortedUniqueIds,
} from './helpers';
export {
  canonicalJson,
  findJsonProblem,
  isPlainObject,
  isRawJson,
  type JsonObject,
  type JsonValue,
  MAX_JSON_DEPTH,
  parseJsonExact,
  type RawJsonNumber,
  rawJsonNumber,
} from './json';
export {
  classifyJobKey,
  DETAILS_ROOT,
  detailsKey,
  FLUSH_SUFFIX,
  type JobObjectKind,
  jobPrefix,
  PLATFORM_DATA_NAME,
  parseFlushKey,
  platformDataKey,
} from './keys';
export {
  emptyJobDetails,
  JobDetailsAccumulator,
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
  type ReasonMap,
  validateJobDetailsPayload,
} from './payload';
export {
  type FlushObject,
  type JobDetailsStoreOptions,
  type JobDetailsWithSources,
  JobDetailsStore,
  type JobObject,
  META_JOB_ID,
  META_SHOP_ID,
  type ObjectRef,
} from './store';
