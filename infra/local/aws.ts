import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import {
  BucketAlreadyOwnedByYou,
  CreateBucketCommand,
  HeadBucketCommand,
  ListBucketsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { createTableInput } from '../../shared/jobs/schema';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './env';

/**
 * The stack's own SDK clients. Built here (not via shared/clients.ts) because they carry the dummy
 * credentials explicitly: the stack must not depend on, or change, the caller's environment.
 */
export interface LocalClients {
  readonly ddb: DynamoDBClient;
  readonly s3: S3Client;
  destroy(): void;
}

/** `probe` clients make one fast attempt per call: readiness polling does the retrying. */
export const localClients = (endpoints: { dynamo: string; s3: string }, probe = false): LocalClients => {
  const common = {
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    ...(probe ? { maxAttempts: 1, requestHandler: { connectionTimeout: 1000, requestTimeout: 3000 } } : {}),
  };
  const ddb = new DynamoDBClient({ ...common, endpoint: endpoints.dynamo });
  const s3 = new S3Client({ ...common, endpoint: endpoints.s3, forcePathStyle: true });
  return {
    ddb,
    s3,
    destroy: () => {
      ddb.destroy();
      s3.destroy();
    },
  };
};

/** One readiness probe: DynamoDB answers ListTables and s3rver answers ListBuckets. */
export const answers = async (clients: LocalClients): Promise<boolean> => {
  try {
    await Promise.all([
      clients.ddb.send(new ListTablesCommand({ Limit: 1 })),
      clients.s3.send(new ListBucketsCommand({})),
    ]);
    return true;
  } catch {
    return false;
  }
};

/** Creates the jobs table if missing and waits until it is ACTIVE. */
export const ensureTable = async (ddb: DynamoDBClient, tableName: string): Promise<void> => {
  try {
    const { Table } = await ddb.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    try {
      await ddb.send(new CreateTableCommand(createTableInput(tableName)));
    } catch (createErr) {
      // Someone sharing this stack created it first.
      if (!(createErr instanceof ResourceInUseException)) throw createErr;
    }
  }
  await waitUntilTableExists(
    { client: ddb, maxWaitTime: 60, minDelay: 1, maxDelay: 2 },
    { TableName: tableName },
  );
};

/** Creates the bucket if missing. */
export const ensureBucket = async (s3: S3Client, bucketName: string): Promise<void> => {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucketName }));
    return;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 404) throw err;
  }
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucketName }));
  } catch (err) {
    if (
      !(err instanceof BucketAlreadyOwnedByYou) &&
      (err as { name?: string }).name !== 'BucketAlreadyExists'
    ) {
      throw err;
    }
  }
};
