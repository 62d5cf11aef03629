import { UnsupportedRuntimeError } from './errors';

/** The runtime the writer and reader need: `JSON.rawJSON` / `JSON.isRawJSON` (shared/details/json.ts). */
const REQUIRED = 'Node.js >= 22';
const EXACT_JSON = ['rawJSON', 'isRawJSON'] as const;

/**
 * Throws UnsupportedRuntimeError when the runtime lacks exact-number JSON (Node 20 does): called as the
 * writer and reader entries load, so an older Node fails at import rather than after `createJob` wrote a
 * row that `recordFlush` could then not complete.
 */
export const assertSupportedRuntime = (json: object = JSON): void => {
  const missing = EXACT_JSON.filter((name) => typeof (json as Record<string, unknown>)[name] !== 'function');
  if (missing.length > 0) {
    throw new UnsupportedRuntimeError(
      REQUIRED,
      `Node.js ${process.version}`,
      missing.map((name) => `JSON.${name}`),
    );
  }
};
