import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { canonicalJson, type JsonValue, parseJsonExact } from '../../shared/details/json';
import { JobDetailsReader } from '../../shared/reader';
import { archiverEnv } from '../support/archiver-fixtures';
import {
  expectedSearch,
  lookupAll,
  lookupJson,
  runScenario,
  SCENARIO_SETTINGS,
} from '../support/vector-scenario';

/**
 * The Python reader (shared/python/job_details_archive, standard library + boto3) on what the
 * TypeScript archiver wrote on the embedded stack: own parts, a shared part of two shops, a job retried
 * after archival, a redacted part, a job with no details, a job whose row expired — every job read
 * byte-identical (canonical JSON) to JobDetailsReader.lookup, through its command line as a user runs it.
 */
jest.setTimeout(300_000);

const ROOT = resolve(__dirname, '../..');
/** `PYTHON` names an interpreter with boto3 when `python3` on PATH has none (.ci/run sets it). */
const PYTHON = process.env.PYTHON ?? 'python3';

const python = (bucket: string, args: string[]) =>
  spawnSync(PYTHON, ['-m', 'job_details_archive', ...args], {
    cwd: ROOT,
    env: { ...process.env, PYTHONPATH: join(ROOT, 'shared/python'), ECOM_JOB_DETAILS_BUCKET: bucket },
    encoding: 'utf8',
  });

test('the Python reader reads every job the archiver archived exactly as JobDetailsReader does', async () => {
  const env = await archiverEnv(SCENARIO_SETTINGS);
  const scenario = await runScenario(env);
  const expected = await lookupAll(new JobDetailsReader(env.s3, env.bucket), scenario);
  // The scenario is what it says: three archivals of the retried job (two in settled parts, the last
  // in a part with entries, not yet deleted), shared parts, a null details.
  const byCase = new Map(expected.map((e) => [e.job.case.split(',')[0], e.expected]));
  expect(
    (byCase.get('own parts') as { archivals: Array<{ deleted_at: string | null }> }).archivals.map(
      (a) => a.deleted_at === null,
    ),
  ).toEqual([false, false, true]);
  expect(byCase.get('shared part')).toMatchObject({
    archivals: [{ part_key: expect.stringContaining('/_shared/') }],
  });
  expect(byCase.get('row expired before archival (orphan sweep): row null')).toMatchObject({
    archived_row: null,
  });
  for (const { job, expected: want } of expected) {
    const r = python(env.bucket, ['lookup', '--shop', job.shopId, '--job', job.jobId]);
    expect({ job: job.case, status: r.status, stderr: r.stderr }).toEqual({
      job: job.case,
      status: 0,
      stderr: '',
    });
    // Exact numbers both sides (the platform data holds 2^63-1).
    const got = parseJsonExact(r.stdout, 'python stdout') as Record<string, unknown>;
    expect({ job: job.case, json: lookupJson(got) }).toEqual({ job: job.case, json: lookupJson(want) });
    expect(got.provenance).toMatchObject({ source: expect.stringMatching(/archive|both/), warnings: [] });
  }
  // Search: the same archived jobs, newest first, for every scenario document.
  const reader = new JobDetailsReader(env.s3, env.bucket);
  for (const want of await expectedSearch(reader, scenario)) {
    const r = python(env.bucket, ['search', '--shop', want.shop_id, '--doc', want.doc_id]);
    expect({ doc: want.doc_id, status: r.status, stderr: r.stderr }).toEqual({
      doc: want.doc_id,
      status: 0,
      stderr: '',
    });
    const got = parseJsonExact(r.stdout, 'python stdout') as { jobs: unknown };
    expect(canonicalJson(got.jobs as JsonValue)).toBe(canonicalJson(want.jobs as unknown as JsonValue));
  }
});
