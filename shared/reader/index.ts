/** Reader with fallback: a job's details from hot objects, archive parts, or both. */

export { choosePlatformData, combineDetails, combineSources, sourceOf } from './combine';
export {
  type ArchiveEntry,
  entriesFromIndex,
  hotPlan,
  latestWithPlatformData,
  newestIndexMonths,
  orderEntries,
} from './entries';
export type {
  DocumentJob,
  DocumentListing,
  FindDocumentProvenance,
  FindDocumentQuery,
  FindDocumentResult,
} from './find-document';
export {
  monthRange,
  readerSettings,
  resolveQuery,
} from './query';
export { planReads, sliceMembers } from './ranges';
export { ReadLedger } from './read-ledger';
export { JobDetailsReader } from './reader';
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
export { checkJobMember, checkPlatformMember } from './verify';
