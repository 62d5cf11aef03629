import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/**
 * The Python reader (shared/python/job_details_archive) passes the conformance vectors (docs/vectors/)
 * and names what it cannot read (Glacier restore, lost or damaged index, pre-1.0 format): its own
 * unittest file over a bucket served from the snapshot's files, no emulator. The live cross-language
 * check is test/integration/python-reader.test.ts.
 */
const ROOT = resolve(__dirname, '../..');
/** `PYTHON` names an interpreter with boto3 when `python3` on PATH has none (.ci/run sets it). */
const PYTHON = process.env.PYTHON ?? 'python3';

test('python3 test/python/test_reader.py: the vectors and the errors', () => {
  const r = spawnSync(PYTHON, [join(ROOT, 'test/python/test_reader.py'), '-v'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  expect({ status: r.status, tail: r.stderr.trim().split('\n').slice(-1)[0] }).toEqual({
    status: 0,
    tail: 'OK',
  });
  expect(Number(/Ran (\d+) tests/.exec(r.stderr)?.[1])).toBeGreaterThanOrEqual(8);
});
