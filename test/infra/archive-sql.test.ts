import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { RAW_TABLES } from '../../infra/construct/archive-sql';
import { createArchiveApp } from '../../infra/construct/archive-stack';
import { JobDetailsArchive } from '../../infra/construct/job-details-archive';
import { ArchiveStorageClass } from '../../infra/construct/props';
import {
  documentsViewSql,
  jobsViewSql,
  keyedSource,
  projectedSource,
  sharedSource,
} from '../../shared/archive/format';
import { DOCUMENTED_QUERIES, SQL_VIEWS } from '../../shared/sql/queries';
import { logicalId, statementsOfRole, useOutdirs } from './template-helpers';

/**
 * The `sql` prop: Glue database, the raw tables over the parts (projection on shop and month), the
 * four views of the flattening, the Athena workgroup and named queries — and nothing of it when off.
 */
const outdir = useOutdirs();
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

let template: Template;
let stack: Stack;
let nagError: unknown;
const DB = 'jda_test';
/** Athena's own `${…}` placeholders, not a JS template. */
const LOCATION_TEMPLATE = ['/job-details-cold/', '$', '{shop_id}/', '$', '{month}/'].join('');
const SHARED_LOCATION_TEMPLATE = ['/job-details-cold/_shared/', '$', '{month}/'].join('');

beforeAll(() => {
  const built = createArchiveApp({
    context: NO_BUNDLING,
    outdir: outdir(),
    archive: { sql: { databaseName: DB, workGroupName: 'jda-test', bytesScannedCutoffPerQuery: 1e9 } },
  });
  stack = built.stack;
  let assembly: CloudAssembly | undefined;
  try {
    assembly = built.app.synth(); // cdk-nag AwsSolutions: any unacknowledged finding throws
  } catch (err) {
    nagError = err;
  }
  if (!assembly) throw nagError;
  template = Template.fromStack(stack);
});

const viewText = (name: string): { originalSql: string; schema: string; columns: { name: string }[] } => {
  const tables = template.findResources('AWS::Glue::Table', { Properties: { TableInput: { Name: name } } });
  const t = Object.values(tables)[0] as { Properties: { TableInput: { ViewOriginalText: string } } };
  const m = /^\/\* Presto View: (.+) \*\/$/.exec(t.Properties.TableInput.ViewOriginalText);
  return JSON.parse(Buffer.from(m?.[1] ?? '', 'base64').toString('utf8'));
};

