/** Reader with fallback: a job's details from hot objects, archive parts, or both. */
export { JobDetailsReader } from './reader';
export {
  monthRange,
  readerSettings,
  resolveQuery,
} from './query';
export {
  type ArchiveEntry,
  entriesFromIndex,
  hotPlan,
  latestWithPlatformData,
  newestIndexMonths,
  orderEntries,
} from './entries';
export { choosePlatformData, combineDetails } from './combine';
export { planReads, sliceMembers } from './ranges';
export { combineSources, ReadTally, sourceOf } from './tally';
export { checkJobMember, checkPlatformMember } from './verify';
export type {
  ArchivalSummary,
  DetailsResult,
  JobDetailsReaderOptions,
  JobLookup,
  JobQuery,
  PlatformDataResult,
  Provenance,
  ReadSource,
} from './types';
export type {
  DocumentJob,
  DocumentListing,
  FindDocumentProvenance,
  FindDocumentQuery,
  FindDocumentResult,
} from './find-document';
