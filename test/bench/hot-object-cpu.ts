/**
 * `npm run bench:hot-cpu [-- --jobs N --rounds R --seed S]` — the archive step's CPU per hot object
 * in process, without S3 or DynamoDB: what the step does with a hot object's bytes once its GET has
 * answered (job-sources.ts: sha256 of the stored bytes, gunzip, parse, validate; merging a job's
 * objects; classify.ts assembleJob with the job's row; part-builder.ts: the record line, its digest,
 * the blocks' deflate, the document filters and the manifest). A seeded month of N jobs of one shop
 * (workload.ts `seededMonth`, the seeded-1500 scenario's jobs), its objects encoded once before the
 * clock starts. Prints each round's µs per hot object (this process's user + system CPU, GC
 * included) and the part's bytes and sha256: equal across code changes that keep the format.
 * The GET itself is `npm run bench:get`; the whole step, `test/bench/archive/cpu.ts`.
 */

import { PartBuilder, type SourceObject, sha256Hex } from '../../shared/archive/format';
import { assembleJob } from '../../shared/archive/steps/archive/classify';
import type { JobRowSnapshot } from '../../shared/archive/steps/archive/job-rows';
import { plannedJob } from '../../shared/archive/steps/plan/plan-rows';
import {
  decodeFlushBody,
  decodePlatformData,
  type JobDetailsPayload,
  type JsonObject,
  mergeAllJobDetails,
} from '../../shared/details';
import { objectsOf, rowOf, seededMonth } from './archive/workload';

const option = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${name} takes a whole number ≥ 1`);
  return v;
};

const SHOP = 'bench-shop.myshopify.com';

interface Input {
  readonly jobId: string;
  readonly status: string;
  readonly completedAt: string;
  readonly row: Record<string, unknown>;
  readonly objects: readonly { key: string; body: Buffer; etag: string }[];
}

const snapshot = (item: Record<string, unknown>): JobRowSnapshot => ({
  job_status: item.job_status as string,
  completed_at: item.completed_at as string,
  created_at: item.created_at as string,
  started_at: item.started_at as string,
  total_items: item.total_items as number,
  processed_items: item.processed_items as number,
  failed_items: item.failed_items as number,
  skipped_items: item.skipped_items as number,
  conflict_items: item.conflict_items as number,
  item,
});

/** One part of the month's jobs, as the archive step builds it once their GETs answered. */
const buildPart = async (jobs: readonly Input[]): Promise<{ size: number; sha256: string }> => {
  let size = 0;
  const builder = new PartBuilder(
    {
      shopId: SHOP,
      month: '2026-01',
      partName: 'bench',
      partKey: 'bench',
      runId: 'bench-run',
      createdAt: '2026-03-15T00:00:00.000Z',
    },
    async (member) => {
      size += member.length;
    },
  );
  await builder.writeHeader();
  for (const j of jobs) {
    const sources: SourceObject[] = [];
    const payloads: JobDetailsPayload[] = [];
    let platform: JsonObject | null = null;
    for (const o of j.objects) {
      sources.push({ key: o.key, size: o.body.length, etag: o.etag, sha256: sha256Hex(o.body) });
      if (o.key.endsWith('.json.gz')) payloads.push(decodeFlushBody(o.body, o.key));
      else platform = decodePlatformData(o.body, o.key);
    }
    const row = snapshot(j.row);
    const planned = plannedJob(j.jobId, j.status, j.completedAt, j.row);
    const record = assembleJob(planned, row, {
      details: mergeAllJobDetails(payloads),
      platformData: platform,
    });
    if (record.kind !== 'ok') throw new Error(`job ${j.jobId}: ${record.reason}`);
    await builder.addJob({
      jobId: j.jobId,
      meta: record.meta,
      details: record.details,
      platformData: record.platformData,
      sources,
      row: record.row,
      inline: record.inline,
    });
  }
  const manifest = await builder.finish();
  return { size, sha256: manifest.sha256 };
};

const main = async () => {
  const n = option('--jobs', 1500);
  const rounds = option('--rounds', 7);
  const seed = option('--seed', 1);
  const jobs: Input[] = [];
  for (const j of seededMonth(seed, '2026-01', n)) {
    const row = rowOf({ ...j, shopId: SHOP });
    jobs.push({
      jobId: j.jobId,
      status: j.status,
      completedAt: j.completedAt,
      row,
      objects: objectsOf(j).map((o) => ({ ...o, etag: sha256Hex(o.body).slice(0, 32) })),
    });
  }
  const objects = jobs.reduce((k, j) => k + j.objects.length, 0);
  console.log(`${jobs.length} jobs, ${objects} hot objects (seed ${seed})`);
  const figures: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.cpuUsage();
    const part = await buildPart(jobs);
    const u = process.cpuUsage(t0);
    const us = (u.user + u.system) / objects;
    figures.push(us);
    console.log(
      `round ${r}: ${us.toFixed(1)} µs CPU per hot object; part ${part.size} bytes, sha256 ${part.sha256}`,
    );
  }
  const settled = figures.slice(1).sort((a, b) => a - b);
  console.log(
    `median of rounds 1–${rounds - 1}: ${(settled[Math.floor(settled.length / 2)] as number).toFixed(1)} µs per hot object`,
  );
};

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