describe('sql prop on', () => {
  it('is nag-clean', () => {
    expect(nagError).toBeUndefined();
  });

  it('creates the database and the projected parts table (Hive JSON SerDe, gzip, shop injected, month by date)', () => {
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: DB } });
    template.hasResourceProperties('AWS::Glue::Table', {
      DatabaseName: DB,
      TableInput: {
        Name: RAW_TABLES.parts,
        TableType: 'EXTERNAL_TABLE',
        PartitionKeys: [
          { Name: 'shop_id', Type: 'string' },
          { Name: 'month', Type: 'string' },
        ],
        Parameters: Match.objectLike({
          'projection.enabled': 'true',
          'projection.shop_id.type': 'injected',
          'projection.month.type': 'date',
          'projection.month.format': 'yyyy-MM',
          'projection.month.range': '2024-01,NOW',
          'storage.location.template': Match.objectLike({
            'Fn::Join': ['', Match.arrayWith([LOCATION_TEMPLATE])],
          }),
          read_restored_glacier_objects: 'true',
        }),
        StorageDescriptor: Match.objectLike({
          SerdeInfo: { SerializationLibrary: 'org.apache.hive.hcatalog.data.JsonSerDe' },
          Columns: Match.arrayWith([
            Match.objectLike({ Name: 'type' }),
            Match.objectLike({ Name: 'details' }),
          ]),
        }),
      },
    });
    template.hasResourceProperties('AWS::Glue::Table', {
      TableInput: {
        Name: RAW_TABLES.fleet,
        PartitionKeys: Match.absent(),
        // A shared part's job line names its shop; own parts' lines read null (the key says it).
        StorageDescriptor: Match.objectLike({
          Columns: Match.arrayWith([Match.objectLike({ Name: 'shop_id', Type: 'string' })]),
        }),
      },
    });
  });

  it('creates the shared parts table: packed shop-months, projected on month only, shop from the line', () => {
    template.hasResourceProperties('AWS::Glue::Table', {
      DatabaseName: DB,
      TableInput: {
        Name: RAW_TABLES.shared,
        TableType: 'EXTERNAL_TABLE',
        PartitionKeys: [{ Name: 'month', Type: 'string' }],
        Parameters: Match.objectLike({
          'projection.enabled': 'true',
          'projection.month.type': 'date',
          'projection.month.format': 'yyyy-MM',
          'projection.month.range': '2024-01,NOW',
          'storage.location.template': Match.objectLike({
            'Fn::Join': ['', Match.arrayWith([SHARED_LOCATION_TEMPLATE])],
          }),
          read_restored_glacier_objects: 'true',
          compressionType: 'gzip',
        }),
        StorageDescriptor: Match.objectLike({
          Location: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith(['/job-details-cold/_shared/'])] }),
          SerdeInfo: { SerializationLibrary: 'org.apache.hive.hcatalog.data.JsonSerDe' },
          Columns: Match.arrayWith([
            Match.objectLike({ Name: 'type' }),
            Match.objectLike({ Name: 'row_omitted', Type: 'array<string>' }),
            Match.objectLike({ Name: 'shop_id', Type: 'string' }),
          ]),
        }),
      },
    });
    // Glue forbids a column named as a partition key: `parts` has shop_id only as its partition.
    const parts = Object.values(
      template.findResources('AWS::Glue::Table', { Properties: { TableInput: { Name: RAW_TABLES.parts } } }),
    )[0] as { Properties: { TableInput: { StorageDescriptor: { Columns: { Name: string }[] } } } };
    expect(parts.Properties.TableInput.StorageDescriptor.Columns.map((c) => c.Name)).not.toContain('shop_id');
  });

  it('stores the four views as Athena views whose SQL is the flattening view', () => {
    const expected: Record<string, string> = {
      [SQL_VIEWS.jobs]: jobsViewSql(projectedSource(RAW_TABLES.parts), sharedSource(RAW_TABLES.shared)),
      [SQL_VIEWS.documents]: documentsViewSql(
        projectedSource(RAW_TABLES.parts),
        sharedSource(RAW_TABLES.shared),
      ),
      [SQL_VIEWS.fleetJobs]: jobsViewSql(keyedSource(RAW_TABLES.fleet)),
      [SQL_VIEWS.fleetDocuments]: documentsViewSql(keyedSource(RAW_TABLES.fleet)),
    };
    for (const [name, sql] of Object.entries(expected)) {
      template.hasResourceProperties('AWS::Glue::Table', {
        TableInput: { Name: name, TableType: 'VIRTUAL_VIEW', Parameters: { presto_view: 'true' } },
      });
      const v = viewText(name);
      expect(v.originalSql).toBe(sql);
      expect(v.schema).toBe(DB);
    }
    // Per-shop views read the shop's own parts and its lines of the shared parts, never `_shared`
    // as a shop; fleet views read every part once (what they return: sql-athena-views.test.ts).
    const jobs = viewText(SQL_VIEWS.jobs).originalSql;
    expect(jobs.split('UNION ALL')).toHaveLength(2);
    // `_shared` left out by the object key: Athena allows only equality on the injected shop_id.
    expect(jobs).toContain(
      `FROM ${RAW_TABLES.parts} j\nWHERE j.type = 'job' AND regexp_extract(j."$path", '/job-details-cold/([^/]+)/', 1) <> '_shared'`,
    );
    expect(jobs).not.toMatch(/j\.shop_id\s*<>/);
    expect(jobs).toContain(`FROM ${RAW_TABLES.shared} j\nWHERE j.type = 'job' AND j.shop_id IS NOT NULL`);
    expect(viewText(SQL_VIEWS.documents).originalSql.split('UNION ALL')).toHaveLength(6);
    const fleet = viewText(SQL_VIEWS.fleetJobs).originalSql;
    expect(fleet).not.toContain('UNION ALL');
    expect(fleet).toMatch(/CASE WHEN regexp_extract\(j\."\$path", '[^']+', 1\) = '_shared' THEN j\.shop_id/);
  });

  it('runs queries in a workgroup with enforced, encrypted results and a scan limit; the documented queries are named queries', () => {
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'jda-test',
      WorkGroupConfiguration: Match.objectLike({
        EnforceWorkGroupConfiguration: true,
        BytesScannedCutoffPerQuery: 1e9,
        ResultConfiguration: Match.objectLike({ EncryptionConfiguration: { EncryptionOption: 'SSE_S3' } }),
      }),
    });
    for (const q of DOCUMENTED_QUERIES) {
      template.hasResourceProperties('AWS::Athena::NamedQuery', {
        Name: q.name,
        Database: DB,
        WorkGroup: 'jda-test',
        QueryString: q.sql,
      });
    }
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 7 })]) },
    });
  });
});

