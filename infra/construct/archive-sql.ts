import { Duration, Names, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { CfnNamedQuery, CfnWorkGroup } from 'aws-cdk-lib/aws-athena';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type IBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import {
  DOCUMENT_COLUMNS,
  documentsViewSql,
  JOB_COLUMNS,
  jobsViewSql,
  keyedSource,
  projectedSource,
  SHARED,
  sharedSource,
  type ViewColumn,
} from '../../shared/archive/format';
import { DOCUMENTED_QUERIES, SQL_VIEWS } from '../../shared/sql/queries';
import { PREFIX } from './details-bucket';
import { acknowledge } from './nag';
import { grantObjects } from './object-grants';

/**
 * SQL over the archive on Athena (opt-in: JobDetailsArchiveProps.sql). Three raw Glue tables over the
 * JSONL.gz parts (Hive JSON SerDe; gzip members are read back to back like `gzip -dc`) and four views
 * of the flattening (shared/archive/format/flatten.ts) over them; a workgroup with encrypted results
 * and a per-query scan limit; the documented queries as named queries. docs/search-and-sql.md.
 *
 * Pruning: `parts` is partitioned by projection on the key layout `job-details-cold/{shop}/{month}/`:
 * `shop_id` is `injected` (every query of `jobs` / `job_documents` must say `shop_id = …`) and `month`
 * a `yyyy-MM` date range, so a per-shop query lists and reads only that shop's months. Packed
 * shop-months lie in shared parts under `_shared/{month}/` (docs/archive-format.md, "Shared parts"):
 * `parts_shared` is projected on month only and its job lines name their shop (`shop_id`, a data
 * column), so the per-shop views are own parts UNION ALL the shop's lines of the months' shared parts.
 * Shops come before months in the key, so a fleet-wide query cannot be pruned by month through
 * projection: `parts_fleet` has no partitions and `fleet_*` views read every part (bounded by the scan
 * limit), taking a shared part's lines' shop from the line.
 */

/** What ArchiveSql is made of: the `sql` prop as resolved (props-validation.ts) and the parts' bucket. */
export interface ArchiveSqlResourceProps {
  /** Glue database of the tables and views. */
  readonly databaseName: string;
  /** Athena workgroup the queries run in. */
  readonly workGroupName: string;
  /** Bytes one query may scan before Athena cancels it. */
  readonly bytesScannedCutoffPerQuery: number;
  /** Days query results are kept. */
  readonly resultsExpireDays: number;
  /** First month (`yyyy-mm`) the month projection enumerates. */
  readonly firstMonth: string;
  /** The details bucket (the parts under `job-details-cold/`). */
  readonly bucket: IBucket;
  /**
   * Removal policy of the results bucket.
   * @default - the CDK default (RETAIN)
   */
  readonly removalPolicy?: RemovalPolicy;
}

export const RAW_TABLES = { parts: 'parts', shared: 'parts_shared', fleet: 'parts_fleet' } as const;

const META_FIELDS = [
  ['created_at', 'string'],
  ['started_at', 'string'],
  ['completed_at', 'string'],
  ['job_type', 'string'],
  ['platform', 'string'],
  ['total_items', 'bigint'],
  ['processed_items', 'bigint'],
  ['failed_items', 'bigint'],
  ['skipped_items', 'bigint'],
  ['conflict_items', 'bigint'],
  ['retry_count', 'bigint'],
  ['error_message', 'string'],
] as const;
const struct = (fields: readonly (readonly [string, string])[]) =>
  `struct<${fields.map(([n, t]) => `${n}:${t}`).join(',')}>`;

/**
 * The part lines as the SerDe reads them: only what the views use. Header and platform-data lines
 * are rows too (`type` tells them apart; the views keep `type = 'job'`). Keys of other lines or
 * fields are ignored by the SerDe; absent ones read as null.
 */
export const RAW_COLUMNS: readonly CfnTable.ColumnProperty[] = [
  { name: 'type', type: 'string', comment: "part | platform_data | job (the views read 'job')" },
  { name: 'job_id', type: 'string' },
  { name: 'platform_data_ref', type: 'string', comment: 'the platform_data line of the same part' },
  {
    name: 'job',
    type: struct([['status', 'string'], ...META_FIELDS]),
    comment: 'meta where it differs from row',
  },
  {
    name: 'row',
    type: struct([['job_status', 'string'], ...META_FIELDS]),
    comment: 'the archived job row (less implied fields)',
  },
  {
    name: 'row_omitted',
    type: 'array<string>',
    comment: 'row attributes left out as implied: pk, sk, job_id, or equal to the row completed_at',
  },
  {
    name: 'details',
    type: 'struct<chunk_ids:array<string>,failed:map<string,array<string>>,skipped:map<string,array<string>>,conflict:map<string,array<struct<doc_id:string>>>>',
  },
];

/**
 * Tables whose location holds shared parts read `shop_id` from the lines too (job lines of shared
 * parts carry it; in `parts` it is the partition column, and Glue forbids a column of the same name).
 */
const SHOP_COLUMN: CfnTable.ColumnProperty = {
  name: 'shop_id',
  type: 'string',
  comment: 'the line shop (headers; job lines of shared parts); null on other lines',
};

const TEXT_JSON_GZ = {
  inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
  outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
  serdeInfo: { serializationLibrary: 'org.apache.hive.hcatalog.data.JsonSerDe' },
};

/** Athena's encoding of a view in the Glue catalog (what `CREATE VIEW` stores). */
export const prestoView = <R>(
  database: string,
  sql: string,
  columns: readonly ViewColumn<R>[],
): Pick<CfnTable.TableInputProperty, 'viewOriginalText' | 'viewExpandedText' | 'parameters'> & {
  columns: CfnTable.ColumnProperty[];
} => {
  const doc = {
    originalSql: sql,
    catalog: 'awsdatacatalog',
    schema: database,
    columns: columns.map((c) => ({ name: c.name, type: c.type })),
  };
  return {
    viewOriginalText: `/* Presto View: ${Buffer.from(JSON.stringify(doc)).toString('base64')} */`,
    viewExpandedText: '/* Presto View */',
    parameters: { presto_view: 'true', comment: 'Presto View' },
    columns: columns.map((c) => ({ name: c.name, type: c.type === 'varchar' ? 'string' : 'bigint' })),
  };
};

/**
 * SQL over the archive on Athena: the Glue database with the raw tables and flattened views, the
 * workgroup and its results bucket, the documented named queries. Made by JobDetailsArchive for its
 * `sql` prop (`archive.sql`); grant queries with `archive.grantSql(...)`.
 */
export class ArchiveSql extends Construct {
  readonly database: CfnDatabase;
  readonly workGroup: CfnWorkGroup;
  readonly resultsBucket: Bucket;
  readonly databaseName: string;
  readonly workGroupName: string;
  private readonly tableNames: string[] = [];

  constructor(
    scope: Construct,
    id: string,
    private readonly o: ArchiveSqlResourceProps,
  ) {
    super(scope, id);
    const stack = Stack.of(this);
    this.databaseName = o.databaseName;
    this.workGroupName = o.workGroupName;
    this.database = new CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: {
        name: o.databaseName,
        description: 'job-details-archive parts and their flattened views (docs/search-and-sql.md)',
      },
    });

    const cold = `s3://${o.bucket.bucketName}/${PREFIX.cold}`;
    // Glacier Flexible Retrieval / Deep Archive parts are skipped by Athena unless restored; this
    // makes restored ones readable (unrestored ones stay skipped: results then miss their jobs).
    const common = { classification: 'json', compressionType: 'gzip', read_restored_glacier_objects: 'true' };
    this.table('PartsTable', {
      name: RAW_TABLES.parts,
      description:
        'Archive part lines, one shop per query (partition projection: shop_id injected, month by date)',
      tableType: 'EXTERNAL_TABLE',
      partitionKeys: [
        { name: 'shop_id', type: 'string' },
        { name: 'month', type: 'string' },
      ],
      parameters: {
        ...common,
        'projection.enabled': 'true',
        'projection.shop_id.type': 'injected',
        'projection.month.type': 'date',
        'projection.month.format': 'yyyy-MM',
        'projection.month.range': `${o.firstMonth},NOW`,
        'projection.month.interval': '1',
        'projection.month.interval.unit': 'MONTHS',
        'storage.location.template': `${cold}\${shop_id}/\${month}/`,
      },
      storageDescriptor: { columns: [...RAW_COLUMNS], location: cold, ...TEXT_JSON_GZ },
    });
    const shared = `${cold}${SHARED}/`;
    this.table('SharedPartsTable', {
      name: RAW_TABLES.shared,
      description: 'Shared part lines (packed shop-months) of a month (partition projection: month by date)',
      tableType: 'EXTERNAL_TABLE',
      partitionKeys: [{ name: 'month', type: 'string' }],
      parameters: {
        ...common,
        'projection.enabled': 'true',
        'projection.month.type': 'date',
        'projection.month.format': 'yyyy-MM',
        'projection.month.range': `${o.firstMonth},NOW`,
        'projection.month.interval': '1',
        'projection.month.interval.unit': 'MONTHS',
        'storage.location.template': `${shared}\${month}/`,
      },
      storageDescriptor: { columns: [...RAW_COLUMNS, SHOP_COLUMN], location: shared, ...TEXT_JSON_GZ },
    });
    this.table('FleetPartsTable', {
      name: RAW_TABLES.fleet,
      description: 'Archive part lines of every shop and month (no partitions: reads every part)',
      tableType: 'EXTERNAL_TABLE',
      parameters: common,
      storageDescriptor: { columns: [...RAW_COLUMNS, SHOP_COLUMN], location: cold, ...TEXT_JSON_GZ },
    });
    const perShop = [projectedSource(RAW_TABLES.parts), sharedSource(RAW_TABLES.shared)];
    const views: [string, string, string, readonly ViewColumn<never>[]][] = [
      ['JobsView', SQL_VIEWS.jobs, jobsViewSql(...perShop), JOB_COLUMNS as never],
      ['DocumentsView', SQL_VIEWS.documents, documentsViewSql(...perShop), DOCUMENT_COLUMNS as never],
      [
        'FleetJobsView',
        SQL_VIEWS.fleetJobs,
        jobsViewSql(keyedSource(RAW_TABLES.fleet)),
        JOB_COLUMNS as never,
      ],
      [
        'FleetDocumentsView',
        SQL_VIEWS.fleetDocuments,
        documentsViewSql(keyedSource(RAW_TABLES.fleet)),
        DOCUMENT_COLUMNS as never,
      ],
    ];
    for (const [cid, name, sql, columns] of views) {
      const v = prestoView(o.databaseName, sql, columns);
      this.table(cid, {
        name,
        tableType: 'VIRTUAL_VIEW',
        viewOriginalText: v.viewOriginalText,
        viewExpandedText: v.viewExpandedText,
        parameters: v.parameters,
        storageDescriptor: { columns: v.columns, serdeInfo: {} },
      });
    }

    this.resultsBucket = new Bucket(this, 'ResultsBucket', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        { id: 'expire-query-results', expiration: Duration.days(o.resultsExpireDays) },
        { id: 'abort-incomplete-multipart-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: o.removalPolicy,
    });
    acknowledge(
      this.resultsBucket,
      'AwsSolutions-S1',
      'Athena query results only, expired after days; every access to them is an Athena or S3 API call CloudTrail records',
    );

    this.workGroup = new CfnWorkGroup(this, 'WorkGroup', {
      name: o.workGroupName,
      description: 'SQL over the job-details archive (docs/search-and-sql.md)',
      state: 'ENABLED',
      // Lets a stack delete remove the workgroup with its named queries and query history.
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: o.bytesScannedCutoffPerQuery,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: `s3://${this.resultsBucket.bucketName}/results/`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
          expectedBucketOwner: stack.account,
        },
      },
    });
    for (const q of DOCUMENTED_QUERIES) {
      const nq = new CfnNamedQuery(this, `Query-${q.name}`, {
        name: q.name,
        description: `${q.title}; parameters: ${q.params.map((p) => p.name).join(', ')}`,
        database: o.databaseName,
        workGroup: o.workGroupName,
        queryString: q.sql,
      });
      nq.node.addDependency(this.workGroup);
      nq.node.addDependency(this.database);
    }
  }

  private table(id: string, input: CfnTable.TableInputProperty): void {
    const t = new CfnTable(this, id, {
      catalogId: Stack.of(this).account,
      databaseName: this.databaseName,
      tableInput: input,
    });
    t.node.addDependency(this.database);
    this.tableNames.push(input.name as string);
  }

  /**
   * Querying through the workgroup: Athena query calls on it, Glue reads of this database's tables,
   * GetObject + prefix-scoped ListBucket on the parts, and the results bucket.
   */
  grantQuery(grantee: IGrantable): Grant {
    const stack = Stack.of(this);
    const glue = (resource: string) => stack.formatArn({ service: 'glue', resource });
    const athena = Grant.addToPrincipal({
      grantee,
      actions: [
        'athena:StartQueryExecution',
        'athena:GetQueryExecution',
        'athena:GetQueryResults',
        'athena:StopQueryExecution',
        'athena:GetWorkGroup',
        'athena:ListNamedQueries',
        'athena:GetNamedQuery',
        'athena:BatchGetNamedQuery',
      ],
      resourceArns: [
        stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: this.workGroupName }),
      ],
    });
    const catalog = Grant.addToPrincipal({
      grantee,
      actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetPartition', 'glue:GetPartitions'],
      resourceArns: [
        glue('catalog'),
        glue(`database/${this.databaseName}`),
        ...this.tableNames.map((t) => glue(`table/${this.databaseName}/${t}`)),
      ],
    });
    const location = Grant.addToPrincipal({
      grantee,
      actions: ['s3:GetBucketLocation'],
      resourceArns: [this.o.bucket.bucketArn, this.resultsBucket.bucketArn],
    });
    const results = Grant.addToPrincipal({
      grantee,
      actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
      resourceArns: [this.resultsBucket.arnForObjects('results/*')],
    }).combine(
      Grant.addToPrincipal({
        grantee,
        actions: ['s3:ListBucket', 's3:ListBucketMultipartUploads'],
        resourceArns: [this.resultsBucket.bucketArn],
      }),
    );
    return athena
      .combine(catalog)
      .combine(location)
      .combine(results)
      .combine(grantObjects(grantee, this.o.bucket, 'cold', ['read']));
  }
}

/** A Glue / Athena name from the construct's unique id (lower case, `_` for anything else). */
export const defaultSqlNames = (scope: Construct): { databaseName: string; workGroupName: string } => {
  const id = Names.uniqueId(scope)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '_');
  return {
    databaseName: `job_details_archive_${id}`.slice(0, 255),
    workGroupName: `job-details-archive-${id}`.slice(0, 128),
  };
};
