/**
 * The archive format's one entry (docs/archive-format.md): everything outside shared/archive/format/
 * imports from here, never from a file of the folder (test/unit/format-boundary.test.ts holds that),
 * and no code outside the folder knows a version string (version.ts is the one version dispatch).
 *
 * - keys and versions: where objects live (keys.ts), which format they are in (version.ts);
 * - a part: build it (PartBuilder), read one block (decodeBlock, findInBlock), scan it (BlockScanner);
 *   bytes only, no I/O (proving a stored part unchanged is shared/archive/part-integrity.ts);
 * - the month index: open it (parseMonthIndex, parseIndexHeader + blockOf for a lookup), look a job up
 *   (jobEntries, latestEntry; a settled part's jobs: settledCandidates), change it (commitPart,
 *   markDeleted, markRearchive, settlePart), write it (serializeMonthIndex);
 * - shared parts: their index and views (shared-index.ts), blocks across shops (shared-blocks.ts),
 *   rewrite without a shop (shared-rewrite.ts);
 * - document filters (doc-filter.ts); flatten for SQL (flatten.ts).
 */

export { BlockScanner, gzipMemberLength } from './block-scan';
export {
  BLOCK_BYTES,
  blockRecords,
  decodeBlock,
  decodeLine,
  encodeLine,
  encodeRecordBlock,
  inflateBlock,
  platformDataRef,
  type WantedRecord,
} from './blocks';
export { canonicalJson, sha256Hex } from './canonical-json';
export { deflateBlock, SEGMENT_LEVEL } from './codec';
export { applyCommit, entriesOf } from './commit-entries';
export {
  type BlockFilter,
  blockFilter,
  candidateBlocks,
  fenceContains,
  fenceFilter,
  filtersMember,
  golombEncode,
  golombFilter,
  golombMayContain,
  isFiltersMember,
  isFiltersText,
  mayContain,
  type PartDocFilters,
  parseFiltersMember,
  parseSharedFiltersMember,
  parseStoredDocFilters,
  partDocFilters,
  sharedFiltersMember,
  storedDocFilters,
} from './doc-filter';
export { compactDetails, expandDetails, NUMBERED, splitNumbered } from './doc-lists';
export {
  type DetailKind,
  DOCUMENT_COLUMNS,
  documentListings,
  documentsViewSql,
  type FlatDocument,
  type FlatJob,
  flattenDocuments,
  flattenPart,
  JOB_COLUMNS,
  jobsViewSql,
  keyedSource,
  partPlace,
  projectedSource,
  sharedSource,
  type ViewColumn,
} from './flatten';
export {
  COLD_PREFIX,
  ERASURE_PREFIX,
  failedAttemptsPrefix,
  findingsPrefix,
  type GroupFindingsKind,
  groupFindingsKey,
  groupPrefix,
  HOT_PREFIX,
  INDEX_PREFIX,
  mapResultsPrefix,
  monthIndexDir,
  monthIndexKey,
  newPartName,
  PACK_DECISIONS_KEY,
  pageResultsKey,
  parseMonthIndexKey,
  parsePartKey,
  parseSharedIndexKey,
  parseSharedPartKey,
  partKey,
  partWrittenAt,
  pendingKey,
  pendingPrefix,
  planBatchesKey,
  planFindingsKey,
  plannedJobsKey,
  RUNS_PREFIX,
  reportKey,
  runPrefix,
  SHARED,
  SHARED_INDEX_PREFIX,
  sharedIndexKey,
  sharedPartKey,
  sharedPendingKey,
  sharedPendingPrefix,
  shopIndexPrefix,
  validatePartName,
  validateRunId,
  WATERMARK_KEY,
} from './keys';
export {
  type ByteRange,
  emptyMonthIndex,
  INDEX_FIRST_READ_BYTES,
  type IndexedJob,
  type IndexedPart,
  type IndexedSource,
  jobEntries,
  type Located,
  latestEntry,
  type MonthIndex,
  partByName,
  type SettledPart,
} from './month-index';
export { commitPart, markDeleted, markRearchive } from './month-index-edit';
export { blockOf, checkIndex, mergeBlocks, parseIndexHeader, parseMonthIndex } from './month-index-read';
export {
  type SettledCandidate,
  settledCandidates,
  settledEntry,
  settlePart,
} from './month-index-settle';
export { MONTH_INDEX_HEADERS, serializeMonthIndex } from './month-index-write';
export { BlockSlicer, PartBuilder } from './part-builder';
export { parsePartRecord } from './record-shape';
export {
  type ArchivedJobMeta,
  countDetails,
  type DetailCounts,
  type JobRecord,
  metaFromRow,
  type PartRecord,
  type PlatformDataRecord,
  type SourceObject,
} from './records';
export {
  blockRanges,
  blockSpan,
  blocksOf,
  reblockSegments,
  sameBlocksSegments,
  shopLines,
} from './shared-blocks';
export {
  emptySharedIndex,
  parseSharedIndex,
  type SharedIndex,
  type SharedPart,
  serializeSharedIndex,
  sharedView,
  withViews,
} from './shared-index';
export {
  damagedBlocks,
  sharedPartWithoutDamage,
  sharedPartWithoutShop,
  shopsOfBlock,
  switchRepairedPart,
  switchSharedPart,
} from './shared-rewrite';
export {
  newIntent,
  type PartIntent,
  type PendingPart,
  parseIntent,
  type StagedDocs,
  stagedDocsByPart,
  type VerifiedPart,
} from './staging';
export { INDEX_FORMAT, PART_FORMAT } from './version';
