/**
 * The reader's public face (the package's `./reader` entry): a job's details and platform data
 * whether hot, archived or both, with provenance.
 */

export { ArchiveNotRestoredError, CorruptObjectError, InvalidInputError, JobArchiveError } from '../errors';
export {
  type ArchivalSummary,
  type DetailsResult,
  type DocumentJob,
  type DocumentListing,
  type FindDocumentProvenance,
  type FindDocumentQuery,
  type FindDocumentResult,
  JobDetailsReader,
  type JobDetailsReaderOptions,
  type JobLookup,
  type JobQuery,
  type PlatformDataResult,
  type Provenance,
  type ReadSource,
} from '../reader';
