import type { RestoreTier } from '../../shared/config';

/**
 * Published list prices the cost model uses: AWS us-east-1, as listed on the S3, Lambda, Step
 * Functions, DynamoDB and CloudWatch pricing pages in November 2026 (`PRICES_TAKEN`). The only figures in the
 * model that are not measured; override any of them with `jobarchive cost --prices FILE` (a JSON
 * object with the same keys), e.g. for another region.
 */
export const PRICES_TAKEN = '2026-11 (us-east-1 list prices)';

export const STORAGE_CLASSES = ['GLACIER_IR', 'GLACIER', 'DEEP_ARCHIVE'] as const;
export type StorageClass = (typeof STORAGE_CLASSES)[number];

export interface Prices {
  /** $ per GB-month. */
  readonly standardGbMonth: number;
  readonly classGbMonth: Readonly<Record<StorageClass, number>>;
  /** $ per request: PUT, COPY, POST, LIST (and multipart calls) on Standard. */
  readonly putRequest: number;
  /** $ per request: GET, HEAD (and all other) on Standard. */
  readonly getRequest: number;
  /** $ per GET of an object in the class (Glacier IR bills GETs higher). */
  readonly classGetRequest: Readonly<Record<StorageClass, number>>;
  /** $ per GB read without a restore (Glacier IR); 0 for the classes that restore first (`restore`). */
  readonly classRetrievalGb: Readonly<Record<StorageClass, number>>;
  /**
   * Classes whose objects must be restored before a GET: $ per restore request and per GB restored,
   * by retrieval tier (S3 pricing, "Requests & data retrievals"). A tier the class does not offer is
   * absent (Deep Archive has no Expedited). The restored copy is billed in Standard for its days.
   */
  readonly restore: Readonly<
    Partial<Record<StorageClass, Readonly<Partial<Record<RestoreTier, { request: number; gb: number }>>>>>
  >;
  /** $ per object moved into the class by a lifecycle rule. */
  readonly transitionRequest: Readonly<Record<StorageClass, number>>;
  /** Bytes billed at least per object (Glacier IR: 128 KB). */
  readonly classMinObjectBytes: Readonly<Record<StorageClass, number>>;
  /** Per-object overhead the classes bill (Flexible / Deep Archive: 32 KB in the class + 8 KB in Standard). */
  readonly classOverheadBytes: Readonly<Record<StorageClass, { inClass: number; inStandard: number }>>;
  /** Days billed at least (deleting earlier bills the rest). */
  readonly classMinDays: Readonly<Record<StorageClass, number>>;
  /** Lambda (Arm: the construct deploys ARM_64, infra/construct/step-functions.ts): $ per request, $ per GB-second. */
  readonly lambdaRequest: number;
  readonly lambdaGbSecond: number;
  /**
   * Step Functions STANDARD: $ per state transition. A Distributed Map bills one more for each child
   * execution it starts, beside the child's own states (Step Functions Developer Guide, "Transitions").
   */
  readonly stateTransition: number;
  /** EventBridge Scheduler: $ per scheduled invocation (its 14 million free a month are an account's, not counted). */
  readonly schedulerInvocation: number;
  /** DynamoDB on-demand: $ per read request unit. */
  readonly dynamodbReadUnit: number;
  /** CloudWatch: $ per standard-resolution alarm per month. */
  readonly alarmMonth: number;
  /** CloudWatch: $ per custom metric per month (first 10,000 metrics). */
  readonly customMetricMonth: number;
  /**
   * Not a price: the median latency (ms) of one S3 request of < 512 KB from Lambda. AWS's S3
   * performance guidelines ("Timeouts and Retries for Latency-Sensitive Applications"): "median
   * latencies are often in the tens of milliseconds range". Lambda bills the wait.
   */
  readonly s3LatencyMs: number;
  /** Not a price: the latency (ms) of one DynamoDB request ("single-digit millisecond"; 10 to be safe). */
  readonly dynamodbLatencyMs: number;
  /**
   * Not a price: bytes of one S3 server access log record of a request. The details bucket logs every
   * request, and each key a multi-object delete removes, into its access-log bucket, kept in Standard.
   * An estimate (s3rver writes no access logs): AWS's documented example record is 564 bytes with the
   * console's user agent and a bucket-level key; the same fields filled as ours are (a 52-byte bucket
   * name twice, an assumed-role requester ARN of ~150 bytes, a ~50-byte key in the key and request-URI
   * fields, the AWS SDK's ~110-byte user agent) come to ~835.
   */
  readonly accessLogRecordBytes: number;
  /**
   * Not a price: bytes of one access log record of a lifecycle action (S3.TRANSITION_*.OBJECT,
   * S3.EXPIRE.OBJECT): requester AmazonS3, no request URI, user agent or TLS fields (~360 bytes).
   */
  readonly accessLogLifecycleRecordBytes: number;
}

