import { App, Size, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { lifecycleRules } from '../../infra/cli/lifecycle';
import { runCli } from '../../infra/cli/main';
import { memoryOutput } from '../../infra/cli/output';
import { enableNag } from '../../infra/construct/enable-nag';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { ArchiveStorageClass, type JobDetailsArchiveProps } from '../../infra/construct/props';
import { useOutdirs } from './template-helpers';

/**
 * The parts' lifecycle rule always carries its own size filter (ObjectSizeGreaterThan, bytes): by
 * default where a move pays for itself for the class, the retention and transitionAfterDays
 * (test/unit/transition-threshold.test.ts computes those by hand), else transitionMinimumSize. s3rver
 * has no lifecycle, so the rule CloudFormation receives is what is asserted.
 */
const outdir = useOutdirs();
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/** The synthesized parts rule; with cdk-nag on, synth throws on any unacknowledged finding. */
const partsRule = (props: JobDetailsArchiveProps, nag = false): Record<string, unknown> => {
  const app = new App({ context: NO_BUNDLING, outdir: outdir() });
  if (nag) enableNag(app);
  const stack = new Stack(app, 'S');
  new JobDetailsArchive(stack, 'Archive', props);
  app.synth();
  const rules = Object.values(Template.fromStack(stack).findResources('AWS::S3::Bucket')).flatMap(
    (b) => (b.Properties.LifecycleConfiguration?.Rules ?? []) as Record<string, unknown>[],
  );
  const parts = rules.filter((r) => r.Id === 'archive-parts-to-cold-storage');
  expect(parts).toHaveLength(1);
  return parts[0] as Record<string, unknown>;
};

describe('the parts rule’s ObjectSizeGreaterThan', () => {
  it('Glacier IR kept 24 months: 61,165 bytes (~60 KB: the class bills 128 KB at least)', () => {
    expect(
      partsRule({ archiveStorageClass: ArchiveStorageClass.GLACIER_IR, retentionMonths: 24 }),
    ).toMatchObject({
      Prefix: 'job-details-cold/',
      ObjectSizeGreaterThan: 61_165,
      Transitions: [{ StorageClass: 'GLACIER_IR', TransitionInDays: 1 }],
    });
  });

  it('Deep Archive kept 60 months: 50,109 bytes (~49 KB), cdk-nag passing', () => {
    expect(
      partsRule({ archiveStorageClass: ArchiveStorageClass.DEEP_ARCHIVE, retentionMonths: 60 }, true),
    ).toMatchObject({
      ObjectSizeGreaterThan: 50_109,
      Transitions: [{ StorageClass: 'DEEP_ARCHIVE', TransitionInDays: 1 }],
    });
  });

  it('kept forever (retention 0): priced over 10 years, ~30 KB in every class', () => {
    expect(partsRule({}).ObjectSizeGreaterThan).toBe(30_578);
    expect(partsRule({ archiveStorageClass: ArchiveStorageClass.DEEP_ARCHIVE }).ObjectSizeGreaterThan).toBe(
      30_366,
    );
  });

  it('transitionMinimumSize given: that many bytes, whatever the class and retention, cdk-nag passing', () => {
    const rule = partsRule(
      {
        archiveStorageClass: ArchiveStorageClass.GLACIER,
        retentionMonths: 24,
        transitionMinimumSize: Size.kibibytes(128),
      },
      true,
    );
    expect(rule).toMatchObject({
      ObjectSizeGreaterThan: 131_072,
      Transitions: [{ StorageClass: 'GLACIER', TransitionInDays: 1 }],
    });
  });
});

describe('jobarchive lifecycle --transition-minimum-kb', () => {
  it('defaults to the construct’s threshold, takes whole KB, and names a bad value', async () => {
    const parts = (rules: Record<string, unknown>[]) =>
      rules.find((r) => r.Id === 'archive-parts-to-cold-storage');
    expect(parts(lifecycleRules({ retentionMonths: 24 }))?.ObjectSizeGreaterThan).toBe(61_165);
    const io = memoryOutput();
    expect(
      await runCli(
        ['lifecycle', '--json', '--storage-class', 'DEEP_ARCHIVE', '--transition-minimum-kb', '64'],
        io,
      ),
    ).toBe(0);
    expect(parts(io.json<{ Rules: Record<string, unknown>[] }>().Rules)).toMatchObject({
      ObjectSizeGreaterThan: 65_536,
      Transitions: [{ StorageClass: 'DEEP_ARCHIVE', TransitionInDays: 1 }],
    });
    const bad = memoryOutput();
    expect(await runCli(['lifecycle', '--transition-minimum-kb', '1.5'], bad)).toBe(2);
    expect(bad.stderr).toEqual([expect.stringMatching(/--transition-minimum-kb.*whole number/)]);
  });
});
