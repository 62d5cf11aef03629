import { InvalidInputError } from '../../shared/errors';
import { SETTINGS } from '../../shared/settings';
import { ArchiveStorageClass, type JobDetailsArchiveProps } from '../construct/props';
import { loadOptional } from '../local/errors';
import {
  boolFlag,
  type CommandSpec,
  EXIT_OK,
  type Flags,
  numberFlag,
  stringFlag,
  wholeNumberFlag,
} from './args';
import type { Output } from './output';
import { MAX_TRANSITION_MINIMUM_BYTES } from './transition-threshold';

/**
 * `jobarchive lifecycle [--json]`: the lifecycle rules the details bucket needs, as data — for a bucket
 * the construct cannot give them to (imported, or defined in another app such as a Python CDK stack).
 * CloudFormation's shape (`LifecycleConfiguration.Rules`), rendered by CDK from the construct's own
 * rules with the props given here, validated as the construct validates them.
 */
export const lifecycleSpec: CommandSpec = {
  name: 'lifecycle',
  short: 'the lifecycle rules the details bucket needs, as data (--json) for a bucket defined elsewhere',
  summary:
    'The details bucket lifecycle rules for these props — parts to the archive storage class, run scratch expiry, ' +
    'aborted uploads, retention, noncurrent versions — as CloudFormation writes them (AWS::S3::Bucket ' +
    'LifecycleConfiguration.Rules). The construct applies them itself to a bucket of its own app; print them ' +
    'for a bucket defined elsewhere, e.g. in a Python CDK stack: ' +
    "bucket.node.default_child.add_property_override('LifecycleConfiguration.Rules', rules + your_rules). Needs aws-cdk-lib.",
  without: {
    aws: 'it talks to nothing (it renders rules)',
    table: 'it talks to nothing',
    bucket: 'it talks to nothing',
    'data-dir': 'it starts no stack',
  },
  options: {
    'storage-class': {
      type: 'string',
      value: 'CLASS',
      help: `class parts move to: ${Object.values(ArchiveStorageClass).join(' | ')} (default GLACIER_IR)`,
    },
    'transition-after-days': {
      type: 'string',
      value: 'N',
      help: 'days a part stays in STANDARD (default 1)',
    },
    'transition-minimum-kb': {
      type: 'string',
      value: 'N',
      help: 'parts larger than N KB (1,024 bytes) move to the class (default: where a move pays for itself for the class and retention)',
    },
    'retention-months': {
      type: 'string',
      value: 'N',
      help: `months parts and never-archived hot objects are kept, 0 forever (default ${SETTINGS.retentionMonths.default})`,
    },
    'job-ttl-days': {
      type: 'string',
      value: 'N',
      help: `the jobs' row ttl, which retention must outlast (default ${SETTINGS.jobTtlDays.default})`,
    },
  },
};

export interface LifecycleOptions {
  /** Every prop but `transitionMinimumSize` (a Size needs aws-cdk-lib, loaded only to render). */
  readonly props: Omit<JobDetailsArchiveProps, 'transitionMinimumSize'>;
  /** `--transition-minimum-kb`: the construct's transitionMinimumSize in KiB; absent, its default. */
  readonly transitionMinimumKb?: number;
  readonly json: boolean;
}

export const parseLifecycleOptions = (flags: Flags): LifecycleOptions => {
  const cls = stringFlag(flags, 'storage-class') ?? ArchiveStorageClass.GLACIER_IR;
  if (!(Object.values(ArchiveStorageClass) as string[]).includes(cls)) {
    throw new InvalidInputError(
      '--storage-class',
      `expected one of ${Object.values(ArchiveStorageClass).join(', ')}, got ${JSON.stringify(cls)}`,
    );
  }
  const r = SETTINGS.retentionMonths;
  const t = SETTINGS.jobTtlDays;
  return {
    props: {
      archiveStorageClass: cls as ArchiveStorageClass,
      transitionAfterDays: wholeNumberFlag(flags, 'transition-after-days', 1, { min: 0, max: 3650 }),
      retentionMonths: wholeNumberFlag(flags, 'retention-months', r.default, { min: r.min, max: r.max }),
      jobTtlDays: numberFlag(flags, 'job-ttl-days', t.default, { min: t.min, max: t.max }),
    },
    ...(flags['transition-minimum-kb'] === undefined
      ? {}
      : {
          transitionMinimumKb: wholeNumberFlag(flags, 'transition-minimum-kb', 0, {
            min: 0,
            max: MAX_TRANSITION_MINIMUM_BYTES / 1024,
          }),
        }),
    json: boolFlag(flags, 'json'),
  };
};

/**
 * The rules as data (CloudFormation's shape); the props are checked as the construct checks them.
 * `transitionMinimumKb` (whole KiB) becomes the construct's transitionMinimumSize.
 */
export const lifecycleRules = (
  props: Omit<JobDetailsArchiveProps, 'transitionMinimumSize'>,
  transitionMinimumKb?: number,
): Record<string, unknown>[] =>
  loadOptional('aws-cdk-lib', 'jobarchive lifecycle', () => {
    const { Size } = require('aws-cdk-lib') as typeof import('aws-cdk-lib');
    const { resolveArchiveProps } =
      require('../construct/props-validation') as typeof import('../construct/props-validation');
    const { lifecycleRulesData, neededLifecycleRules } =
      require('../construct/lifecycle-data') as typeof import('../construct/lifecycle-data');
    const p = resolveArchiveProps(
      transitionMinimumKb === undefined
        ? props
        : { ...props, transitionMinimumSize: Size.kibibytes(transitionMinimumKb) },
    );
    return lifecycleRulesData(neededLifecycleRules(p));
  });

export const lifecycleCommand = async (opts: LifecycleOptions, io: Output): Promise<number> => {
  const rules = lifecycleRules(opts.props, opts.transitionMinimumKb);
  if (opts.json) {
    io.out(JSON.stringify({ Rules: rules }, null, 2));
    return EXIT_OK;
  }
  for (const rule of rules) {
    const { Id, Status, ...rest } = rule;
    io.out(`${String(Id).padEnd(38)} ${String(Status).padEnd(8)} ${JSON.stringify(rest)}`);
  }
  io.out(`(${rules.length} rules; --json for CloudFormation's LifecycleConfiguration.Rules)`);
  return EXIT_OK;
};
