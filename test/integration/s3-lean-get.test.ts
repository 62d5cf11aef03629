import {
  DeleteBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { RetryStrategyV2 } from '@smithy/types';
import type { Context } from 'aws-lambda';
import { ARCHIVER_STEPS, type ArchiverStep } from '../../infra/construct/step-functions';
import type { StepHandler } from '../../infra/local/runner';
import { createRequestMeter } from '../../shared/archive/steps/meter';
import { countRequests } from '../../shared/metrics';
import { getHotObjectBytes, SENDS_GETS_TO } from '../../shared/s3/lean-get';
import { type FetchedObject, getObjectBytes } from '../../shared/s3/objects';
import {
  archiverEnv,
  inMonth,
  runLocal,
  type SeededJob,
  seedTerminalJob,
} from '../support/archiver-fixtures';
import {
  burst,
  type Call,
  crashBefore,
  dropAfterSend,
  type Fault,
  FaultLayer,
  slowDown,
} from '../support/faults';
import { freshBucket, testDdb, testS3 } from '../support/local';

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
  expect(sent[1]?.authorization).toMatch(
    /^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/us-east-1\/s3\/aws4_request/,
  );
  expect(first.requests.byType).toEqual({ 's3.GetObject': 1 });
  expect(second.requests.byType).toEqual({ 's3.GetObject': 1 });
  expect(first.value?.bytes.toString()).toBe('first');
  expect(second.value).toEqual(viaSdk);
  expect(second.value?.metadata).toEqual(meta);
});

/** A client that already reached `bucket` (its first GET, through the SDK, taught the fast path). */
const warmed = async (key = 'warm') => {
  const s3 = client();
  const meter = createRequestMeter();
  countRequests(s3, 's3', meter.sink);
  await put(s3, key, 'warm');
  await getHotObjectBytes(s3, bucket, key);
  return { s3, meter, sent: wiretap(s3) };
};

it('a 404 is asked again through the SDK: null as before (the object vanished), both requests metered', async () => {
  const { s3, meter, sent } = await warmed();
  const got = await meter.measure(() => getHotObjectBytes(s3, bucket, 'hot/never-written'));
  expect(got.value).toBeNull();
  expect(sent.map((s) => s.sdk)).toEqual([false, true]);
  expect(got.requests.byType).toEqual({ 's3.GetObject': 2 });
});

it('a bucket gone is the typed NoSuchBucket error the SDK gives, not "not found"', async () => {
  const s3 = client();
  const gone = await freshBucket();
  await s3.send(new PutObjectCommand({ Bucket: gone, Key: 'k', Body: 'x' }));
  await getHotObjectBytes(s3, gone, 'k');
  await s3.send(new DeleteObjectCommand({ Bucket: gone, Key: 'k' }));
  await s3.send(new DeleteBucketCommand({ Bucket: gone }));
  const sent = wiretap(s3);
  const err = await getHotObjectBytes(s3, gone, 'k').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(S3ServiceException);
  expect((err as S3ServiceException).name).toBe('NoSuchBucket');
  expect(sent.map((s) => s.sdk)).toEqual([false, true]);
});

it("a 403 (a signer's clock S3 refuses: RequestTimeTooSkewed) ends as the SDK's own GET ends, one request more", async () => {
  const { s3, meter, sent } = await warmed();
  await put(s3, 'hot/skewed', 'on time');
  const config = s3.config as unknown as { systemClockOffset: number };
  const outcome = async (get: typeof getObjectBytes) => {
    config.systemClockOffset = 3_600_000;
    sent.length = 0;
    const got = await meter.settle(() => get(s3, bucket, 'hot/skewed'));
    const error = 'error' in got ? (got.error as S3ServiceException) : undefined;
    return {
      error: error && { name: error.name, status: error.$metadata.httpStatusCode },
      wire: sent.map((s) => s.sdk),
      requests: got.requests.byType?.['s3.GetObject'],
    };
  };
  const sdk = await outcome(getObjectBytes);
  const lean = await outcome(getHotObjectBytes);
  expect(sdk.error).toEqual({ name: 'RequestTimeTooSkewed', status: 403 });
  expect(lean.error).toEqual(sdk.error);
  expect(lean.wire).toEqual([false, ...sdk.wire]);
  expect(lean.requests).toBe((sdk.requests ?? 0) + 1);
});

