import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Config } from './config';
import { enableLeanGets } from './s3/lean-get';

/**
 * Builds AWS clients from settings. Only entry points (handlers, CLI, local stack, tests) call this;
 * library code always receives clients as arguments.
 */
export const s3ClientFrom = (cfg: Pick<Config, 'region' | 's3Endpoint'>): S3Client => {
  const client = leanRequests(
    new S3Client({
      region: cfg.region,
      ...(cfg.s3Endpoint ? { endpoint: cfg.s3Endpoint, forcePathStyle: true } : {}),
      // No response checksum on a GET unless the call asks for one (ChecksumMode): the SDK would
      // otherwise ask S3 for the object's checksum on every GET and pipe each body through a CRC
      // stream — per hot object, CPU the archive step bills. Integrity stays covered: TLS
      // authenticates every byte in transit, each hot flush object's gzip trailer (CRC-32 and length)
      // is checked when it is inflated (details/codec.ts), and a part is verified whole against the
      // sha256 of what was built before it is committed (steps/verify). Request checksums (uploads,
      // DeleteObjects) keep the SDK's default.
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
  );
  // The archive step's hot GETs can skip the SDK's per-request machinery (s3/lean-get.ts).
  enableLeanGets(client);
  return client;
};

/** What `leanRequests` changes of an S3 client (SDK v3's own config and middleware stack). */
interface LeanableClient {
  readonly config: { signer: (authScheme?: AuthSchemeLike) => Promise<unknown> };
  readonly middlewareStack: { remove(name: string): boolean };
}

interface AuthSchemeLike {
  readonly name?: string;
  readonly signingRegion?: string;
  readonly signingName?: string;
}

/**
 * Per-request work the SDK does for nothing here, taken out (the archive step sends about one request
 * per hot object, so this is CPU per hot object):
 * - the logger middleware builds a sensitive-filtered copy of every input and output for the client's
 *   logger — none is configured (the SDK's no-op logger), so nothing is ever logged;
 * - S3's signer is a function that builds a new SignatureV4 from a copy of the whole client config on
 *   every request, so the signing key (four HMACs) is derived again each time. Its result depends on
 *   the client config alone (fixed once the first request set the signing region and name), so one
 *   signer per auth scheme is kept; it derives keys per date, region and credentials as before.
 */
const leanRequests = <C extends object>(client: C): C => {
  const c = client as unknown as LeanableClient;
  c.middlewareStack.remove('loggerMiddleware');
  const make = c.config.signer;
  const signers = new Map<string, Promise<unknown>>();
  c.config.signer = (authScheme) => {
    const key = `${authScheme?.name}|${authScheme?.signingRegion}|${authScheme?.signingName}`;
    let signer = signers.get(key);
    if (!signer) {
      signer = make(authScheme);
      // A failed resolution (e.g. no region yet) is not kept: the next request tries again.
      signer.catch(() => signers.delete(key));
      signers.set(key, signer);
    }
    return signer;
  };
  return client;
};

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
