import { InvalidInputError } from '../../shared/errors';
import { DOCUMENTED_QUERIES, documentedQuery } from '../../shared/sql/queries';
import { LocalSqlEngine, type SqlLoadStats, type SqlResult } from '../local/sql-engine';
import { boolFlag, type CommandSpec, type Flags, positionalArgs, stringFlag, UsageError } from './args';
import type { CliContext } from './context';
import { formatBytes, type Output, printJson } from './output';

export const sqlSpec: CommandSpec = {
  name: 'sql',
  short: 'SQL over the archived parts (jobs, job_documents views) on a local engine',
  summary:
    'Runs one SQL statement over the archive on an embedded DuckDB: every part under job-details-cold/ is read through S3 and flattened into the views the Athena workgroup has (jobs, job_documents, fleet_jobs, fleet_job_documents). See docs/search-and-sql.md.',
  positionals: {
    value: '[SQL] [PARAM ...]',
    help: 'the statement (omit with --query), then a value for each ? in order',
  },
  options: {
    query: { type: 'string', value: 'NAME', help: 'run a documented query (--list shows them)' },
    list: { type: 'boolean', help: 'print the documented queries and exit' },
  },
  notes: [
    'Cost: 1 List per 1,000 parts + 1 GET per part (every part is read: the local engine has no partitions).',
    'Parts in GLACIER / DEEP_ARCHIVE are skipped, as Athena skips them.',
  ],
};

export interface SqlOptions {
  readonly sql: string | null;
  readonly queryName: string | null;
  readonly params: readonly string[];
  readonly list: boolean;
  readonly json: boolean;
}

export const parseSqlOptions = (flags: Flags): SqlOptions => {
  const list = boolFlag(flags, 'list');
  const json = boolFlag(flags, 'json');
  const name = stringFlag(flags, 'query');
  const args = positionalArgs(flags);
  if (list) return { sql: null, queryName: null, params: [], list, json };
  if (name !== undefined) {
    const q = documentedQuery(name);
    if (!q) {
      throw new InvalidInputError(
        '--query',
        `unknown query ${JSON.stringify(name)}; one of ${DOCUMENTED_QUERIES.map((d) => d.name).join(', ')}`,
      );
    }
    if (args.length !== q.params.length) {
      throw new InvalidInputError(
        '--query',
        `${name} takes ${q.params.length} parameters (${q.params.map((p) => p.name).join(', ')}), got ${args.length}`,
      );
    }
    return { sql: q.sql, queryName: name, params: args, list, json };
  }
  const [sql, ...params] = args;
  if (sql === undefined || sql.trim() === '')
    throw new InvalidInputError('SQL', 'is required (or --query NAME)');
  return { sql, queryName: null, params, list, json };
};

export interface SqlCommandResult extends SqlResult {
  readonly load: SqlLoadStats;
}

const cell = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

/** A plain text table: header, rule, rows. */
export const formatTable = (r: SqlResult): string[] => {
  const widths = r.columns.map((c) => Math.max(c.length, ...r.rows.map((row) => cell(row[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [
    line(r.columns),
    line(widths.map((w) => '-'.repeat(w))),
    ...r.rows.map((row) => line(r.columns.map((c) => cell(row[c])))),
  ];
};

export const sqlCommand = async (
  ctx: CliContext,
  o: SqlOptions,
  io: Output,
): Promise<SqlCommandResult | null> => {
  if (o.list) {
    if (o.json) printJson(io, DOCUMENTED_QUERIES);
    else {
      for (const q of DOCUMENTED_QUERIES) {
        io.out(`-- ${q.name}: ${q.title} (${q.params.map((p) => p.name).join(', ')})`);
        io.out(`${q.sql};`);
        io.out('');
      }
    }
    return null;
  }
  const engine = await LocalSqlEngine.load(ctx.s3, ctx.bucket, { concurrency: ctx.cfg.readConcurrency });
  // A statement can run for ever (a recursive CTE without an end): an interrupt stops it in DuckDB,
  // without which the process could not exit (DuckDB's threads finish their statement first).
  const interrupt = (): void => engine.interrupt();
  ctx.interrupted?.addEventListener('abort', interrupt, { once: true });
  try {
    // Interrupted while the parts loaded: no statement starts (the exit would wait for it).
    ctx.interrupted?.throwIfAborted();
    if (!o.json) {
      io.err(
        `sql: ${engine.stats.parts} parts loaded (${engine.stats.jobs} archived jobs); running the statement (Ctrl-C stops it)`,
      );
    }
    const result = await engine.query(o.sql ?? '', o.params).catch((err: unknown) => {
      // A statement DuckDB rejects is a bad argument (exit 2), found only once the parts are loaded.
      if (err instanceof InvalidInputError) throw new UsageError('SQL', err.reason);
      throw err;
    });
    const load = engine.stats;
    if (o.json) printJson(io, { ...result, load });
    else {
      for (const l of formatTable(result)) io.out(l);
      io.err(
        `${result.rows.length} rows; read ${load.parts} parts (${formatBytes(load.bytes)}, ${load.requests} S3 requests), ${load.jobs} archived jobs` +
          (load.skippedGlacier > 0
            ? `; ${load.skippedGlacier} parts in Glacier Flexible/Deep Archive skipped (restore them to query)`
            : ''),
      );
    }
    return { ...result, load };
  } finally {
    ctx.interrupted?.removeEventListener('abort', interrupt);
    engine.close();
  }
};
