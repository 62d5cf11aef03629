import { createHash, createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import type { RetryStrategyV2 } from '@smithy/types';
import { s3ClientFrom } from '../../shared/clients';
import { getHotObjectBytes } from '../../shared/s3/lean-get';
import { getObjectBytes } from '../../shared/s3/objects';

/**
 * The hot objects' lean GET (shared/s3/lean-get.ts) against what no emulator has: real S3's endpoints
 * (virtual-hosted, a dotted bucket's path style, FIPS + dual-stack), credentials that rotate, and
 * answers s3rver never gives (a body cut short, a raw 503, a 301). Two fakes, both at the wire:
 * - a request handler put in the client's place (the SDK's own `requestHandler` slot, used by both
 *   paths), which records each request as it would be sent and answers with a canned 200 — what
 *   goes to S3 is then compared between the fast path and the SDK's `GetObjectCommand`;
 * - a local node:http server (the client's custom endpoint, path style) for answers on a real socket.
 * A request the fast path sent carries no SDK invocation id (`amz-sdk-invocation-id`).
 */

interface SentRequest {
  readonly hostname: string;
  readonly port?: number;
  readonly path: string;
  readonly headers: Record<string, string>;
}

const saved: Record<string, string | undefined> = {};
const ENV = {
  AWS_ACCESS_KEY_ID: 'AKIDLEANGET',
  AWS_SECRET_ACCESS_KEY: 'secret',
  AWS_SESSION_TOKEN: 'session/token+=',
  AWS_ENDPOINT_URL: undefined,
  AWS_ENDPOINT_URL_S3: undefined,
  AWS_USE_FIPS_ENDPOINT: undefined,
  AWS_USE_DUALSTACK_ENDPOINT: undefined,
  AWS_CREDENTIAL_EXPIRATION: undefined,
};
const setEnv = (vars: Record<string, string | undefined>) => {
  for (const [k, v] of Object.entries(vars)) {
    if (!(k in saved)) saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
};
beforeAll(() => setEnv(ENV));
beforeEach(() => setEnv(ENV));
afterAll(() => setEnv(saved));

const clients: S3Client[] = [];
afterAll(() => {
  for (const c of clients) c.destroy();
});

/** A client for real S3 (no custom endpoint) whose requests are recorded and answered 200. */
const recorded = (region: string) => {
  const sent: SentRequest[] = [];
  const s3 = s3ClientFrom({ region, s3Endpoint: undefined });
  clients.push(s3);
  (s3.config as unknown as { requestHandler: unknown }).requestHandler = {
    handle: async (request: SentRequest) => {
      sent.push({ ...request, headers: { ...request.headers } });
      return {
        response: {
          statusCode: 200,
          headers: { etag: '"e1"', 'content-length': '2', 'x-amz-meta-shop-id': 'shop-1' },
          body: Readable.from([Buffer.from('ok')]),
        },
      };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };
  return { s3, sent };
};

const fast = (r: SentRequest | undefined) =>
  r !== undefined && r.headers['amz-sdk-invocation-id'] === undefined;
const scopeOf = (r: SentRequest | undefined) =>
  /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(r?.headers.authorization ?? '')?.slice(1);

/** What the fast path and the SDK send for `key`: the fast path's request, then the SDK's. */
const bothFor = async (c: ReturnType<typeof recorded>, bucket: string, key: string) => {
  c.sent.length = 0;
  const lean = await getHotObjectBytes(c.s3, bucket, key);
  const sdk = await getObjectBytes(c.s3, bucket, key);
  expect(lean).toEqual(sdk);
  expect(c.sent.map(fast)).toEqual([true, false]);
  return c.sent as [SentRequest, SentRequest];
};

/**
 * The SigV4 signature S3 expects for `r` (AWS docs, "Create a signed AWS API request"): for S3 the
 * canonical URI is the path exactly as sent — encoded once, never again (other services double-encode).
 */
const s3Signature = (r: SentRequest, secret: string): string => {
  const auth = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+)/.exec(
    r.headers.authorization ?? '',
  );
  const [, date = '', region = '', service = '', signed = ''] = auth ?? [];
  const names = signed.split(';');
  const canonical = [
    'GET',
    r.path,
    '',
    ...names.map((n) => `${n}:${String(r.headers[n]).trim()}`),
    '',
    signed,
    r.headers['x-amz-content-sha256'],
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = [
    'AWS4-HMAC-SHA256',
    r.headers['x-amz-date'],
    scope,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  const hmac = (k: string | Buffer, v: string) => createHmac('sha256', k).update(v).digest();
  const key = [region, service, 'aws4_request'].reduce((k, v) => hmac(k, v), hmac(`AWS4${secret}`, date));
  return createHmac('sha256', key).update(toSign).digest('hex');
};

const where = (r: SentRequest) => ({
  hostname: r.hostname,
  port: r.port,
  path: r.path,
  host: r.headers.host,
});

// Every character class a job id, flush id or shop id can hold, and worse: S3 signs the path as
// sent (no double encoding), so the fast path must send exactly the SDK's path.
const KEYS = [
  'jobs/shop 1/job+1/flush%2F1.json.gz',
  'a+b=c&d;e,f$g@h:i',
  '%41%2F%25',
  '~tilde-_.',
  "!'()*",
  'é/ü/日本語/😀',
  'a//b/',
  '/leading',
  './x/../y',
  'q?x=1#frag',
  '[]{}|^`<>"\\',
  'tab\there\nnl\u0000',
  `long/${'k'.repeat(1000)}`,
];

describe('what reaches S3 is what the SDK sends', () => {
  it.each([
    ['virtual-hosted', 'us-east-1', 'jda-hot', {}],
    ['a dotted bucket (path style over TLS)', 'eu-west-1', 'jda.hot.example', {}],
    [
      'FIPS + dual-stack endpoints',
      'us-east-1',
      'jda-hot',
      { AWS_USE_FIPS_ENDPOINT: 'true', AWS_USE_DUALSTACK_ENDPOINT: 'true' },
    ],
  ])(
    '%s: host, path (every key class) and signing scope, with the session token',
    async (_, region, bucket, env) => {
      setEnv(env);
      const c = recorded(region);
      // The bucket's first GET goes through the SDK; the fast path learns its endpoint from it.
      await getHotObjectBytes(c.s3, bucket, 'first');
      for (const key of KEYS) {
        const [lean, sdk] = await bothFor(c, bucket, key);
        expect({ key, ...where(lean) }).toEqual({ key, ...where(sdk) });
        expect(scopeOf(lean)).toEqual(scopeOf(sdk));
        expect(lean.headers['x-amz-security-token']).toBe('session/token+=');
        // Signed over the path as sent (a key's `%` is `%25` once in the path, not `%2525`).
        expect(lean.headers.authorization).toContain(`Signature=${s3Signature(lean, 'secret')}`);
        expect(lean.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/);
      }
    },
  );

  it('two buckets, each at its own endpoint, in the same client', async () => {
    const c = recorded('us-east-1');
    await getHotObjectBytes(c.s3, 'jda-one', 'first');
    await getHotObjectBytes(c.s3, 'jda.two', 'first');
    const [one] = await bothFor(c, 'jda-one', 'k');
    const [two] = await bothFor(c, 'jda.two', 'k');
    expect(where(one)).toMatchObject({ hostname: 'jda-one.s3.us-east-1.amazonaws.com', path: '/k' });
    expect(where(two)).toMatchObject({ hostname: 's3.us-east-1.amazonaws.com', path: '/jda.two/k' });
  });

  it("credentials that expired are fetched again: the fast path signs through the client's credential provider, with the current ones", async () => {
    // The SDK's default chain refreshes expired credentials before answering (ones that merely expire
    // within 5 minutes it refreshes in the background, for either path alike).
    setEnv({ AWS_CREDENTIAL_EXPIRATION: new Date(Date.now() - 1000).toISOString() });
    const c = recorded('us-east-1');
    await getHotObjectBytes(c.s3, 'jda-hot', 'first');
    for (const [key, token] of [
      ['AKIDROTATED1', 'token-1'],
      ['AKIDROTATED2', 'token-2'],
    ] as const) {
      setEnv({ AWS_ACCESS_KEY_ID: key, AWS_SESSION_TOKEN: token });
      c.sent.length = 0;
      await getHotObjectBytes(c.s3, 'jda-hot', 'k');
      expect(c.sent.map(fast)).toEqual([true]);
      expect(scopeOf(c.sent[0])?.[0]).toBe(key);
      expect(c.sent[0]?.headers['x-amz-security-token']).toBe(token);
    }
  });

  it("the fast path signs at the client's corrected clock (systemClockOffset)", async () => {
    const c = recorded('us-east-1');
    await getHotObjectBytes(c.s3, 'jda-hot', 'first');
    (c.s3.config as unknown as { systemClockOffset: number }).systemClockOffset = 2 * 3_600_000;
    c.sent.length = 0;
    const before = Date.now();
    await getHotObjectBytes(c.s3, 'jda-hot', 'k');
    const amzDate = c.sent[0]?.headers['x-amz-date'] ?? '';
    const signed = Date.parse(
      amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'),
    );
    expect(c.sent.map(fast)).toEqual([true]);
    expect(signed - before).toBeGreaterThan(3_600_000);
  });
});

/** A local S3 stand-in on a real socket: answers the SDK's requests with `sdk`, the fast path's with `lean`. */
type Answer = (res: import('node:http').ServerResponse) => void;
const object: Answer = (res) => {
  res.writeHead(200, { etag: '"e1"', 'content-length': '5', 'x-amz-meta-shop-id': 'shop-1' });
  res.end('hello');
};

describe('answers on a real socket (a local node:http server as the endpoint)', () => {
  let server: Server;
  let s3: S3Client;
  const connections = new Set<Socket>();
  let opened = 0;
  let answers: { sdk: Answer; lean: Answer } = { sdk: object, lean: object };
  const wire: boolean[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const viaSdk = req.headers['amz-sdk-invocation-id'] !== undefined;
      wire.push(!viaSdk);
      (viaSdk ? answers.sdk : answers.lean)(res);
    });
    server.on('connection', (socket) => {
      opened++;
      connections.add(socket);
      socket.on('close', () => connections.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    s3 = s3ClientFrom({
      region: 'us-east-1',
      s3Endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    await getHotObjectBytes(s3, 'bkt', 'first');
  });
  afterAll(async () => {
    s3.destroy();
    for (const socket of connections) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    answers = { sdk: object, lean: object };
    wire.length = 0;
  });
  /** The retries the client's retry strategy grants, each with how many requests were sent by then. */
  let unwatch: (() => void) | undefined;
  afterEach(() => unwatch?.());
  const watchRetries = async () => {
    const strategy = (await (s3.config.retryStrategy as () => Promise<RetryStrategyV2>)()) as RetryStrategyV2;
    const granted: { afterRequests: number; errorType: string }[] = [];
    const refresh = strategy.refreshRetryTokenForRetry;
    strategy.refreshRetryTokenForRetry = async (token, info) => {
      granted.push({ afterRequests: wire.length, errorType: info.errorType });
      return refresh.call(strategy, token, info);
    };
    unwatch = () => {
      strategy.refreshRetryTokenForRetry = refresh;
    };
    return granted;
  };

  it('a 200 whose body is cut short (Content-Length not reached, connection closed) is an error, never short bytes — as through the SDK', async () => {
    const cut: Answer = (res) => {
      res.writeHead(200, { etag: '"e1"', 'content-length': '10' });
      res.write('hello', () => res.socket?.destroy());
    };
    answers = { sdk: cut, lean: cut };
    const lean = await getHotObjectBytes(s3, 'bkt', 'k').catch((e: Error) => e);
    const sdk = await getObjectBytes(s3, 'bkt', 'k').catch((e: Error) => e);
    // Errors from node's http client (another realm than the test's: no instanceof).
    expect(lean).toMatchObject({ message: 'aborted', code: 'ECONNRESET' });
    expect({ message: (lean as Error).message, code: (lean as { code?: string }).code }).toEqual({
      message: (sdk as Error).message,
      code: (sdk as { code?: string }).code,
    });
    expect(wire).toEqual([true, false]);
  });

  it('a Content-Encoding answer: the stored bytes as the SDK gives them (nothing decoded)', async () => {
    const gz: Answer = (res) => {
      res.writeHead(200, { etag: '"e1"', 'content-length': '5', 'content-encoding': 'gzip' });
      res.end('hello');
    };
    answers = { sdk: gz, lean: gz };
    expect(await getHotObjectBytes(s3, 'bkt', 'k')).toEqual(await getObjectBytes(s3, 'bkt', 'k'));
    expect(wire).toEqual([true, false]);
  });

  it('a raw 503 answer is a throttled first attempt: the SDK path waits the back-off its retry strategy grants', async () => {
    answers.lean = (res) => {
      res.writeHead(503, { 'content-type': 'application/xml' });
      res.end('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
    };
    const granted = await watchRetries();
    expect((await getHotObjectBytes(s3, 'bkt', 'k'))?.bytes.toString()).toBe('hello');
    expect(wire).toEqual([true, false]);
    expect(granted).toEqual([{ afterRequests: 1, errorType: 'THROTTLING' }]);
  });

  it("a 301 (the bucket is in another region) ends as the SDK's GET ends: PermanentRedirect, no back-off", async () => {
    const moved: Answer = (res) => {
      res.writeHead(301, { 'content-type': 'application/xml', 'x-amz-bucket-region': 'eu-west-1' });
      res.end('<Error><Code>PermanentRedirect</Code><Message>Use the eu-west-1 endpoint.</Message></Error>');
    };
    answers = { sdk: moved, lean: moved };
    const granted = await watchRetries();
    const lean = await getHotObjectBytes(s3, 'bkt', 'k').catch((e: Error) => e);
    const leanWire = [...wire];
    const leanAsked = granted.splice(0).map((g) => g.errorType);
    wire.length = 0;
    const sdk = await getObjectBytes(s3, 'bkt', 'k').catch((e: Error) => e);
    expect((lean as Error).name).toBe('PermanentRedirect');
    expect({ name: (lean as Error).name, message: (lean as Error).message }).toEqual({
      name: (sdk as Error).name,
      message: (sdk as Error).message,
    });
    expect(leanWire).toEqual([true, ...wire.map(() => false)]);
    // The fast path's 301 asks the retry strategy nothing: only the SDK path's own attempt is judged
    // (a client error, not retried), as in the SDK's GET alone.
    expect(leanAsked).toEqual(granted.map((g) => g.errorType));
  });

  it('a second copy of the module in the process (ESM and CommonJS, as under tsx) shares the client: a miss in either copy falls back to the SDK', async () => {
    let other: typeof import('../../shared/s3/lean-get') | undefined;
    jest.isolateModules(() => {
      other = jest.requireActual<typeof import('../../shared/s3/lean-get')>('../../shared/s3/lean-get');
    });
    expect(other?.getHotObjectBytes).not.toBe(getHotObjectBytes);
    answers.lean = (res) => {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end('<Error><Code>NoSuchKey</Code></Error>');
    };
    for (const get of [getHotObjectBytes, other?.getHotObjectBytes, getHotObjectBytes]) {
      expect((await get?.(s3, 'bkt', 'k'))?.bytes.toString()).toBe('hello');
    }
    expect(wire).toEqual([true, false, true, false, true, false]);
  });

  it("error answers' bodies are drained: the keep-alive connection is reused, none is left hanging", async () => {
    answers.lean = (res) => {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end(`<Error><Code>NoSuchKey</Code><Message>${'x'.repeat(4096)}</Message></Error>`);
    };
    const before = opened;
    for (let i = 0; i < 8; i++)
      expect((await getHotObjectBytes(s3, 'bkt', `k${i}`))?.bytes.toString()).toBe('hello');
    expect(wire).toEqual(Array.from({ length: 16 }, (_, i) => i % 2 === 0));
    // Sixteen requests one after another: a connection whose answer was not read would stay busy,
    // and each next request would open a new one.
    expect(opened - before).toBeLessThanOrEqual(1);
  });
});
