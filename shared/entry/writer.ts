/**
 * The writer's public face (the package's `.` and `./writer` entry): what an indexer needs to write a
 * job's details and row — and nothing of the archiver. The wire contract: docs/wire-format.md.
 */
import { assertSupportedRuntime } from '../runtime';

// Node 20 lacks JSON.rawJSON: fail here, at import, before createJob could write a row that recordFlush
// then could not complete. A typed error (UnsupportedRuntimeError) naming Node >= 22.
assertSupportedRuntime();

export {
  type ConflictItem,
  createJobDetailsStoreProvider,
  DETAILS_ROOT,
  detailsKey,
  flushIdForChunks,
  getJobDetailsStore,
  type JobDetails,
  type JobDetailsPayload,
  JobDetailsStore,
  type JobDetailsStoreOptions,
  platformDataKey,
  validateJobDetailsPayload,
} from '../details';
export * from '../errors';
export { chunkIds, generateJobId } from '../ids';
export {
  type CreateJobInput,
  createJob,
  type FlushInput,
  type FlushJob,
  type FlushResult,
  getJob,
  JOB_STATUSES,
  JOBS_TABLE,
  type JobRow,
  type JobStatus,
  recordFlush,
  TERMINAL_STATUSES,
  writeTerminal,
} from '../jobs';
