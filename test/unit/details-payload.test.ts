import {
  type JobDetailsPayload,
  parseJobDetailsPayload,
  validateJobDetailsPayload,
} from '../../shared/details';
import { CorruptObjectError, InvalidInputError } from '../../shared/errors';

const KEY = 'job-details/j1/abc.json.gz';

const good = (): Record<string, unknown> => ({
  chunk_ids: ['p0', 'p1'],
  failed: { 'bad-sku': ['d1', 'd2'] },
  skipped: { draft: ['d3'] },
  conflict: { version: [{ doc_id: 'd4', existing_version: 3, incoming_version: 2, message: 'older' }] },
});

/** Runs the reader's parser and returns the CorruptObjectError it raised. */
const corrupt = (value: unknown): CorruptObjectError => {
  try {
    parseJobDetailsPayload(value, KEY);
  } catch (err) {
    if (err instanceof CorruptObjectError) return err;
    throw err;
  }
  throw new Error('expected a CorruptObjectError');
};

const invalid = (value: unknown): InvalidInputError => {
  try {
    validateJobDetailsPayload(value);
  } catch (err) {
    if (err instanceof InvalidInputError) return err;
    throw err;
  }
  throw new Error('expected an InvalidInputError');
};

describe('parseJobDetailsPayload (reader side)', () => {
  it('accepts the seed wire format and returns equal data', () => {
    expect(parseJobDetailsPayload(good(), KEY)).toEqual(good());
  });

  it('ignores unknown top-level fields (a newer writer may add some)', () => {
    expect(parseJobDetailsPayload({ ...good(), added_later: 1 }, KEY)).toEqual(good());
  });

  it.each<[string, (p: Record<string, unknown>) => unknown, string]>([
    ['not an object', () => [1, 2], 'payload: must be a JSON object'],
    ['null', () => null, 'payload: must be a JSON object'],
    ['missing chunk_ids', ({ chunk_ids: _, ...rest }) => rest, 'chunk_ids: is missing'],
    ['missing conflict', ({ conflict: _, ...rest }) => rest, 'conflict: is missing'],
    ['chunk_ids not a list', (p) => ({ ...p, chunk_ids: 'p0' }), 'chunk_ids: must be an array'],
    ['empty chunk id', (p) => ({ ...p, chunk_ids: ['p0', ''] }), 'chunk_ids[1]: invalid chunk id'],
    ['failed is a list', (p) => ({ ...p, failed: ['d1'] }), 'failed: must be an object'],
    [
      'reason holds a string',
      (p) => ({ ...p, skipped: { draft: 'd3' } }),
      'skipped["draft"]: must be an array',
    ],
    ['doc id a number', (p) => ({ ...p, failed: { 'bad-sku': ['d1', 7] } }), 'failed["bad-sku"][1]: doc id'],
    ['conflict item a string', (p) => ({ ...p, conflict: { v: ['d4'] } }), 'conflict["v"][0]: conflict item'],
    [
      'conflict item w/o doc_id',
      (p) => ({ ...p, conflict: { v: [{ id: 'd4' }] } }),
      'conflict["v"][0]["doc_id"]',
    ],
  ])('%s → CorruptObjectError naming the key and the field', (_case, mutate, expected) => {
    const err = corrupt(mutate(good()));
    expect(err.key).toBe(KEY);
    expect(err.message).toContain(KEY);
    expect(err.reason).toContain(expected);
  });

  it('keeps a reason named "__proto__" as data, not as a prototype', () => {
    const parsed = parseJobDetailsPayload(
      JSON.parse('{"chunk_ids":[],"failed":{"__proto__":["d1"]},"skipped":{},"conflict":{}}'),
      KEY,
    );
    expect(Object.getPrototypeOf(parsed.failed)).toBe(Object.prototype);
    expect(Object.entries(parsed.failed)).toEqual([['__proto__', ['d1']]]);
  });
});

describe('validateJobDetailsPayload (writer side)', () => {
  it('accepts a well-formed payload', () => {
    const p: JobDetailsPayload = { chunk_ids: ['p0'], failed: {}, skipped: {}, conflict: {} };
    expect(validateJobDetailsPayload(p)).toEqual(p);
  });

  it.each<[string, (p: Record<string, unknown>) => unknown, string]>([
    ['unknown field (would be lost)', (p) => ({ ...p, failures: {} }), 'payload.failures'],
    ['doc id not a string', (p) => ({ ...p, skipped: { draft: [null] } }), 'payload.skipped["draft"][0]'],
    [
      'conflict field undefined',
      (p) => ({ ...p, conflict: { v: [{ doc_id: 'd', x: undefined }] } }),
      'payload.conflict["v"][0]["x"]',
    ],
    [
      'conflict field NaN',
      (p) => ({ ...p, conflict: { v: [{ doc_id: 'd', n: Number.NaN }] } }),
      'payload.conflict["v"][0]["n"]',
    ],
    [
      'conflict field a Date',
      (p) => ({ ...p, conflict: { v: [{ doc_id: 'd', at: new Date(0) }] } }),
      'payload.conflict["v"][0]["at"]',
    ],
    ['missing skipped', ({ skipped: _, ...rest }) => rest, 'payload.skipped'],
  ])('%s → InvalidInputError naming the field', (_case, mutate, field) => {
    expect(invalid(mutate(good())).field).toBe(field);
  });

  it('rejects a circular conflict item', () => {
    const item: Record<string, unknown> = { doc_id: 'd' };
    item.self = item;
    expect(invalid({ ...good(), conflict: { v: [item] } }).reason).toBe('circular reference');
  });
});
