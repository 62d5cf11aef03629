import { gunzipSync } from 'node:zlib';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { DuckDBAppender, DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import {
  COLD_PREFIX,
  DOCUMENT_COLUMNS,
  type FlatDocument,
  type FlatJob,
  flattenPart,
  JOB_COLUMNS,
  partPlace,
  type ViewColumn,
} from '../../shared/archive/format';
import { mapLimit } from '../../shared/concurrency';
import { InvalidInputError, JobArchiveError } from '../../shared/errors';
import { getObjectBytes } from '../../shared/s3/objects';
import { SQL_VIEWS } from '../../shared/sql/queries';
import { loadOptional } from './errors';

/**
 * The local SQL engine: the parts of a bucket, read through the S3 SDK and flattened by the one
 * flattening view (shared/archive/format/flatten.ts), loaded into an in-memory DuckDB under the names
 * the Athena views have. DuckDB never touches the network or the disk: no extension is installed or
 * loaded (JSON is not even needed — the rows arrive flattened), and external access is switched off
 * before any user SQL runs.
 */

/** Storage classes Athena skips (unrestored Glacier Flexible Retrieval / Deep Archive): skipped here too. */
export const UNREADABLE_CLASSES = new Set(['GLACIER', 'DEEP_ARCHIVE']);

export interface SqlLoadStats {
  readonly parts: number;
  readonly bytes: number;
  /** S3 requests: List pages + one GET per part. */
  readonly requests: number;
  readonly jobs: number;
  readonly documents: number;
  /** Parts in a class Athena cannot read, left out as Athena leaves them out. */
  readonly skippedGlacier: number;
}

export interface SqlResult {
  readonly columns: string[];
  readonly rows: Record<string, unknown>[];
}

const duckdb = (): typeof import('@duckdb/node-api') =>
  loadOptional('@duckdb/node-api', 'jobarchive sql', () => require('@duckdb/node-api'));

const SQL_TYPE = { varchar: 'VARCHAR', bigint: 'BIGINT' } as const;

const createTable = <R>(name: string, cols: readonly ViewColumn<R>[]): string =>
  `CREATE TABLE ${name} (${cols.map((c) => `${c.name} ${SQL_TYPE[c.type]}`).join(', ')})`;

const append = <R>(app: DuckDBAppender, cols: readonly ViewColumn<R>[], row: R): void => {
  for (const c of cols) {
    const v = row[c.name] as unknown;
    if (v === null || v === undefined) app.appendNull();
    else if (c.type === 'bigint') app.appendBigInt(BigInt(v as number));
    else app.appendVarchar(String(v));
  }
  app.endRow();
};

/** Plain JSON values from DuckDB's (BIGINT → bigint; within the safe range → number). */
const plain = (v: unknown): unknown =>
  typeof v === 'bigint'
    ? v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(v)
      : v.toString()
    : v;

export class LocalSqlEngine {
  /** Set by interrupt(): a statement that begins afterwards is interrupted as soon as it is pending. */
  private interrupted = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    readonly stats: SqlLoadStats,
  ) {}

  /** Loads every part under `job-details-cold/` of `bucket` (what the Athena tables read). */
  static async load(
    s3: S3Client,
    bucket: string,
    opts: { concurrency?: number } = {},
  ): Promise<LocalSqlEngine> {
    const { DuckDBInstance } = duckdb();
    let requests = 0;
    const keys: string[] = [];
    let skippedGlacier = 0;
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: COLD_PREFIX, ContinuationToken: token }),
      );
      requests++;
      for (const o of page.Contents ?? []) {
        if (!o.Key || !partPlace(o.Key)) continue;
        if (o.StorageClass && UNREADABLE_CLASSES.has(o.StorageClass)) skippedGlacier++;
        else keys.push(o.Key);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);

    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    });
    const conn = await instance.connect();
    try {
      await conn.run(createTable(SQL_VIEWS.jobs, JOB_COLUMNS));
      await conn.run(createTable(SQL_VIEWS.documents, DOCUMENT_COLUMNS));
      // Locally every part is at hand: the fleet views are the same rows.
      await conn.run(`CREATE VIEW ${SQL_VIEWS.fleetJobs} AS SELECT * FROM ${SQL_VIEWS.jobs}`);
      await conn.run(`CREATE VIEW ${SQL_VIEWS.fleetDocuments} AS SELECT * FROM ${SQL_VIEWS.documents}`);
      const jobsApp = await conn.createAppender(SQL_VIEWS.jobs);
      const docsApp = await conn.createAppender(SQL_VIEWS.documents);
      let bytes = 0;
      let jobs = 0;
      let documents = 0;
      // Parts are fetched concurrently and appended in key order (appenders are not concurrent).
      const parts = await mapLimit(keys, opts.concurrency ?? 8, async (key) => {
        const got = await getObjectBytes(s3, bucket, key);
        requests++;
        if (!got) throw new JobArchiveError(`part ${key} vanished while loading (a run deleting it?)`);
        bytes += got.size;
        const text = gunzipSync(got.bytes).toString('utf8');
        const lines = text.split('\n').filter((l) => l.length > 0);
        const place = partPlace(key) as NonNullable<ReturnType<typeof partPlace>>;
        return flattenPart(
          lines.map((l) => JSON.parse(l) as unknown),
          place,
          key,
        );
      });
      for (const p of parts) {
        for (const j of p.jobs) append<FlatJob>(jobsApp, JOB_COLUMNS, j);
        for (const d of p.documents) append<FlatDocument>(docsApp, DOCUMENT_COLUMNS, d);
        jobs += p.jobs.length;
        documents += p.documents.length;
      }
      jobsApp.closeSync();
      docsApp.closeSync();
      // From here on user SQL: no files, no network.
      await conn.run('SET enable_external_access = false');
      await conn.run('SET lock_configuration = true');
      return new LocalSqlEngine(instance, conn, {
        parts: keys.length,
        bytes,
        requests,
        jobs,
        documents,
        skippedGlacier,
      });
    } catch (err) {
      conn.closeSync();
      instance.closeSync();
      throw err;
    }
  }

  /** Runs one statement with `?` parameters; a statement DuckDB rejects is an InvalidInputError. */
  async query(sql: string, params: readonly string[] = []): Promise<SqlResult> {
    let reader: Awaited<ReturnType<DuckDBConnection['runAndReadAll']>>;
    try {
      // DuckDB clears an interrupt when a statement begins, and one sent while the statement was being
      // prepared finds nothing to stop: an interrupt is kept (`interrupted`) and sent again once the
      // statement is pending, so a Ctrl-C in that window is not lost (the statement would run on).
      const pending = await this.conn.start(sql, params as DuckDBValue[]);
      if (this.interrupted) this.conn.interrupt();
      reader = await pending.readAll();
    } catch (err) {
      throw new InvalidInputError('sql', (err as Error).message);
    }
    const columns = reader.columnNames();
    const rows = reader
      .getRowObjects()
      .map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, plain(v)])));
    return { columns, rows };
  }

  /** Stops the statement running or about to run (its query() then rejects); DuckDB checks between its steps. */
  interrupt(): void {
    this.interrupted = true;
    this.conn.interrupt();
  }

  close(): void {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
