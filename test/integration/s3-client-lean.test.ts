import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getObjectBytes } from '../../shared/s3/objects';
import { freshBucket, testS3 } from '../support/local';

/**
 * The S3 client every step uses (shared/clients.ts `s3ClientFrom`) without the per-request work the
 * SDK does for nothing here: what reaches the wire, and the clients' own state.
 */
describe('s3ClientFrom: lean requests', () => {
  let s3: S3Client;
  let bucket: string;
  const headers: Record<string, string>[] = [];
  beforeAll(async () => {
    bucket = await freshBucket();
    s3 = testS3();
    s3.middlewareStack.add(
      // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
      (next: any) => async (args: any) => {
        headers.push({ ...(args.request?.headers ?? {}) });
        return next(args);
      },
      { step: 'finalizeRequest', priority: 'low', name: 'testHeaders' },
    );
  });
  afterAll(() => s3.destroy());

  it('a GET asks for no response checksum (the gzip CRC, TLS and verify cover integrity) and is still signed', async () => {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'k', Body: 'hello', Metadata: { 'shop-id': 's' } }),
    );
    headers.length = 0;
    const got = await getObjectBytes(s3, bucket, 'k');
    expect(got?.bytes.toString()).toBe('hello');
    expect(got?.metadata).toEqual({ 'shop-id': 's' });
    const sent = Object.fromEntries(Object.entries(headers[0] ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    expect(sent['x-amz-checksum-mode']).toBeUndefined();
    expect(sent.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
  });

  it('an explicit ChecksumMode is still honoured', async () => {
    headers.length = 0;
    await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'k', ChecksumMode: 'ENABLED' }));
    const sent = Object.fromEntries(Object.entries(headers[0] ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    expect(sent['x-amz-checksum-mode']).toBe('ENABLED');
  });

  it('has no logger middleware and keeps one signer across requests', async () => {
    expect(s3.middlewareStack.identify().some((m) => m.startsWith('loggerMiddleware'))).toBe(false);
    const config = s3.config as unknown as { signer: (scheme?: unknown) => Promise<unknown> };
    const scheme = { name: 'sigv4', signingName: 's3', signingRegion: 'us-east-1', properties: {} };
    const [a, b] = [await config.signer(scheme), await config.signer(scheme)];
    expect(a).toBe(b);
    // Requests after it are signed by it and answered.
    await getObjectBytes(s3, bucket, 'k');
    expect(await config.signer(scheme)).toBe(a);
  });

  // Why the SDK's `cacheMiddleware` (the stack resolved once per command class, ~25 µs of CPU a request
  // less) is not set: the resolved handler shares one context between concurrent requests, and with it
  // this test fails — GETs of one bucket answered from the other (SDK 3.1169).
  it('concurrent requests of one command class each reach their own bucket and key', async () => {
    const other = await freshBucket();
    await s3.send(new PutObjectCommand({ Bucket: other, Key: 'k', Body: 'other' }));
    const keys = Array.from({ length: 12 }, (_, i) => `c/${i}`);
    await Promise.all(keys.map((k) => s3.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: k }))));
    const got = await Promise.all(
      keys.flatMap((k) => [
        getObjectBytes(s3, bucket, k).then((o) => o?.bytes.toString()),
        getObjectBytes(s3, other, 'k').then((o) => o?.bytes.toString()),
      ]),
    );
    expect(got).toEqual(keys.flatMap((k) => [k, 'other']));
  });
});
