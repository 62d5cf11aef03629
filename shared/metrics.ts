import type { FinalizeRequestMiddleware, MiddlewareStack } from '@smithy/types';

/** Request counts reported by every step (the report sums them). */
export interface RequestCounts {
  s3: number;
  dynamodb: number;
}

export const zeroCounts = (): RequestCounts => ({ s3: 0, dynamodb: 0 });

export const addCounts = (a: RequestCounts, b: Partial<RequestCounts> | undefined): RequestCounts => ({
  s3: a.s3 + (b?.s3 ?? 0),
  dynamodb: a.dynamodb + (b?.dynamodb ?? 0),
});

/**
 * Counts every request a client sends (finalizeRequest runs once per attempt, so retries count).
 */
// biome-ignore lint/suspicious/noExplicitAny: works for any SDK client's stack
type AnyStack = MiddlewareStack<any, any>;

export const countRequests = (
  client: { middlewareStack: unknown },
  kind: keyof RequestCounts,
  into: RequestCounts,
): void => {
  // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
  const count: FinalizeRequestMiddleware<any, any> = (next) => async (args) => {
    into[kind] += 1;
    return next(args);
  };
  (client.middlewareStack as AnyStack).add(count, {
    step: 'finalizeRequest',
    name: `jdaCount_${kind}`,
    override: true,
  });
};
