import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import type { JobDetailsArchiveProps } from '../../infra/construct/props';
import { resolveArchiveProps } from '../../infra/construct/props-validation';
import { InvalidInputError } from '../../shared/errors';
import { retentionDays } from '../../shared/settings';
import { useOutdirs } from './template-helpers';

/**
 * Retention and versioning as lifecycle rules in the synthesized template: s3rver has no lifecycle,
 * so what S3 will expire is asserted on the rules CloudFormation receives.
 */
const outdir = useOutdirs();

const synth = (
  props: JobDetailsArchiveProps,
  bucket?: (stack: Stack) => JobDetailsArchiveProps['bucket'],
) => {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: outdir() }), 'S');
  const given = bucket?.(stack);
  new JobDetailsArchive(stack, 'Archive', { ...props, ...(given ? { bucket: given } : {}) });
  return { stack, template: Template.fromStack(stack) };
};

const rule = (r: Record<string, unknown>) => Match.objectLike({ Status: 'Enabled', ...r });
const lifecycleWith = (rules: unknown[]) => ({
  LifecycleConfiguration: { Rules: Match.arrayWith(rules.map((r) => rule(r as Record<string, unknown>))) },
});

describe('retentionMonths', () => {
  it('24 months: parts and never-archived hot objects expire after 731 days, their indexes a month later', () => {
    expect(retentionDays(24)).toBe(731);
    const { template } = synth({ retentionMonths: 24 });
    template.hasResourceProperties(
      'AWS::S3::Bucket',
      lifecycleWith([
        // Parts still move to cold storage and run scratch expires as before (rules in this order).
        { Id: 'archive-parts-to-cold-storage', Prefix: 'job-details-cold/' },
        { Id: 'expire-run-scratch', Prefix: 'job-details-runs/', ExpirationInDays: 3 },
        { Id: 'expire-archive-parts', Prefix: 'job-details-cold/', ExpirationInDays: 731 },
        { Id: 'expire-month-indexes', Prefix: 'job-details-index/', ExpirationInDays: 731 + 31 },
        { Id: 'expire-unarchived-hot-objects', Prefix: 'job-details/', ExpirationInDays: 731 },
      ]),
    );
  });

  it('default (0): nothing under the hot, cold or index prefixes expires', () => {
    const { template } = synth({});
    const [bucket] = Object.values(
      template.findResources('AWS::S3::Bucket', {
        Properties: lifecycleWith([{ Id: 'expire-run-scratch' }]),
      }),
    );
    const rules = bucket?.Properties.LifecycleConfiguration.Rules as {
      Prefix?: string;
      ExpirationInDays?: number;
    }[];
    expect(rules.filter((r) => r.ExpirationInDays !== undefined).map((r) => r.Prefix)).toEqual([
      'job-details-runs/',
    ]);
  });

  it('is added to a bucket owned elsewhere in the app', () => {
    const { stack, template } = synth({ retentionMonths: 60 }, (s) => new Bucket(s, 'Theirs'));
    template.hasResourceProperties(
      'AWS::S3::Bucket',
      lifecycleWith([
        { Id: 'expire-archive-parts', ExpirationInDays: retentionDays(60) },
        { Id: 'expire-month-indexes', ExpirationInDays: retentionDays(60) + 31 },
      ]),
    );
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('must outlast jobTtlDays, a whole number of months', () => {
    // 2 months = 61 days: hot objects would expire while a 90-day row can still be planned.
    expect(() => resolveArchiveProps({ retentionMonths: 2 })).toThrow(InvalidInputError);
    expect(() => resolveArchiveProps({ retentionMonths: 2 })).toThrow(
      /invalid retentionMonths: 2 months \(61 days\) must outlast jobTtlDays \(90\)/,
    );
    expect(() => resolveArchiveProps({ retentionMonths: 1.5 })).toThrow(/retentionMonths.*whole number/);
    expect(resolveArchiveProps({ retentionMonths: 3 }).retentionMonths).toBe(3);
    expect(resolveArchiveProps({}).retentionMonths).toBe(0);
  });
});

describe('versioned buckets', () => {
  const noncurrent = [
    { Id: 'expire-noncurrent-versions', NoncurrentVersionExpiration: { NoncurrentDays: 7 } },
    { Id: 'remove-expired-delete-markers', ExpiredObjectDeleteMarker: true },
  ];

  it('a created bucket (unversioned) carries the noncurrent-version rules should versioning be turned on', () => {
    synth({}).template.hasResourceProperties('AWS::S3::Bucket', lifecycleWith(noncurrent));
  });

  it('a versioned bucket of this app gets them; an unversioned one is left as it is', () => {
    synth({}, (s) => new Bucket(s, 'Versioned', { versioned: true })).template.hasResourceProperties(
      'AWS::S3::Bucket',
      { VersioningConfiguration: { Status: 'Enabled' }, ...lifecycleWith(noncurrent) },
    );
    const { template } = synth({}, (s) => new Bucket(s, 'Plain'));
    const [plain] = Object.values(template.findResources('AWS::S3::Bucket'));
    const ids = ((plain?.Properties.LifecycleConfiguration.Rules ?? []) as { Id: string }[]).map((r) => r.Id);
    expect(ids).toContain('expire-run-scratch');
    expect(ids).not.toContain('expire-noncurrent-versions');
  });

  it('an imported bucket: a loud synth-time warning, since its versioning is unknown', () => {
    const { stack, template } = synth({ retentionMonths: 24 }, (s) =>
      Bucket.fromBucketName(s, 'Imp', 'prod-details'),
    );
    template.resourceCountIs('AWS::S3::Bucket', 0);
    const annotations = Annotations.fromStack(stack);
    annotations.hasWarning(
      '/S/Archive',
      Match.stringLikeRegexp(
        'IF IT IS VERSIONED, every hot object the archiver deletes stays billed as a noncurrent version forever: add noncurrentVersionRules\\(\\)',
      ),
    );
    annotations.hasWarning(
      '/S/Archive',
      Match.stringLikeRegexp('nothing expires after retentionMonths \\(24\\)'),
    );
  });
});
