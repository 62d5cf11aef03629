import { UnsupportedRuntimeError } from '../../shared/errors';
import { assertSupportedRuntime } from '../../shared/runtime';

/**
 * Node 20 has no JSON.rawJSON / JSON.isRawJSON: the writer and reader must refuse to load there with a
 * typed error naming Node >= 22 — at import, before createJob could write a row that recordFlush would
 * then fail to complete (`ExactJSON.isRawJSON is not a function`).
 */
const withoutExactJson = <T>(run: () => T): T => {
  const json = JSON as unknown as Record<string, unknown>;
  const saved = { rawJSON: json.rawJSON, isRawJSON: json.isRawJSON };
  delete json.rawJSON;
  delete json.isRawJSON;
  try {
    return run();
  } finally {
    Object.assign(json, saved);
  }
};

const importError = (entry: string): unknown =>
  withoutExactJson(() => {
    let thrown: unknown;
    jest.isolateModules(() => {
      try {
        require(entry);
      } catch (err) {
        thrown = err;
      }
    });
    return thrown;
  });

test.each([
  ['writer', '../../shared/entry/writer'],
  ['reader', '../../shared/entry/reader'],
])(
  'importing the %s without JSON.rawJSON (Node 20) throws UnsupportedRuntimeError naming Node >= 22',
  (_, entry) => {
    const err = importError(entry) as Error & { required?: string; missing?: string[] };
    // isolateModules loads its own copy of the errors module: match by the stable name.
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('UnsupportedRuntimeError');
    expect(err.required).toBe('Node.js >= 22');
    expect(err.missing).toEqual(['JSON.rawJSON', 'JSON.isRawJSON']);
    expect(err.message).toMatch(/needs Node\.js >= 22 \(this is Node\.js v\d+/);
  },
);

test('a runtime that has JSON.rawJSON passes; one lacking only isRawJSON names just that', () => {
  expect(() => assertSupportedRuntime()).not.toThrow();
  const partial = { rawJSON: () => null };
  expect(() => assertSupportedRuntime(partial)).toThrow(UnsupportedRuntimeError);
  expect(() => assertSupportedRuntime(partial)).toThrow(/without JSON\.isRawJSON\)/);
});

test('the entries load normally where JSON.rawJSON exists', () => {
  let loaded: object | undefined;
  jest.isolateModules(() => {
    loaded = require('../../shared/entry/writer') as object;
  });
  expect(Object.keys(loaded ?? {})).toContain('recordFlush');
});
