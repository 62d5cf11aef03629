import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, ProjectionType, Table, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { lifecycleRules } from '../../infra/cli/lifecycle';
import { runCli } from '../../infra/cli/main';
import { memoryOutput } from '../../infra/cli/output';
import { createArchiveApp } from '../../infra/construct/archive-stack';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { createJobsTable } from '../../infra/construct/jobs-table';
import { lifecycleRulesData } from '../../infra/construct/lifecycle-data';
import { ENV } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';
import { JOBS_TABLE } from '../../shared/jobs/schema';
import { useOutdirs } from './template-helpers';

/**
 * The standalone stack for a team that keeps the archiver apart from the stack owning its table and
 * bucket: `cdk deploy -c tableName=… -c bucketName=…` deploys onto them; the bucket's lifecycle rules
 * come out as data (a stack output and `jobarchive lifecycle --json`, equal to what the construct
 * renders on a bucket of its own); a table of the same app without the archiver's keys or GSIs fails
 * synth with one line.
 */
const outdir = useOutdirs();
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const S = AttributeType.STRING;

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
const bucketRules = (t: Template): unknown => {
  const buckets = Object.values(t.toJSON().Resources as Resources).filter(
    (r) =>
      r.Type === 'AWS::S3::Bucket' && JSON.stringify(r.Properties).includes('archive-parts-to-cold-storage'),
  );
  expect(buckets).toHaveLength(1);
  const config = buckets[0]?.Properties.LifecycleConfiguration as { Rules: unknown } | undefined;
  return config?.Rules;
};

describe('the app on an existing table and bucket named by context', () => {
  let template: Template;
  beforeAll(() => {
    // As `cdk synth -c tableName=… -c bucketName=…` builds it: cdk-nag on (any finding throws).
    const { app, stack } = createArchiveApp({
      context: { ...NO_BUNDLING, tableName: 'prod-EcomJobs', bucketName: 'prod-job-details' },
      outdir: outdir(),
    });
    app.synth();
    template = Template.fromStack(stack);
  });

  it('creates no table and no bucket, and points every function at the named ones', () => {
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    const fns = Object.values(template.toJSON().Resources as Resources).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    expect(fns).toHaveLength(6);
    for (const f of fns) {
      const vars = (f.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect([vars[ENV.table], vars[ENV.bucket]]).toEqual(['prod-EcomJobs', 'prod-job-details']);
    }
  });

  it('outputs the lifecycle rules the imported bucket needs, as CloudFormation data', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: string }>;
    const rules = JSON.parse(outputs.DetailsBucketLifecycleRules?.Value ?? 'null');
    expect(rules).toEqual(lifecycleRules({}));
    expect(rules.map((r: { Id: string }) => r.Id)).toEqual(
      expect.arrayContaining([
        'archive-parts-to-cold-storage',
        'expire-run-scratch',
        'expire-noncurrent-versions',
      ]),
    );
  });

  it('refuses a name that is no table or bucket name, naming the context key', () => {
    expect(() =>
      createArchiveApp({ context: { ...NO_BUNDLING, bucketName: 'Not_A_Bucket' }, nag: false }),
    ).toThrow(/invalid bucketName: expected a name matching/);
    expect(() => createArchiveApp({ context: { ...NO_BUNDLING, tableName: 42 }, nag: false })).toThrow(
      /invalid tableName/,
    );
  });
});

describe('jobarchive lifecycle --json', () => {
  it('prints exactly the rules the construct puts on a bucket it creates', async () => {
    const { app, stack } = createArchiveApp({ context: NO_BUNDLING, nag: false, outdir: outdir() });
    app.synth();
    const io = memoryOutput();
    expect(await runCli(['lifecycle', '--json'], io)).toBe(0);
    expect(io.json()).toEqual({ Rules: bucketRules(Template.fromStack(stack)) });
  });

  it('takes the props that change the rules, checked as the construct checks them', async () => {
    const rules = lifecycleRules({ retentionMonths: 24 });
    expect(rules.find((r) => r.Id === 'expire-archive-parts')).toMatchObject({ ExpirationInDays: 731 });
    const io = memoryOutput();
    const args = ['lifecycle', '--json', '--storage-class', 'DEEP_ARCHIVE', '--transition-after-days', '0'];
    expect(await runCli(args, io)).toBe(0);
    const parts = io
      .json<{ Rules: Record<string, unknown>[] }>()
      .Rules.find((r) => r.Id === 'archive-parts-to-cold-storage');
    expect(parts?.Transitions).toEqual([{ StorageClass: 'DEEP_ARCHIVE', TransitionInDays: 0 }]);
    const bad = memoryOutput();
    expect(await runCli(['lifecycle', '--retention-months', '1'], bad)).toBe(2);
    expect(bad.stderr).toEqual([
      expect.stringMatching(/invalid retentionMonths: .* must outlast jobTtlDays \(90\)/),
    ]);
  });

  it('renders rules as CloudFormation names them', () => {
    expect(
      lifecycleRulesData([{ id: 'x', abortIncompleteMultipartUploadAfter: { toDays: () => 1 } as never }]),
    ).toEqual([{ Id: 'x', Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }]);
  });
});