const KB = 1024;

export const DEFAULT_PRICES: Prices = {
  standardGbMonth: 0.023,
  classGbMonth: { GLACIER_IR: 0.004, GLACIER: 0.0036, DEEP_ARCHIVE: 0.00099 },
  putRequest: 0.005 / 1000,
  getRequest: 0.0004 / 1000,
  classGetRequest: { GLACIER_IR: 0.01 / 1000, GLACIER: 0.0004 / 1000, DEEP_ARCHIVE: 0.0004 / 1000 },
  classRetrievalGb: { GLACIER_IR: 0.03, GLACIER: 0, DEEP_ARCHIVE: 0 },
  restore: {
    GLACIER: {
      Expedited: { request: 10 / 1000, gb: 0.03 },
      Standard: { request: 0.05 / 1000, gb: 0.01 },
      Bulk: { request: 0, gb: 0 },
    },
    DEEP_ARCHIVE: {
      Standard: { request: 0.1 / 1000, gb: 0.02 },
      Bulk: { request: 0.025 / 1000, gb: 0.0025 },
    },
  },
  transitionRequest: { GLACIER_IR: 0.02 / 1000, GLACIER: 0.03 / 1000, DEEP_ARCHIVE: 0.05 / 1000 },
  classMinObjectBytes: { GLACIER_IR: 128 * KB, GLACIER: 0, DEEP_ARCHIVE: 0 },
  classOverheadBytes: {
    GLACIER_IR: { inClass: 0, inStandard: 0 },
    GLACIER: { inClass: 32 * KB, inStandard: 8 * KB },
    DEEP_ARCHIVE: { inClass: 32 * KB, inStandard: 8 * KB },
  },
  classMinDays: { GLACIER_IR: 90, GLACIER: 90, DEEP_ARCHIVE: 180 },
  lambdaRequest: 0.2 / 1_000_000,
  lambdaGbSecond: 0.0000133334,
  stateTransition: 0.025 / 1000,
  schedulerInvocation: 1 / 1_000_000,
  dynamodbReadUnit: 0.125 / 1_000_000,
  alarmMonth: 0.1,
  customMetricMonth: 0.3,
  s3LatencyMs: 50,
  dynamodbLatencyMs: 10,
  accessLogRecordBytes: 800,
  accessLogLifecycleRecordBytes: 350,
};

/** Hours a restore typically takes, by class and tier (S3 User Guide, "Archive retrieval options"). */
export const RESTORE_WAIT: Readonly<Partial<Record<StorageClass, Partial<Record<RestoreTier, string>>>>> = {
  GLACIER: { Expedited: '1–5 minutes', Standard: '3–5 hours', Bulk: '5–12 hours' },
  DEEP_ARCHIVE: { Standard: 'within 12 hours', Bulk: 'within 48 hours' },
};

/**
 * S3 API calls → the price class they bill in. DELETE (and multi-object delete) is free; everything
 * that writes or lists is a PUT-class request; the rest GET-class.
 */
export const requestPrice = (call: string, p: Prices): number => {
  if (call === 'DeleteObject' || call === 'DeleteObjects') return 0;
  if (/^(Put|Copy|List|Create|Upload|Complete|Abort|Restore)/.test(call)) return p.putRequest;
  return p.getRequest;
};
