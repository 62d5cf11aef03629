/**
 * `npm run bench:writer` — write capacity of one typical 200-chunk job, seed "today" layout vs this
 * library, measured by DynamoDB Local (`ReturnConsumedCapacity: 'INDEXES'`) on an embedded local stack
 * that this script starts in a temp dir and always stops. Last stdout line: one JSON object
 * `{"legacyWcu", "newWcu", "ratio", "s3PutsPerJob"}`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { applyStackEnv, type LocalStack, startLocalStack } from '../../infra/local/stack';
import { dynamoClientFrom, s3ClientFrom } from '../../shared/clients';
import { config } from '../../shared/config';
import { JobDetailsStore } from '../../shared/details';
import { JOBS_TABLE } from '../../shared/jobs/schema';
import { LEGACY_GSIS, legacyTableInput, runLegacyJob } from './legacy-layout';
import { formatTable, sumWcu } from './measure';
import { runNewJob } from './new-layout';
import { buildWorkload, CHUNKS, CHUNKS_PER_FLUSH } from './workload';

const TARGET_NEW_WCU = 12;
const TARGET_RATIO = 30;
const LEGACY_TABLE = 'jobs_legacy_layout';

/** A deterministic clock: one second per event from a fixed start, so every run prints the same. */
const clockFrom = (start: string) => {
  let t = Date.parse(start);
  return () => {
    t += 1000;
    return new Date(t);
  };
};

const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

const main = async (): Promise<void> => {
  const dataDir = mkdtempSync(join(tmpdir(), 'jda-bench-writer-'));
  let stack: LocalStack | undefined;
  const cleanups: (() => void)[] = [];
  try {
    stack = await startLocalStack({ dataDir, fresh: true });
    applyStackEnv(stack);
    const cfg = config();
    const ddb = dynamoClientFrom(cfg);
    const s3 = s3ClientFrom(cfg);
    const admin = new DynamoDBClient({ region: cfg.region, endpoint: cfg.dynamoEndpoint });
    cleanups.push(
      () => ddb.destroy(),
      () => s3.destroy(),
      () => admin.destroy(),
    );

    await admin.send(new CreateTableCommand(legacyTableInput(LEGACY_TABLE)));
    await waitUntilTableExists({ client: admin, maxWaitTime: 60 }, { TableName: LEGACY_TABLE });

    const w = buildWorkload();
    const legacyClock = clockFrom('2026-03-14T10:00:00Z');
    const legacy = await runLegacyJob(ddb, LEGACY_TABLE, w, () => legacyClock().toISOString());
    // Sensitivity check only (not the headline): the seed's lower bound of one write per flush.
    const legacyOneWrite = await runLegacyJob(ddb, LEGACY_TABLE, w, () => legacyClock().toISOString(), {
      writesPerFlush: 1,
    });
    const store = new JobDetailsStore(s3, stack.bucketName);
    const next = await runNewJob(ddb, stack.tableName, store, w, clockFrom('2026-03-14T10:00:00Z'));
    const objects = await store.listJobObjects(next.jobId);
    if (objects.length !== next.s3Puts) {
      throw new Error(`expected ${next.s3Puts} S3 objects for the new job, found ${objects.length}`);
    }

    const legacyWcu = sumWcu(legacy.writes);
    const newWcu = sumWcu(next.writes);
    const ratio = Math.round((legacyWcu / newWcu) * 10) / 10;
    const newGsis = [JOBS_TABLE.gsiJobLookup.name, JOBS_TABLE.gsiJobsByStatus.name];
    const out = console.log;

    out(
      `Writer WCU benchmark — one job: ${CHUNKS} chunks, ${CHUNKS_PER_FLUSH} per flush, ${w.totalItems} items, ` +
        `final counters ${JSON.stringify(next.final.counters)} → ${next.final.terminal?.status}`,
    );
    out(
      'Measured by DynamoDB Local with ReturnConsumedCapacity=INDEXES; item KB = item size after the write.',
    );
    out('');
    out(
      formatTable(
        `(a) legacy layout ("today" in the seed), table ${LEGACY_TABLE}`,
        legacy.writes,
        LEGACY_GSIS,
      ),
    );
    out(
      `    + completion read (check_and_complete_job GetItem ConsistentRead): ${legacy.completionRead.rcu} RCU ` +
        `on a ${kb(legacy.completionRead.itemBytes)} item — read capacity, not counted in the WCU total`,
    );
    out(`    final item ${kb(legacy.writes.at(-1)?.itemBytes ?? 0)}; S3 PUTs 0`);
    const oneWrite = sumWcu(legacyOneWrite.writes);
    out(
      `    sensitivity: with ONE write per flush (seed's lower bound, details folded into the counter write) ` +
        `the legacy job costs ${oneWrite} WCU in ${legacyOneWrite.writes.length} writes (${(oneWrite / sumWcu(next.writes)).toFixed(1)}x the new layout)`,
    );
    out('');
    out(formatTable(`(b) new layout (shared/jobs), table ${stack.tableName}`, next.writes, newGsis));
    out(
      `    + S3: ${next.s3Puts} PUTs (1 platform-data.json + ${next.s3Puts - 1} flush objects); no completion read`,
    );
    out(`    final item ${kb(next.writes.at(-1)?.itemBytes ?? 0)}`);
    out('');
    out(
      `createJob is excluded from BOTH totals — job creation happens upstream in both layouts ` +
        `(for reference: legacy create ${legacy.created.total} WCU, new create ${next.created.total} WCU).`,
    );
    out(
      `legacy ${legacyWcu} WCU vs new ${newWcu} WCU per job → ${ratio}x. ` +
        `Seed targets: new ≤ ${TARGET_NEW_WCU} WCU (${newWcu <= TARGET_NEW_WCU ? 'met' : 'NOT met'}), ` +
        `ratio ≥ ${TARGET_RATIO} (${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}).`,
    );
    out(JSON.stringify({ legacyWcu, newWcu, ratio, s3PutsPerJob: next.s3Puts }));
  } finally {
    for (const c of cleanups) c();
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
};

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