describe('a jobs table of the same app must have what the archiver reads', () => {
  const build = (table: (s: Stack) => TableV2 | Table): (() => JobDetailsArchive) => {
    const s = new Stack(new App({ context: NO_BUNDLING, outdir: outdir() }), 'S');
    const t = table(s);
    return () => new JobDetailsArchive(s, 'Archive', { table: t });
  };
  const byStatus = JOBS_TABLE.gsiJobsByStatus;
  const lookup = JOBS_TABLE.gsiJobLookup;
  const v2 = (s: Stack, opts: Partial<ConstructorParameters<typeof TableV2>[2]> = {}) =>
    new TableV2(s, 'Jobs', {
      partitionKey: { name: 'pk', type: S },
      sortKey: { name: 'sk', type: S },
      globalSecondaryIndexes: [
        { indexName: lookup.name, partitionKey: { name: lookup.partitionKey, type: S } },
        {
          indexName: byStatus.name,
          partitionKey: { name: byStatus.partitionKey, type: S },
          sortKey: { name: byStatus.sortKey, type: S },
        },
      ],
      ...opts,
    });
  /** The error, which must be one line. */
  const oneLine = (make: () => unknown): string => {
    let err: unknown;
    try {
      make();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidInputError);
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  };

  it('passes the schema table and a TableV2 with those keys and GSIs (ALL projection)', () => {
    expect(build((s) => createJobsTable(s, 'Jobs'))).not.toThrow();
    expect(build((s) => v2(s))).not.toThrow();
  });

  it('fails with one line naming a missing GSI', () => {
    const message = oneLine(
      build((s) =>
        v2(s, {
          globalSecondaryIndexes: [{ indexName: lookup.name, partitionKey: { name: 'job_id', type: S } }],
        }),
      ),
    );
    expect(message).toMatch(
      /^invalid table: the jobs table S\/Jobs does not have the schema the archiver reads/,
    );
    expect(message).toContain('no GSI GSI_JobsByStatus_v2 (Plan queries it)');
    expect(message).not.toContain('GSI_JobLookup_v2');
  });

  it('fails naming wrong table keys, wrong GSI keys and attributes a projection leaves out', () => {
    const message = oneLine(
      build((s) =>
        v2(s, {
          partitionKey: { name: 'shop_id', type: S },
          sortKey: { name: 'sk', type: AttributeType.NUMBER },
          globalSecondaryIndexes: [
            { indexName: lookup.name, partitionKey: { name: 'jobId', type: S } },
            {
              indexName: byStatus.name,
              partitionKey: { name: byStatus.partitionKey, type: S },
              sortKey: { name: byStatus.sortKey, type: S },
              projectionType: ProjectionType.INCLUDE,
              nonKeyAttributes: ['job_id', 'completed_at'],
            },
          ],
        }),
      ),
    );
    expect(message).toContain('table keys are shop_id (S) + sk (N), need pk (S) + sk (S)');
    expect(message).toContain('GSI_JobLookup_v2 keys are jobId (S), need job_id (S)');
    expect(message).toMatch(
      /GSI_JobsByStatus_v2 does not project job_type, is_internal, .*initiator_user_id/,
    );
  });

  it('checks a (v1) Table too, GSIs added after it was made included', () => {
    const message = oneLine(
      build((s) => {
        const t = new Table(s, 'Jobs', {
          partitionKey: { name: 'pk', type: S },
          sortKey: { name: 'sk', type: S },
        });
        t.addGlobalSecondaryIndex({
          indexName: lookup.name,
          partitionKey: { name: lookup.partitionKey, type: S },
        });
        return t;
      }),
    );
    expect(message).toContain('no GSI GSI_JobsByStatus_v2');
  });

  it('cannot see an imported table: it is taken as it is (documented)', () => {
    expect(build((s) => TableV2.fromTableName(s, 'Jobs', 'prod-jobs') as TableV2)).not.toThrow();
  });
});