describe('the fault layer (test/support/faults.ts) reaches the fast path', () => {
  const setup = async (fault: Fault) => {
    const { s3, meter, sent } = await warmed();
    await put(s3, 'hot/faulted', 'faulted');
    sent.length = 0;
    const layer = new FaultLayer();
    layer.install({ s3, ddb: testDdb() });
    layer.fault = fault;
    const handler: StepHandler = async () => getHotObjectBytes(s3, bucket, 'hot/faulted');
    const handlers = Object.fromEntries(ARCHIVER_STEPS.map((s) => [s, handler])) as Record<
      ArchiverStep,
      StepHandler
    >;
    const run = () =>
      meter.measure(
        async () => (await layer.wrap(handlers)['archive-batch']({}, {} as Context)) as FetchedObject | null,
      );
    return { run, sent, s3 };
  };
  const isHotGet = (c: Call) => c.command === 'GetObjectCommand' && c.input.Key === 'hot/faulted';

  it('a crash before the GET kills the invocation before anything is sent', async () => {
    const fault = crashBefore(isHotGet);
    const { run, sent } = await setup(fault);
    await expect(run()).rejects.toMatchObject({ name: 'Crash' });
    expect(fault.fired).toBe(1);
    expect(sent).toEqual([]);
  });

  it('a throttled attempt (503 SlowDown on the wire) is retried through the SDK and succeeds', async () => {
    const fault = burst(1, isHotGet, slowDown);
    const { run, sent } = await setup(fault);
    const got = await run();
    expect(got.value?.bytes.toString()).toBe('faulted');
    expect(fault.fired).toBe(1);
    expect(sent.map((s) => s.sdk)).toEqual([false, true]);
    expect(got.requests.byType).toEqual({ 's3.GetObject': 2 });
  });

  it("a throttled attempt backs off as the SDK's retry would before the SDK path asks again, and the retry capacity it took comes back when that succeeds", async () => {
    const fault = burst(1, isHotGet, slowDown);
    const { run, sent, s3 } = await setup(fault);
    // The client's own retry strategy (the SDK's standard one), watched: each retry it grants is
    // noted with how many requests had reached the wire by then.
    const strategy = (await (
      s3.config.retryStrategy as () => Promise<RetryStrategyV2>
    )()) as RetryStrategyV2 & {
      getCapacity(): number;
    };
    const granted: { afterRequests: number; errorType: string }[] = [];
    const refresh = strategy.refreshRetryTokenForRetry.bind(strategy);
    strategy.refreshRetryTokenForRetry = async (token, info) => {
      granted.push({ afterRequests: sent.length, errorType: info.errorType });
      return refresh(token, info);
    };
    const capacity = strategy.getCapacity();
    const got = await run();
    expect(got.value?.bytes.toString()).toBe('faulted');
    expect(sent.map((s) => s.sdk)).toEqual([false, true]);
    // The SDK path's request waited the back-off a retry of a throttled attempt gets…
    expect(granted).toEqual([{ afterRequests: 1, errorType: 'THROTTLING' }]);
    // … and, as when the SDK's own retry succeeds, the capacity that retry cost is given back.
    expect(strategy.getCapacity()).toBe(capacity);
    expect(got.requests.byType).toEqual({ 's3.GetObject': 2 });
  });

  it('a connection dropped after the answer: the SDK path asks again', async () => {
    const fault = dropAfterSend(isHotGet);
    const { run, sent } = await setup(fault);
    const got = await run();
    expect(got.value?.bytes.toString()).toBe('faulted');
    expect(fault.fired).toBe(1);
    expect(sent.map((s) => s.sdk)).toEqual([false, true]);
  });
});

