import { gunzipSync, gzipSync } from 'node:zlib';
import { seededMonth, writeJobs } from '../bench/archive/workload';
import { archiverEnv, getBytes, listKeys, runSteps } from '../support/archiver-fixtures';
jest.setTimeout(300_000);
const blocks = (lines: string[]) => {
  let t = 0;
  let b: string[] = [];
  let n = 0;
  const f = () => {
    if (b.length) t += gzipSync(b.join('\n'), { level: 9 }).length;
    b = [];
    n = 0;
  };
  for (const l of lines) {
    if (n + l.length > 65536) f();
    b.push(l);
    n += l.length;
  }
  f();
  return t;
};
test('peek', async () => {
  const env = await archiverEnv();
  const hot = await writeJobs(env.ddb, env.s3, env.table, [env.bucket], seededMonth(1, '2026-01', 1500));
  await runSteps(env.deps);
  const parts = await listKeys(env.s3, env.bucket, 'job-details-cold/');
  const part = await getBytes(env.s3, env.bucket, parts[0] as string);
  const lines = gunzipSync(part).toString().trim().split('\n');
  const recs = lines.map((l) => JSON.parse(l));
  const base = blocks(lines);
  const out: Record<string, number> = { hot: hot.bytes, part: part.length, base };
  for (const f of ['row', 'job', 'sources', 'details', 'platform_data_ref', 'row_reduced']) {
    out[`-${f}`] =
      base -
      blocks(
        recs.map((r) => {
          const { [f]: _x, ...rest } = r;
          return JSON.stringify(rest);
        }),
      );
  }
  out['-src.sha+etag'] =
    base -
    blocks(
      recs.map((r) =>
        JSON.stringify(
          r.sources ? { ...r, sources: r.sources.map((s: any) => ({ key: s.key, size: s.size })) } : r,
        ),
      ),
    );
  console.log('SIZES', JSON.stringify(out), JSON.stringify(recs[2]).slice(0, 1500));
});
