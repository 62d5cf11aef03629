/**
 * The writer's public face (the package's `.` and `./writer` entry): what an indexer needs to write a
 * job's details and row — and nothing of the archiver. The wire contract: docs/wire-format.md.
 */
export {
  JobDetailsStore,
  type JobDetailsStoreOptions,
  getJobDetailsStore,
  createJobDetailsStoreProvider,
  flushIdForChunks,
  type JobDetailsPayload,
  type JobDetails,
  type ConflictItem,
  validateJobDetailsPayload,
  DETAILS_ROOT,
  detailsKey,
  platformDataKey,
} from '../details';
export { chunkIds, generateJobId } from '../ids';
export {
  createJob,
  type CreateJobInput,
  recordFlush,
  type FlushInput,
  type FlushJob,
  type FlushResult,
  writeTerminal,
  getJob,
  type JobRow,
  type JobStatus,
  JOB_STATUSES,
  TERMINAL_STATUSES,
  JOBS_TABLE,
} from '../jobs';
export * from '../errors';