describe('grantSql', () => {
  it('grants the workgroup, this database’s tables, the parts and the results — nothing else', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const s = new Stack(app, 'S');
    const archive = new JobDetailsArchive(s, 'A', { sql: {} });
    const role = new Role(s, 'Analyst', { assumedBy: new ServicePrincipal('ec2.amazonaws.com') });
    archive.grantSql(role);
    const t = Template.fromStack(s);
    const st = statementsOfRole(t, logicalId(role, s));
    const actions = st.flatMap((x) => x.actions);
    expect(actions.every((a) => /^(athena|glue|s3):/.test(a))).toBe(true);
    expect(actions).not.toContain('s3:PutObject*');
    const glue = st.find((x) => x.actions.includes('glue:GetTable'));
    expect(glue?.resources.filter((r) => r.includes(':table/'))).toHaveLength(7);
    const parts = st.find(
      (x) => x.actions.includes('s3:GetObject') && x.resources.some((r) => r.endsWith('/job-details-cold/*')),
    );
    expect(parts?.actions).toEqual(['s3:GetObject']);
    expect(
      st.some(
        (x) => x.actions.includes('s3:PutObject') && x.resources.some((r) => r.includes('job-details')),
      ),
    ).toBe(false);
  });

  it('refuses without the prop', () => {
    const s = new Stack(new App({ context: NO_BUNDLING, outdir: outdir() }), 'S');
    const archive = new JobDetailsArchive(s, 'A');
    expect(() =>
      archive.grantSql(new Role(s, 'R', { assumedBy: new ServicePrincipal('ec2.amazonaws.com') })),
    ).toThrow(/sql prop/);
  });
});

describe('sql prop off, and bad values', () => {
  it('leaves nothing of it in the template', () => {
    const s = new Stack(new App({ context: NO_BUNDLING, outdir: outdir() }), 'S');
    new JobDetailsArchive(s, 'A', {});
    const t = Template.fromStack(s);
    for (const type of [
      'AWS::Glue::Database',
      'AWS::Glue::Table',
      'AWS::Athena::WorkGroup',
      'AWS::Athena::NamedQuery',
    ])
      t.resourceCountIs(type, 0);
    t.resourceCountIs('AWS::S3::Bucket', 1); // the details bucket only (access logs are opt-in)
  });

  it('warns that Glacier Flexible Retrieval / Deep Archive parts are skipped until restored', () => {
    const s = new Stack(new App({ context: NO_BUNDLING, outdir: outdir() }), 'S');
    new JobDetailsArchive(s, 'A', { sql: {}, archiveStorageClass: ArchiveStorageClass.DEEP_ARCHIVE });
    Annotations.fromStack(s).hasWarning('*', Match.stringLikeRegexp('Athena skips until restored'));
  });

  it.each([
    [{ bytesScannedCutoffPerQuery: 1000 }, /sql.bytesScannedCutoffPerQuery/],
    [{ databaseName: 'Bad-Name' }, /sql.databaseName/],
    [{ firstMonth: '2026-13' }, /sql.firstMonth/],
    [{ resultsExpireDays: 0 }, /sql.resultsExpireDays/],
  ])('refuses %j before any resource exists', (sql, message) => {
    const s = new Stack(new App({ context: NO_BUNDLING, outdir: outdir() }), 'S');
    expect(() => new JobDetailsArchive(s, 'A', { sql })).toThrow(message);
    expect(s.node.findAll().some((c) => c.node.id === 'Sql')).toBe(false);
  });
});
