import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type CliContext, makeContext } from '../../infra/cli/context';
import { LocalStackError } from '../../infra/local/errors';
import { readHandoff, type StackHandoff } from '../../infra/local/handoff';
import { dynamoClientFrom, s3ClientFrom } from '../../shared/clients';
import { type Config, parseConfig } from '../../shared/config';
import { createTableInput } from '../../shared/jobs/schema';

/**
 * Helpers for integration tests against the local stack the jest global setup started. Clients
 * come from shared/clients.ts with settings parsed from the environment, like the entry points do;
 * they refuse to run without local endpoints so a test can never touch real AWS.
 */
const localConfig = (): Config => {
  const cfg = parseConfig(process.env);
  if (!cfg.s3Endpoint || !cfg.dynamoEndpoint) {
    throw new LocalStackError(
      'AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB are not set: integration tests need the local stack of test/setup/global-setup.ts (run them through jest)',
    );
  }
  return cfg;
};

/** A new S3 client for the local s3rver (path-style). */
export const testS3 = (): S3Client => s3ClientFrom(localConfig());

/** A new document client for the local DynamoDB. */
export const testDdb = (): DynamoDBDocumentClient => dynamoClientFrom(localConfig());

// One client pair per test file for the helpers below.
let s3: S3Client | undefined;
let ddb: DynamoDBDocumentClient | undefined;

/** Unique, valid for both S3 buckets and DynamoDB tables: lower-case letters, digits, '-'. */
const uniqueName = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`;

/** Creates a new, empty, uniquely named bucket. */
export const freshBucket = async (): Promise<string> => {
  s3 ??= testS3();
  const name = uniqueName('test');
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  return name;
};

/** Creates a new, empty jobs table (shared/jobs/schema.ts) and waits until it is ACTIVE. */
export const freshTable = async (): Promise<string> => {
  ddb ??= testDdb();
  const client = ddb;
  const name = uniqueName('jobs');
  await client.send(new CreateTableCommand(createTableInput(name)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    const gsisActive = (Table?.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && gsisActive) return name;
    if (Date.now() > deadline) throw new LocalStackError(`table ${name} is not ACTIVE after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** The stack of this jest run (data dir, endpoints, default table and bucket). */
export const sharedStack = (): StackHandoff => {
  const h = readHandoff();
  if (!h) throw new LocalStackError('no local stack handoff found: run integration tests through jest');
  return h;
};

/** A CLI context on a fresh table and bucket (`jobarchive run` wires its handlers to them). */
export const freshCliContext = async (now: () => Date): Promise<CliContext> => {
  const table = await freshTable();
  const bucket = await freshBucket();
  return makeContext({ ddb: testDdb(), s3: testS3(), table, bucket, cfg: parseConfig(process.env), now });
};
