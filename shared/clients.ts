import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from './config';

/**
 * Builds AWS clients from settings. Only entry points (handlers, CLI, local stack, tests) call this;
 * library code always receives clients as arguments.
 */
export const s3ClientFrom = (cfg: Pick<Config, 'region' | 's3Endpoint'>): S3Client =>
  new S3Client({
    region: cfg.region,
    ...(cfg.s3Endpoint ? { endpoint: cfg.s3Endpoint, forcePathStyle: true } : {}),
  });

export const dynamoClientFrom = (cfg: Pick<Config, 'region' | 'dynamoEndpoint'>): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: cfg.region,
      ...(cfg.dynamoEndpoint ? { endpoint: cfg.dynamoEndpoint } : {}),
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );

/** Step Functions client (the CLI follows real executions with it); endpoint via the SDK's own AWS_ENDPOINT_URL_SFN. */
export const sfnClientFrom = (cfg: Pick<Config, 'region'>): SFNClient =>
  new SFNClient({ region: cfg.region });
