import type { S3Client } from '@aws-sdk/client-s3';
import type { FetchedObject } from './objects';
import { getObjectBytes, normalizeEtag } from './objects';

/**
 * A whole-object GET for the archive step's hot reads (about one request per hot object, so its CPU
 * is CPU per hot object): signed and sent with the S3 client's OWN pieces — its signer, credentials,
 * clock offset, endpoint (as the client resolved it for the bucket) and request handler — without the
 * SDK's per-request machinery (the command's middleware stack resolved anew each time, schema-driven
 * serialization and deserialization, endpoint rules evaluated per request, user-agent building):
 * through the SDK a GET costs about three times the CPU it costs here (`npm run bench:get`).
 *
 * What it keeps of the SDK path, exactly:
 * - every middleware added to the client after it was built (the request meter's counter, tests'
 *   fault layers and traces, whatever comes later) runs around it as it would around a
 *   `GetObjectCommand`: same command name, same input, the same steps in the same order (those of
 *   `initialize`…`build` outside the retries, those of `finalizeRequest` inside, after signing);
 * - a 200 is the only answer it takes. Anything else — a 404, 403, 301, 5xx, throttling, a network
 *   error before an answer, an error a middleware inside the retries throws — and the GET is sent
 *   again through the SDK's `GetObjectCommand`, which gives exactly today's typed errors, retries,
 *   region redirects and clock-skew correction. The price: one extra request on those answers only
 *   (both are counted; a throttled GET gets the SDK's full retries after its first attempt). A
 *   failed attempt the SDK would retry (throttling, 5xx, a network error) counts as the GET's first
 *   attempt: the SDK path's request waits the back-off the client's retry strategy grants for it and
 *   takes its retry capacity (given back when the GET then succeeds), as the SDK's own retry would;
 * - what fails outside the retries (a middleware at `initialize`, a body cut off mid-read) fails as
 *   it does through the SDK, with the same error.
 *
 * A bucket's first GET goes through the SDK, and its 200 tells this path how the client reached that
 * bucket: the resolved endpoint (virtual-host or path style, as the client is configured) and the
 * signing scope it signed with. Buckets the client reaches any other way (an S3 Express or
 * multi-region access point auth scheme, endpoint headers, a region redirect) stay on the SDK path,
 * as do all GETs of a client with middleware placed relative to another (`addRelativeTo`: the SDK's
 * order could not be rebuilt) and of a wrapper with its own `send` that does not say it sends GETs
 * unchanged (`SENDS_GETS_TO`).
 */

interface Endpoint {
  readonly protocol: string;
  readonly hostname: string;
  readonly port: number | undefined;
  /** The endpoint's path without a trailing `/` (`''` virtual-host style, `/bucket` path style). */
  readonly basePath: string;
  readonly host: string;
  readonly authScheme: unknown;
  readonly signingRegion: string;
  readonly signingService: string;
}

interface HttpResponseLike {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: AsyncIterable<Uint8Array> & { resume?: () => void; destroy?: () => void };
}

interface SignerLike {
  sign(
    request: unknown,
    opts: { signingDate: Date; signingRegion: string; signingService: string },
  ): Promise<unknown>;
}

// biome-ignore lint/suspicious/noExplicitAny: SDK middleware is generic over every command
type Handler = (args: any) => Promise<any>;
// biome-ignore lint/suspicious/noExplicitAny: SDK middleware is generic over every command
type Middleware = (next: Handler, context: any) => Handler;

interface Stack {
  add(mw: Middleware, opts?: EntryOptions): void;
  addRelativeTo(mw: Middleware, opts: EntryOptions): void;
  remove(toRemove: string | Middleware): boolean;
  removeByTag(tag: string): boolean;
}

interface EntryOptions {
  readonly step?: Step;
  readonly priority?: 'high' | 'normal' | 'low';
  readonly name?: string;
  readonly aliases?: readonly string[];
  readonly tags?: readonly string[];
  readonly override?: boolean;
}

type Step = 'initialize' | 'serialize' | 'build' | 'finalizeRequest' | 'deserialize';

/** A middleware added to the client after it was built, as it was added. */
interface Entry {
  readonly mw: Middleware;
  readonly opts: EntryOptions;
}

interface ClientParts {
  readonly middlewareStack: Stack;
  readonly config: {
    readonly signer: (authScheme?: unknown) => Promise<SignerLike>;
    readonly requestHandler: {
      handle(request: unknown, options?: Record<string, unknown>): Promise<{ response: HttpResponseLike }>;
    };
    readonly systemClockOffset?: number;
    readonly retryStrategy?: () => Promise<RetryStrategyLike>;
  };
}

