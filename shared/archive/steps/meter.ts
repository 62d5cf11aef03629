import { AsyncLocalStorage } from 'node:async_hooks';
import { countInto, type RequestCounts, type RequestKind, zeroCounts } from '../../metrics';

/**
 * Attributes counted requests to the step call that sent them. Clients are built once per process
 * and the local runner runs Map items concurrently in one process, so a before/after snapshot of one
 * shared counter would mix groups; instead each `measure` opens an async scope and the counting
 * middleware (metrics.ts `countRequests`, given `sink`) adds to every scope the request was sent from.
 */
export interface RequestMeter {
  /** Pass as `into` to `countRequests(client, kind, sink)`. */
  readonly sink: (kind: RequestKind, type: string) => void;
  /** Everything counted in this process. */
  readonly total: RequestCounts;
  /** Runs `fn` and returns what its requests (and only its) counted. */
  measure<T>(fn: () => Promise<T>): Promise<{ value: T; requests: RequestCounts }>;
  /** As `measure`, and when `fn` throws, what it counted until then beside the error. */
  settle<T>(
    fn: () => Promise<T>,
  ): Promise<{ value: T; requests: RequestCounts } | { error: unknown; requests: RequestCounts }>;
}

export const createRequestMeter = (): RequestMeter => {
  const scopes = new AsyncLocalStorage<readonly RequestCounts[]>();
  const total = zeroCounts();
  return {
    sink: (kind, type) => {
      countInto(total, kind, type);
      for (const scope of scopes.getStore() ?? []) countInto(scope, kind, type);
    },
    total,
    async measure<T>(fn: () => Promise<T>) {
      const mine = zeroCounts();
      const value = await scopes.run([...(scopes.getStore() ?? []), mine], fn);
      return { value, requests: { ...mine, byType: { ...mine.byType } } };
    },
    async settle<T>(fn: () => Promise<T>) {
      const mine = zeroCounts();
      const copy = () => ({ ...mine, byType: { ...mine.byType } });
      try {
        return { value: await scopes.run([...(scopes.getStore() ?? []), mine], fn), requests: copy() };
      } catch (error) {
        return { error, requests: copy() };
      }
    },
  };
};