it('middleware removed from the client is no longer run around the fast path', async () => {
  const { s3 } = await warmed();
  const seen: string[] = [];
  s3.middlewareStack.add(
    (next) => async (args) => {
      seen.push(String((args.input as { Key?: string }).Key));
      return next(args);
    },
    { step: 'initialize', name: 'testSeen' },
  );
  await getHotObjectBytes(s3, bucket, 'warm');
  s3.middlewareStack.remove('testSeen');
  await getHotObjectBytes(s3, bucket, 'warm');
  expect(seen).toEqual(['warm']);
});

it("a client whose send is wrapped (a Proxy, as the tests' fault injection at the client boundary) has its send called for every hot GET", async () => {
  const { s3, sent } = await warmed();
  const calls: string[] = [];
  const wrapped = new Proxy(s3, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return (command: { input: { Key?: string } }, ...rest: unknown[]) => {
        calls.push(String(command.input.Key));
        return (target.send as (...a: unknown[]) => unknown)(command, ...rest);
      };
    },
  });
  expect((await getHotObjectBytes(wrapped, bucket, 'warm'))?.bytes.toString()).toBe('warm');
  expect(calls).toEqual(['warm']);
  expect(sent.map((s) => s.sdk)).toEqual([true]);
});

it('a wrapper that says it sends GETs unchanged (SENDS_GETS_TO) leaves them the fast path, unless a wrapper under it does not', async () => {
  const { s3, sent } = await warmed();
  const wrap = (target: S3Client, passGets: boolean, calls: string[]): S3Client =>
    new Proxy(target, {
      get(t, prop, receiver) {
        if (passGets && prop === SENDS_GETS_TO) return t;
        if (prop !== 'send') return Reflect.get(t, prop, receiver);
        return (command: unknown, ...rest: unknown[]) => {
          calls.push((command as object).constructor.name);
          return (t.send as (...a: unknown[]) => unknown)(command, ...rest);
        };
      },
    });
  const outer: string[] = [];
  await getHotObjectBytes(wrap(s3, true, outer), bucket, 'warm');
  expect(outer).toEqual([]);
  expect(sent.map((s) => s.sdk)).toEqual([false]);

  sent.length = 0;
  const inner: string[] = [];
  await getHotObjectBytes(wrap(wrap(s3, false, inner), true, outer), bucket, 'warm');
  expect(inner).toEqual(['GetObjectCommand']);
  expect(sent.map((s) => s.sdk)).toEqual([true]);
});

it("the archive step's hot GETs take the fast path (a bucket's first GETs aside), through the step's attempt-marking wrapper", async () => {
  const env = await archiverEnv();
  // More hot objects than GETs in flight: the first ones (before the bucket's first 200) use the SDK.
  const inFlight = env.machineDeps.settings.readConcurrency;
  const jobs: SeededJob[] = [];
  for (let i = 0; jobs.flatMap((j) => j.keys).length <= 2 * inFlight; i++)
    jobs.push(
      await seedTerminalJob(env, { shopId: 'lean.myshopify.com', completedAt: inMonth(2, 3 + (i % 20)) }),
    );
  const hot = new Set(jobs.flatMap((j) => j.keys));
  const sent = wiretap(env.machineDeps.s3);
  const run = await runLocal(env, { input: { olderThanDays: 30, graceHours: 0 } });
  expect(run.status).toBe('SUCCEEDED');
  const gets = sent.filter((s) => s.command === 'GetObjectCommand' && hot.has(s.key));
  expect(gets.map((g) => g.key).sort()).toEqual([...hot].sort());
  expect(gets.filter((g) => !g.sdk).length).toBeGreaterThan(0);
  expect(gets.filter((g) => g.sdk).length).toBeLessThanOrEqual(inFlight);
});

it("a client with middleware placed relative to another (whose place in the SDK's order is not known here) keeps its GETs on the SDK path", async () => {
  const { s3, sent } = await warmed();
  // biome-ignore lint/suspicious/noExplicitAny: a pass-through middleware over any command
  s3.middlewareStack.addRelativeTo((next: any) => async (args: any) => next(args), {
    relation: 'after',
    toMiddleware: 'retryMiddleware',
    name: 'testRelative',
  });
  await getHotObjectBytes(s3, bucket, 'warm');
  expect(sent.map((s) => s.sdk)).toEqual([true]);
});
