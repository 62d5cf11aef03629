/**
 * `node .ci/node22.cjs tsx test/bench/archive/cpu.ts [--jobs N] [--shops S] [--runs K] [--seed S]` — the archiver's
 * CPU per archived hot object, alone: K fresh seeded months of N jobs over S shops (workload.ts `seededMonth`;
 * `--shops 40 --jobs 450` is close to the steady-year's small shop-months),
 * each archived by one run of the CDK-synthesized definition with the real handlers, on a private
 * embedded stack (always stopped). No bench instrumentation on the clients (request tracing, read
 * units): what is measured is the handlers' work as the construct's Lambda runs it, plus the
 * in-process Step Functions interpreter (runner.ts). `--profile FILE` writes a V8 CPU profile of the
 * runs alone (seeding excluded; open it in Chrome DevTools or speedscope).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { buildStepDeps } from '../../../functions/deps';
import { runArchiverLocally, stepHandlers, synthesizedDefinition } from '../../../infra/local/runner';
import { applyStackEnv, type LocalStack, startLocalStack } from '../../../infra/local/stack';
import type { RunReport } from '../../../shared/archive/steps/types';
import { dynamoClientFrom, s3ClientFrom } from '../../../shared/clients';
import { config } from '../../../shared/config';
import { createTableInput } from '../../../shared/jobs/schema';
import { seededMonth, writeJobs } from './workload';

const MONTH = '2026-01';
const RUN_INPUT = { olderThanDays: 30, graceHours: 0, now: '2026-03-15T00:00:00.000Z' };

const option = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`${name} takes a whole number ≥ 1`);
  return v;
};

const main = async () => {
  const jobs = option('--jobs', 1500);
  const runs = option('--runs', 3);
  const seed = option('--seed', 1);
  const shops = option('--shops', 1);
  const tmp = mkdtempSync(join(tmpdir(), 'jda-bench-cpu-'));
  let stack: LocalStack | undefined;
  try {
    stack = await startLocalStack({ dataDir: join(tmp, 'stack'), fresh: true });
    applyStackEnv(stack);
    const cfg = config();
    const definition = synthesizedDefinition();
    const s3 = s3ClientFrom(cfg);
    const ddb = dynamoClientFrom(cfg);
    const admin = new DynamoDBClient({ region: cfg.region, endpoint: cfg.dynamoEndpoint });
    const profileAt = process.argv.indexOf('--profile');
    const profile = profileAt >= 0 ? process.argv[profileAt + 1] : undefined;
    const session = profile ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
    }
    const rows: string[] = [];
    for (let k = 0; k < runs; k++) {
      const id = `cpu-${k}`;
      await admin.send(new CreateTableCommand(createTableInput(id)));
      await waitUntilTableExists({ client: admin, maxWaitTime: 60 }, { TableName: id });
      await s3.send(new CreateBucketCommand({ Bucket: id }));
      const hot = await writeJobs(ddb, s3, id, [id], seededMonth(seed + k, MONTH, jobs, shops));
      const deps = buildStepDeps(cfg, { bucket: id, table: id });
      await session?.post('Profiler.start');
      const r = await runArchiverLocally({
        definition,
        input: RUN_INPUT,
        handlers: (sink) => stepHandlers(() => deps, sink),
        bucket: id,
        mapS3: () => s3ClientFrom(cfg),
      });
      deps.destroy();
      if (session && profile) {
        const { profile: p } = await session.post('Profiler.stop');
        writeFileSync(`${profile}.${k}.cpuprofile`, JSON.stringify(p));
      }
      const report = r.output as RunReport;
      if (r.status !== 'SUCCEEDED' || report.jobsArchived !== hot.jobs)
        throw new Error(`run ${k}: ${r.status} ${JSON.stringify(r.error ?? report)}`);
      const ms = (s: number) => ((1000 * s) / hot.objects).toFixed(3);
      const steps = Object.entries(r.steps)
        .map(([step, v]) => `${step} ${ms(v.cpuSeconds)}`)
        .join(', ');
      rows.push(
        `run ${k}: ${hot.jobs} jobs, ${hot.objects} hot objects; CPU while handlers ran ${ms(r.handlerCpuSeconds)} ms per hot object (by step: ${steps}), over the whole run ${ms(r.cpuSeconds)}; wall in handlers ${r.taskSeconds.toFixed(2)} s`,
      );
      console.log(rows.at(-1));
    }
    s3.destroy();
    ddb.destroy();
    admin.destroy();
  } finally {
    await stack?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
};

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