interface LeanState {
  /** What was added to the client's stack after it was built, in order (the SDK's own is not here). */
  entries: Entry[];
  /** A middleware was placed relative to another (the SDK's order cannot be rebuilt): SDK path only. */
  relative: boolean;
  /** Bumped whenever `entries` change (each module copy's ordering of them is then stale). */
  version: number;
  readonly endpoints: Map<string, Endpoint | null>;
}

// On the client itself, under a registered symbol: a process may load this module twice (as ESM and
// as CommonJS, e.g. under tsx), and a module-level map would then miss the other copy's clients.
const STATE = Symbol.for('job-details-archive.leanGets');
const stateOf = (client: object): LeanState | undefined => (client as { [STATE]?: LeanState })[STATE];

/**
 * Each client's `entries` in the order a resolved SDK stack runs them, with this path's own, for the
 * state's version. Per module copy, not on the shared state: this path's own middleware throws this
 * copy's LeanMiss, which only this copy's catch knows as a miss (another copy's would escape it).
 */
const orderings = new WeakMap<LeanState, { readonly version: number; readonly mws: readonly Middleware[] }>();

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Why the fast path gave a GET back to the SDK (never leaves this module). */
class LeanMiss extends Error {
  constructor(
    message: string,
    options?: { cause?: unknown },
    /** The answer's HTTP status, when S3 answered (the fast path reads no error body). */
    readonly status?: number,
  ) {
    super(message, options);
  }
}

/** What the client's retry strategy is asked for, as the SDK's retry middleware asks it (V2 API). */
interface RetryToken {
  getRetryCount(): number;
}
interface RetryStrategyLike {
  acquireInitialRetryToken?(scope: string): Promise<RetryToken>;
  refreshRetryTokenForRetry?(token: RetryToken, info: { errorType: string }): Promise<RetryToken>;
  recordSuccess?(token: RetryToken): void;
}

// The SDK's classes of a failed attempt it retries (@smithy/core's retry: throttling codes, 429;
// transient statuses, timeouts and network error codes).
const THROTTLING = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * How the SDK's retry would class the fast path's failed attempt: THROTTLING, TRANSIENT, or undefined
 * (not retried: a 403, 404, 301… the SDK path only gives its typed error). A 503 is S3's SlowDown.
 */
const retryClass = (miss: LeanMiss): 'THROTTLING' | 'TRANSIENT' | undefined => {
  // The answer's status (a LeanMiss of the request handler's answer, passed out through the retry
  // boundary) or what a middleware inside the retries threw.
  const inner = miss.cause instanceof LeanMiss ? miss.cause : miss;
  const err = inner.cause as
    | { name?: string; code?: string; $metadata?: { httpStatusCode?: number } }
    | undefined;
  const status = inner.status ?? err?.$metadata?.httpStatusCode;
  if (status === 429 || status === 503 || THROTTLING.has(err?.name ?? '')) return 'THROTTLING';
  if (
    status === 500 ||
    status === 502 ||
    status === 504 ||
    TRANSIENT_NAMES.has(err?.name ?? '') ||
    TRANSIENT_CODES.has(err?.code ?? '')
  )
    return 'TRANSIENT';
  return undefined;
};

/**
 * The fast path's failed attempt is the GET's first attempt: before the SDK path sends the next one,
 * the client's retry strategy grants that retry as the SDK's retry middleware would — waiting its
 * back-off (a throttled S3 is not asked again at once), taking its retry capacity. Returns what to
 * give back when the SDK path then succeeds (as the SDK does on a retry's success), if anything.
 */
const backOff = async (c: ClientParts, miss: LeanMiss): Promise<(() => void) | undefined> => {
  const errorType = retryClass(miss);
  if (!errorType || !c.config.retryStrategy) return undefined;
  const strategy = await c.config.retryStrategy();
  if (!strategy.acquireInitialRetryToken || !strategy.refreshRetryTokenForRetry || !strategy.recordSuccess)
    return undefined;
  try {
    const token = await strategy.refreshRetryTokenForRetry(await strategy.acquireInitialRetryToken(''), {
      errorType,
    });
    return () => strategy.recordSuccess?.(token);
  } catch {
    // No retry left (attempts, capacity): the SDK path's answer is the GET's, as it would be.
    return undefined;
  }
};

const STEP_WEIGHT: Record<Step, number> = {
  initialize: 5,
  serialize: 4,
  build: 3,
  finalizeRequest: 2,
  deserialize: 1,
};
const PRIORITY_WEIGHT = { high: 3, normal: 2, low: 1 } as const;

const namesOf = (o: EntryOptions): string[] => [...(o.name ? [o.name] : []), ...(o.aliases ?? [])];

