/**
 * The error names the state machine's Retry rules name. Plain data apart from the CDK definition
 * (archiver-state-machine.ts), so the local runner can tell expected errors from crashes without CDK.
 */
/** Errors the Lambda service itself raises around an invocation. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
] as const;

/** Error names a step may throw that are worth retrying (AWS SDK throttling/5xx, our lost races). */
export const TRANSIENT_ERRORS = [
  'ThrottlingException',
  'SlowDown',
  'InternalError',
  'ServiceUnavailable',
  'ConcurrentModificationError',
  'RequestTimeout',
  'TimeoutError',
  // DynamoDB throttling/5xx once the SDK's own retries are spent (plan's GSI Query, archive's BatchGetItem).
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
] as const;
