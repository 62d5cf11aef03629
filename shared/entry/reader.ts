/**
 * The reader's public face (the package's `./reader` entry): a job's details and platform data
 * whether hot, archived or both, with provenance.
 */
export {
  JobDetailsReader,
  type ArchivalSummary,
  type DetailsResult,
  type JobDetailsReaderOptions,
  type JobLookup,
  type JobQuery,
  type PlatformDataResult,
  type Provenance,
  type ReadSource,
  type DocumentJob,
  type FindDocumentQuery,
  type FindDocumentResult,
  type DocumentListing,
  type FindDocumentProvenance,
} from '../reader';
export { ArchiveNotRestoredError, CorruptObjectError, InvalidInputError, JobArchiveError } from '../errors';
