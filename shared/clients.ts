import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
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
    new DynamoDBClient({ region: cfg.region, ...(cfg.dynamoEndpoint ? { endpoint: cfg.dynamoEndpoint } : {}) }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
