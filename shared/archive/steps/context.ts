import type { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../../config';
import { JobDetailsStore } from '../../details';
import { InvalidInputError } from '../../errors';
import type { DdbSender } from '../../jobs/types';
import type { RequestMeter } from './meter';

/** The settings the steps use (a subset of shared/config.ts `Config`). */
export type StepSettings = Pick<
  Config,
  | 'olderThanDays'
  | 'graceHours'
  | 'readConcurrency'
  | 'planPageGroups'
  | 'planPageJobs'
  | 'batchGroups'
  | 'batchJobs'
  | 'packBelowKb'
  | 'wholeMonths'
  | 'maxSourceMb'
  | 'jobTtlDays'
  | 'erasureDeadlineDays'
>;

/**
 * Everything a step needs, passed in (entry points build it: functions/deps.ts, test fixtures).
 * `clock` is the real time source: part names, created/committed timestamps and the age after which a
 * pending part counts as abandoned. The run's logical time is `run.now`.
 */
export interface StepDeps {
  readonly s3: S3Client;
  readonly ddb: DdbSender;
  readonly bucket: string;
  readonly table: string;
  readonly settings: StepSettings;
  readonly meter: RequestMeter;
  readonly clock: () => Date;
  readonly store: JobDetailsStore;
}

export interface StepDepsInput {
  s3: S3Client;
  ddb: DdbSender;
  bucket: string;
  table: string;
  settings: StepSettings;
  meter: RequestMeter;
  clock?: () => Date;
}

export const makeStepDeps = (input: StepDepsInput): StepDeps => {
  if (typeof input.bucket !== 'string' || input.bucket === '')
    throw new InvalidInputError('bucket', 'is required');
  if (typeof input.table !== 'string' || input.table === '')
    throw new InvalidInputError('table', 'is required');
  return {
    ...input,
    clock: input.clock ?? (() => new Date()),
    store: new JobDetailsStore(input.s3, input.bucket, { readConcurrency: input.settings.readConcurrency }),
  };
};
