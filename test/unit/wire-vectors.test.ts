import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  encodeFlushBody,
  flushIdForChunks,
  type JobDetailsPayload,
  PAYLOAD_FIELDS,
  validateJobDetailsPayload,
} from '../../shared/details';
import { validateChunkId } from '../../shared/ids';

/**
 * The wire contract's test vectors (docs/wire-format.md, test/fixtures/wire/vectors.json) against this
 * package's writer. test/python/write_job.py checks the same vectors from Python, and
 * test/integration/wire-contract.test.ts the job rows on DynamoDB Local.
 */
const vectors = JSON.parse(readFileSync(join(__dirname, '../fixtures/wire/vectors.json'), 'utf8')) as {
  flush_ids: { chunk_ids: string[]; flush_id: string; not_python_default_json_dumps?: string }[];
  payloads: { input: JobDetailsPayload; json: string }[];
};

test.each(vectors.flush_ids)(
  'flush id of $chunk_ids is $flush_id',
  ({ chunk_ids, flush_id, not_python_default_json_dumps }) => {
    expect(flushIdForChunks(chunk_ids)).toBe(flush_id);
    // Python's default json.dumps (spaces after separators) gives another id: the recipe names its serialization.
    if (not_python_default_json_dumps) expect(flush_id).not.toBe(not_python_default_json_dumps);
  },
);

test.each(vectors.payloads.map((p, i) => [i, p] as const))(
  'payload %i: the object is gzip of exactly the normalized canonical JSON',
  (_i, { input, json }) => {
    const body = encodeFlushBody(input);
    expect([body[0], body[1]]).toEqual([0x1f, 0x8b]);
    expect(gunzipSync(body).toString('utf8')).toBe(json);
  },
);

test('the payload JSON Schema says what the validator enforces', () => {
  const schema = JSON.parse(
    readFileSync(join(__dirname, '../../docs/schema/flush-payload.schema.json'), 'utf8'),
  ) as {
    required: string[];
    additionalProperties: boolean;
    $defs: { chunkId: { minLength: number; maxLength: number } };
  };
  expect([...schema.required].sort()).toEqual([...PAYLOAD_FIELDS].sort());
  expect(schema.additionalProperties).toBe(false);
  const { minLength, maxLength } = schema.$defs.chunkId;
  expect(() => validateChunkId('x'.repeat(maxLength))).not.toThrow();
  expect(() => validateChunkId('x'.repeat(maxLength + 1))).toThrow();
  expect(() => validateChunkId('x'.repeat(minLength - 1))).toThrow();
  // Every vector payload is valid input.
  for (const p of vectors.payloads) expect(() => validateJobDetailsPayload(p.input)).not.toThrow();
});
