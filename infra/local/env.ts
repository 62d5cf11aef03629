import { resetConfig } from '../../shared/config';

/** What code needs to talk to a local stack. */
export interface LocalStackInfo {
  readonly dynamoEndpoint: string;
  readonly s3Endpoint: string;
  readonly tableName: string;
  readonly bucketName: string;
}

/** Dummy keys: DynamoDB Local (-sharedDb) ignores them; "S3RVER" is the key s3rver knows. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
export const LOCAL_REGION = 'us-east-1';

/**
 * The variables that point the AWS SDK (its own `AWS_ENDPOINT_URL_*` variables) and shared/config.ts
 * at a local stack.
 */
export const stackEnv = (info: LocalStackInfo): Record<string, string> => ({
  AWS_ENDPOINT_URL_DYNAMODB: info.dynamoEndpoint,
  AWS_ENDPOINT_URL_S3: info.s3Endpoint,
  AWS_REGION: LOCAL_REGION,
  // boto3 and aws-cli read only this one (the JavaScript SDK only AWS_REGION).
  AWS_DEFAULT_REGION: LOCAL_REGION,
  AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  ECOM_JOBS_TABLE: info.tableName,
  ECOM_JOB_DETAILS_BUCKET: info.bucketName,
});

/**
 * Sets `stackEnv(info)` into `process.env` and drops the cached config. Credentials already in the
 * environment are kept (both emulators accept any key); the dummy pair fills in only when none is
 * set, so the SDK never falls through to slow profile / instance-metadata lookups.
 */
export const applyStackEnv = (info: LocalStackInfo): void => {
  const hasCredentials = Boolean(process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY);
  for (const [k, v] of Object.entries(stackEnv(info))) {
    if (hasCredentials && (k === 'AWS_ACCESS_KEY_ID' || k === 'AWS_SECRET_ACCESS_KEY')) continue;
    process.env[k] = v;
  }
  resetConfig();
};
