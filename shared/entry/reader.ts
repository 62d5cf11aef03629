/**
 * The reader's public face (the package's `./reader` entry): a job's details and platform data
 * whether hot, archived or both, with provenance.
 */

import { assertSupportedRuntime } from '../runtime';

// Node 20 lacks JSON.rawJSON: fail here, at import, with a typed error naming Node >= 22.
assertSupportedRuntime();

export {
  ArchiveNotRestoredError,
  CorruptObjectError,
  InvalidInputError,
  JobArchiveError,
  UnsupportedRuntimeError,
} from '../errors';
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
