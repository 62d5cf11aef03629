import { AsyncLocalStorage } from 'node:async_hooks';
import { type RequestCounts, zeroCounts } from '../../metrics';

/**
 * Attributes counted requests to the step call that sent them. Clients are built once per process
 * and the local runner runs Map items concurrently in one process, so a before/after snapshot of one
 * shared counter would mix groups; instead each `measure` opens an async scope and the counting
 * middleware (metrics.ts `countRequests`, given `sink`) adds to every scope the request was sent from.
 */
export interface RequestMeter {
  /** Pass as `into` to `countRequests(client, kind, sink)`. */
  readonly sink: RequestCounts;
  /** Everything counted in this process. */
  readonly total: RequestCounts;
  /** Runs `fn` and returns what its requests (and only its) counted. */
  measure<T>(fn: () => Promise<T>): Promise<{ value: T; requests: RequestCounts }>;
}

export const createRequestMeter = (): RequestMeter => {
  const scopes = new AsyncLocalStorage<readonly RequestCounts[]>();
  const total = zeroCounts();
  // countRequests does `into[kind] += 1`: a read then a write; the write carries the increment.
  const counter = (kind: keyof RequestCounts) => ({
    get: (): number => total[kind],
    set: (value: number): void => {
      const delta = value - total[kind];
      total[kind] = value;
      for (const scope of scopes.getStore() ?? []) scope[kind] += delta;
    },
    enumerable: true,
  });
  const sink = Object.defineProperties({} as RequestCounts, {
    s3: counter('s3'),
    dynamodb: counter('dynamodb'),
  });
  return {
    sink,
    total,
    async measure<T>(fn: () => Promise<T>) {
      const mine = zeroCounts();
      const value = await scopes.run([...(scopes.getStore() ?? []), mine], fn);
      return { value, requests: { ...mine } };
    },
  };
};
