import type { FinalizeRequestMiddleware, HandlerExecutionContext, MiddlewareStack } from '@smithy/types';

/**
 * Request counts reported by every step (the report sums them): totals per service, and per API call
 * (`byType`, e.g. `{"s3.GetObject": 12, "s3.ListObjectsV2": 3, "dynamodb.Query": 1}`), because a LIST
 * costs 12× a GET and the cost model needs the mix, not only the sum. Multipart calls
 * (`s3.CreateMultipartUpload`, `s3.UploadPart`, …) are counted like any other.
 */
export interface RequestCounts {
  s3: number;
  dynamodb: number;
  byType?: Record<string, number>;
}

export type RequestKind = 's3' | 'dynamodb';

export const zeroCounts = (): RequestCounts => ({ s3: 0, dynamodb: 0, byType: {} });

const addTypes = (a: Record<string, number> | undefined, b: Record<string, number> | undefined) => {
  const out: Record<string, number> = { ...a };
  for (const [k, n] of Object.entries(b ?? {})) out[k] = (out[k] ?? 0) + n;
  return Object.fromEntries(Object.entries(out).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
};

export const addCounts = (a: RequestCounts, b: Partial<RequestCounts> | undefined): RequestCounts => ({
  s3: a.s3 + (b?.s3 ?? 0),
  dynamodb: a.dynamodb + (b?.dynamodb ?? 0),
  byType: addTypes(a.byType, b?.byType),
});

/** `GetObjectCommand` → `s3.GetObject`. */
export const requestType = (kind: RequestKind, commandName: string | undefined): string =>
  `${kind}.${(commandName ?? 'Unknown').replace(/Command$/, '')}`;

/** Where counted requests go: a plain counter object, or a function (the step meter's scopes). */
export type RequestSink = RequestCounts | ((kind: RequestKind, type: string) => void);

export const countInto = (into: RequestCounts, kind: RequestKind, type: string): void => {
  into[kind] += 1;
  into.byType ??= {};
  into.byType[type] = (into.byType[type] ?? 0) + 1;
};

// biome-ignore lint/suspicious/noExplicitAny: works for any SDK client's stack
type AnyStack = MiddlewareStack<any, any>;

/** Counts every request a client sends (finalizeRequest runs once per attempt, so retries count). */
export const countRequests = (
  client: { middlewareStack: unknown },
  kind: RequestKind,
  into: RequestSink,
): void => {
  // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
  const count = ((next: any, context: HandlerExecutionContext) => async (args: unknown) => {
    const type = requestType(kind, context.commandName);
    if (typeof into === 'function') into(kind, type);
    else countInto(into, kind, type);
    return next(args);
    // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
  }) as FinalizeRequestMiddleware<any, any>;
  (client.middlewareStack as AnyStack).add(count, {
    step: 'finalizeRequest',
    name: `jdaCount_${kind}`,
    override: true,
  });
};
