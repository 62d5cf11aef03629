import type { S3Client } from '@aws-sdk/client-s3';
import type { SFNClient } from '@aws-sdk/client-sfn';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoClientFrom, s3ClientFrom, sfnClientFrom } from '../../shared/clients';
import type { Config } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';

/**
 * Everything a command talks to. main.ts builds it from the embedded stack or from the environment
 * (`--aws`, or AWS_ENDPOINT_URL_* already set); tests build it from the jest stack's clients and a
 * fresh table/bucket. Commands never start a stack and never read the environment themselves.
 */
export interface CliContext {
  readonly ddb: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly table: string;
  readonly bucket: string;
  /** Settings (restore tier, read concurrency, TTL days …) as parsed by shared/config.ts. */
  readonly cfg: Config;
  /** Where the context points, for messages: `embedded stack in .local`, `AWS`, an endpoint. */
  readonly target: string;
  /** The Step Functions client, built on first use (only `run --state-machine-arn` needs one). */
  sfn(): SFNClient;
  /** Wall clock; tests pin it. */
  now(): Date;
  /**
   * Aborted by main.ts on SIGINT/SIGTERM before it stops the stack and exits: work that holds the
   * process in native code (a DuckDB statement) stops there, or the exit would wait for it.
   */
  readonly interrupted?: AbortSignal;
}

export interface ContextParts {
  readonly ddb: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly table: string;
  readonly bucket: string;
  readonly cfg: Config;
  readonly target?: string;
  readonly sfn?: () => SFNClient;
  readonly now?: () => Date;
}

/** A context from clients someone else owns (tests: the jest stack's clients). */
export const makeContext = (p: ContextParts): CliContext => {
  let sfn: SFNClient | undefined;
  return {
    ddb: p.ddb,
    s3: p.s3,
    table: p.table,
    bucket: p.bucket,
    cfg: p.cfg,
    target: p.target ?? 'injected clients',
    sfn: () => {
      sfn ??= p.sfn ? p.sfn() : sfnClientFrom(p.cfg);
      return sfn;
    },
    now: p.now ?? (() => new Date()),
  };
};

/** Which named resources a command uses (a missing one it needs is a usage error). */
export interface ResourceNeeds {
  readonly table: boolean;
  readonly bucket: boolean;
}

export interface OwnedContext extends CliContext {
  /** Destroys the clients this context built (their keep-alive sockets would hold the process open). */
  close(): void;
}

/**
 * A context whose clients are built here from settings (shared/clients.ts). `table` / `bucket` win
 * over ECOM_JOBS_TABLE / ECOM_JOB_DETAILS_BUCKET; neither set is a usage error (exit 2).
 */
export const contextFromConfig = (
  cfg: Config,
  names: { table?: string | undefined; bucket?: string | undefined },
  target: string,
  needs: ResourceNeeds = { table: true, bucket: true },
): OwnedContext => {
  // A command that does not touch a resource (run --state-machine-arn) gets '' instead of an error.
  const table = names.table ?? cfg.jobsTable ?? '';
  const bucket = names.bucket ?? cfg.detailsBucket ?? '';
  if (needs.table && !table) {
    throw new InvalidInputError('--table', 'is required here (or set ECOM_JOBS_TABLE)');
  }
  if (needs.bucket && !bucket) {
    throw new InvalidInputError('--bucket', 'is required here (or set ECOM_JOB_DETAILS_BUCKET)');
  }
  const ddb = dynamoClientFrom(cfg);
  const s3 = s3ClientFrom(cfg);
  let sfn: SFNClient | undefined;
  const ctx = makeContext({ ddb, s3, table, bucket, cfg, target, sfn: () => (sfn ??= sfnClientFrom(cfg)) });
  return {
    ...ctx,
    close: () => {
      ddb.destroy();
      s3.destroy();
      sfn?.destroy();
    },
  };
};

/** Which kind of target the flags and settings ask for; main.ts starts an embedded stack only for `embedded`. */
export const targetKind = (
  cfg: Pick<Config, 's3Endpoint' | 'dynamoEndpoint'>,
  aws: boolean,
): 'embedded' | 'external' =>
  aws || cfg.s3Endpoint !== undefined || cfg.dynamoEndpoint !== undefined ? 'external' : 'embedded';