/** Path segments of a key as the SDK encodes a greedy label (`/{Key+}`): RFC 3986, `/` kept. */
const encodeKey = (key: string): string =>
  key
    .split('/')
    .map((s) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/');

/**
 * Makes `client` (built by shared/clients.ts) able to take the fast path: notes which middleware is
 * the SDK's own, keeps track of what is added later, and learns each bucket's endpoint from its first
 * GET through the SDK.
 */
export const enableLeanGets = (client: S3Client): void => {
  const stack = (client as unknown as ClientParts).middlewareStack;
  const state: LeanState = { entries: [], relative: false, version: 0, endpoints: new Map() };
  // After signing: the request as sent, and the scope the SDK signed it with.
  stack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const bucket = (args.input as { Bucket?: string }).Bucket;
      if (context.commandName === 'GetObjectCommand' && bucket && !state.endpoints.has(bucket)) {
        if (out?.response?.statusCode === 200)
          state.endpoints.set(bucket, learnEndpoint(context, args.request));
      }
      return out;
    },
    { step: 'finalizeRequest', priority: 'low', name: 'jdaLeanGetEndpoint' },
  );
  // From here on, what is added to the stack (and removed again) is kept in step.
  const add = stack.add.bind(stack);
  const addRelativeTo = stack.addRelativeTo.bind(stack);
  const remove = stack.remove.bind(stack);
  const removeByTag = stack.removeByTag.bind(stack);
  const drop = (keep: (e: Entry) => boolean) => {
    state.entries = state.entries.filter(keep);
    state.version++;
  };
  stack.add = (mw, opts = {}) => {
    add(mw, opts);
    const names = namesOf(opts);
    if (opts.override) drop((e) => !namesOf(e.opts).some((n) => names.includes(n)));
    state.entries.push({ mw, opts });
    state.version++;
  };
  stack.addRelativeTo = (mw, opts) => {
    addRelativeTo(mw, opts);
    state.relative = true;
  };
  stack.remove = (toRemove) => {
    const removed = remove(toRemove);
    drop((e) => (typeof toRemove === 'string' ? !namesOf(e.opts).includes(toRemove) : e.mw !== toRemove));
    return removed;
  };
  stack.removeByTag = (tag) => {
    const removed = removeByTag(tag);
    drop((e) => !(e.opts.tags ?? []).includes(tag));
    return removed;
  };
  (client as unknown as { [STATE]?: LeanState })[STATE] = state;
};

/** How a 200 GET reached its bucket, or null when this path cannot reach it the same way. */
// biome-ignore lint/suspicious/noExplicitAny: the SDK's handler context and request
const learnEndpoint = (context: any, request: any): Endpoint | null => {
  const ep = context.endpointV2 as
    | {
        url?: URL;
        headers?: Record<string, unknown>;
        properties?: { authSchemes?: { name?: string }[] };
      }
    | undefined;
  const authScheme = ep?.properties?.authSchemes?.[0];
  const schemeId = context.__smithy_context?.selectedHttpAuthScheme?.httpAuthOption?.schemeId;
  if (!ep?.url || schemeId !== 'aws.auth#sigv4' || (authScheme && authScheme.name !== 'sigv4')) return null;
  if (Object.keys(ep.headers ?? {}).length > 0 || context.__s3RegionRedirect) return null;
  const auth = String(request?.headers?.authorization ?? request?.headers?.Authorization ?? '');
  const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(auth);
  if (!scope?.[1] || !scope[2]) return null;
  const url = ep.url;
  return {
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    basePath: url.pathname.replace(/\/+$/, ''),
    host: url.host,
    authScheme,
    signingRegion: scope[1],
    signingService: scope[2],
  };
};

/** The request a `GetObjectCommand` of `input` sends, unsigned, to the bucket's learned endpoint. */
const buildRequest = (state: LeanState, input: { Bucket?: string; Key?: string }) => {
  const ep = input.Bucket === undefined ? undefined : state.endpoints.get(input.Bucket);
  // A middleware rewrote the input to a bucket not reached yet: the SDK path takes it.
  if (!ep || input.Key === undefined) throw new LeanMiss('no endpoint learned for the input');
  return {
    protocol: ep.protocol,
    hostname: ep.hostname,
    port: ep.port,
    method: 'GET',
    path: `${ep.basePath}/${encodeKey(input.Key)}`,
    query: {},
    headers: { host: ep.host, 'x-amz-content-sha256': EMPTY_SHA256 } as Record<string, string>,
    body: undefined,
  };
};

/**
 * The fast path's stack: the middleware added to the client, in the order a resolved SDK stack runs
 * them (by step, then priority, then as added), around its own three — serialize (first of the
 * serialize step, as the SDK's serializer), a retry boundary and signing (first of finalizeRequest,
 * where the SDK's retry and signing middleware stand).
 */
