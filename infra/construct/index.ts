/**
 * The construct's public face (the package's `./cdk` entry). cdk-nag is not loaded from here:
 * `enableNag` is its own entry (`./cdk/nag`, enable-nag.ts).
 */

export { ArchiveSql, type ArchiveSqlResourceProps } from './archive-sql';
export { ArchiveStack, type ArchiveStackProps } from './archive-stack';
/** For an imported bucket, which the construct cannot give lifecycle rules: add them where it is defined. */
export {
  type DetailsBucketOptions,
  detailsLifecycleRules,
  noncurrentVersionRules,
  retentionRules,
} from './details-bucket';
export { type ArchiveAlarms, type ArchiverFunctions, JobDetailsArchive } from './job-details-archive';
export {
  type ArchiveScheduleProps,
  type ArchiveSettingsProps,
  type ArchiveSqlProps,
  ArchiveStorageClass,
  type JobDetailsArchiveProps,
  RestoreTier,
  type StepMemoryProps,
  type StepTimeoutProps,
} from './props';
