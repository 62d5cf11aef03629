import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createRequestMeter } from '../../shared/archive/steps/meter';
import { countRequests } from '../../shared/metrics';
import { getHotObjectBytes } from '../../shared/s3/lean-get';
import { getObjectBytes } from '../../shared/s3/objects';
import { freshBucket, testS3 } from '../support/local';

/**
 * The hot objects' GET (shared/s3/lean-get.ts) against the embedded S3: what reaches the wire, what
 * the meter counts, and that the client's middleware (meter, fault layers, traces) still sees it.
 * A request the fast path sent carries no SDK invocation id (`amz-sdk-invocation-id`): that header
 * is how these tests tell the two paths apart on the wire.
 */
interface Sent {
  readonly command: string;
  readonly key: string;
  readonly path: string;
  readonly sdk: boolean;
  readonly authorization: string;
}

const wiretap = (s3: S3Client): Sent[] => {
  const sent: Sent[] = [];
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const request = (args as { request?: { headers?: Record<string, string>; path?: string } }).request;
      const headers = request?.headers ?? {};
      sent.push({
        command: context.commandName ?? '?',
        key: String((args.input as { Key?: string }).Key ?? ''),
        path: request?.path ?? '',
        sdk: headers['amz-sdk-invocation-id'] !== undefined,
        authorization: headers.authorization ?? '',
      });
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'testWiretap' },
  );
  return sent;
};

let bucket: string;
const clients: S3Client[] = [];
const client = (): S3Client => {
  const s3 = testS3();
  clients.push(s3);
  return s3;
};
beforeAll(async () => {
  bucket = await freshBucket();
});
afterAll(() => {
  for (const c of clients) c.destroy();
});

const put = (s3: S3Client, key: string, body: string, metadata: Record<string, string> = {}) =>
  s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, Metadata: metadata }));

it('a 200 after the bucket is known is the fast path: one signed request on the wire, metered once as s3.GetObject, same bytes, ETag and metadata as the SDK', async () => {
  const s3 = client();
  const meter = createRequestMeter();
  countRequests(s3, 's3', meter.sink);
  const sent = wiretap(s3);
  const meta = { 'shop-id': 'shop-1', 'job-id': 'j 1', odd: 'a=b; c  d' };
  await put(s3, 'hot/a.json.gz', 'first', meta);
  await put(s3, 'hot/b (1)!*.json.gz', 'second', meta);
  sent.length = 0;
  const first = await meter.measure(() => getHotObjectBytes(s3, bucket, 'hot/a.json.gz'));
  const second = await meter.measure(() => getHotObjectBytes(s3, bucket, 'hot/b (1)!*.json.gz'));
  const viaSdk = await getObjectBytes(s3, bucket, 'hot/b (1)!*.json.gz');
  expect(sent.map((s) => [s.command, s.key, s.sdk])).toEqual([
    // The bucket's first GET goes through the SDK (it tells the fast path the endpoint)…
    ['GetObjectCommand', 'hot/a.json.gz', true],
    // … the next one does not.
    ['GetObjectCommand', 'hot/b (1)!*.json.gz', false],
    ['GetObjectCommand', 'hot/b (1)!*.json.gz', true],
  ]);
  expect(sent[1]?.path).toBe(sent[2]?.path);
  expect(sent[1]?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/us-east-1\/s3\/aws4_request/);
  expect(first.requests.byType).toEqual({ 's3.GetObject': 1 });
  expect(second.requests.byType).toEqual({ 's3.GetObject': 1 });
  expect(first.value?.bytes.toString()).toBe('first');
  expect(second.value).toEqual(viaSdk);
  expect(second.value?.metadata).toEqual(meta);
});