const ordered = (c: ClientParts, state: LeanState): readonly Middleware[] => {
  const known = orderings.get(state);
  if (known?.version === state.version) return known.mws;
  const own: Entry[] = [
    {
      mw: (next) => async (args) => next({ ...args, request: buildRequest(state, args.input) }),
      opts: { step: 'serialize' },
    },
    {
      mw: (next) => async (args) => {
        try {
          return await next(args);
        } catch (err) {
          throw new LeanMiss('not a 200', { cause: err });
        }
      },
      opts: { step: 'finalizeRequest', priority: 'high' },
    },
    {
      mw: (next) => async (args) => {
        const ep = state.endpoints.get(args.input.Bucket) as Endpoint;
        const signer = await c.config.signer(ep.authScheme);
        const request = await signer.sign(args.request, {
          signingDate: new Date(Date.now() + (c.config.systemClockOffset ?? 0)),
          signingRegion: ep.signingRegion,
          signingService: ep.signingService,
        });
        return next({ ...args, request });
      },
      opts: { step: 'finalizeRequest', priority: 'high' },
    },
  ];
  const all = [...own, ...state.entries].map((e, i) => ({ e, i }));
  const weight = (e: Entry) =>
    STEP_WEIGHT[e.opts.step ?? 'initialize'] * 10 + PRIORITY_WEIGHT[e.opts.priority ?? 'normal'];
  all.sort((x, y) => weight(y.e) - weight(x.e) || x.i - y.i);
  const mws = all.map(({ e }) => e.mw);
  orderings.set(state, { version: state.version, mws });
  return mws;
};

/**
 * Says that a wrapper around an S3 client (a Proxy of it with its own `send`) sends a
 * `GetObjectCommand` to `target` unchanged: its `get` answers this key with `target`. The fast path
 * then runs on `target` (its middleware included); a wrapper that does not say so gets its `send`
 * called for every hot GET, as for any other request (tests' fault injection at the client boundary).
 */
export const SENDS_GETS_TO: unique symbol = Symbol.for('job-details-archive.sendsGetsTo') as never;

/** The client whose own SDK `send` a GET through `s3` reaches unchanged, or null if a wrapper intervenes. */
const unwrapped = (s3: S3Client): S3Client | null => {
  let c: S3Client | undefined = s3;
  for (let hops = 0; c && hops < 8; hops++) {
    if (c.send === (Object.getPrototypeOf(c) as S3Client | null)?.send) return c;
    const next: S3Client | undefined = (c as unknown as { [SENDS_GETS_TO]?: S3Client })[SENDS_GETS_TO];
    c = next === c ? undefined : next;
  }
  return null;
};

/**
 * A hot object's bytes, ETag and user metadata (as `getObjectBytes`: null when it does not exist).
 * Clients not built by shared/clients.ts, wrappers that do not say they send GETs unchanged
 * (`SENDS_GETS_TO`), and buckets not yet reached go through `s3.send`.
 */
export const getHotObjectBytes = async (
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<FetchedObject | null> => {
  const client = unwrapped(s3);
  const state = client && stateOf(client);
  if (!client || !state?.endpoints.get(bucket) || state.relative) return getObjectBytes(s3, bucket, key);
  const c = client as unknown as ClientParts;
  const input = { Bucket: bucket, Key: key };
  const context = { commandName: 'GetObjectCommand', clientName: 'S3Client' };
  // The 200 this call received, if a middleware then failed the call: its body is not read.
  let received: HttpResponseLike | undefined;
  const send: Handler = async (args) => {
    const { response } = await c.config.requestHandler.handle(args.request);
    if (response.statusCode !== 200) {
      // Drained, so the connection is kept for the next request.
      response.body?.resume?.();
      throw new LeanMiss(`status ${response.statusCode}`, undefined, response.statusCode);
    }
    received = response;
    const h = response.headers;
    const metadata: Record<string, string> = {};
    for (const name in h) if (name.startsWith('x-amz-meta-')) metadata[name.slice(11)] = h[name] as string;
    return {
      response,
      output: {
        Body: response.body,
        ETag: h.etag,
        ContentLength: h['content-length'] === undefined ? undefined : Number(h['content-length']),
        Metadata: metadata,
      },
    };
  };
  let out: { output: { Body: AsyncIterable<Uint8Array>; ETag?: string; Metadata: Record<string, string> } };
  try {
    let handler = send;
    const mws = ordered(c, state);
    for (let i = mws.length - 1; i >= 0; i--) handler = (mws[i] as Middleware)(handler, context);
    out = await handler({ input });
  } catch (err) {
    received?.body?.destroy?.();
    if (!(err instanceof LeanMiss)) throw err;
    const giveBack = await backOff(c, err);
    const got = await getObjectBytes(s3, bucket, key);
    if (got) giveBack?.();
    return got;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of out.output.Body)
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
  return { bytes, etag: normalizeEtag(out.output.ETag), size: bytes.length, metadata: out.output.Metadata };
};
