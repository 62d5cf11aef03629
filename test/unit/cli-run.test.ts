/**
 * `jobarchive run`: the human summary of a report, and following an execution in AWS. Step
 * Functions has no emulator here (aws-local-stepfunctions interprets ASL, it does not serve the
 * StartExecution / DescribeExecution / GetExecutionHistory API), so the AWS path runs against
 * aws-sdk-client-mock.
 */

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { COMMANDS } from '../../infra/cli/commands';
import { makeContext } from '../../infra/cli/context';
import { memoryOutput } from '../../infra/cli/output';
import { startProgress, watchRequests } from '../../infra/cli/progress';
import { runCommand } from '../../infra/cli/run';
import { summarizeRunReport } from '../../infra/cli/run-summary';
import { executionName, startAndFollow } from '../../infra/cli/sfn-follow';
import type { RunReport } from '../../shared/archive/steps/types';
import { parseConfig } from '../../shared/config';

const ARN = 'arn:aws:states:us-east-1:123456789012:stateMachine:jda-archiver';
const EXEC = 'arn:aws:states:us-east-1:123456789012:execution:jda-archiver:x';
const MAP_RUN = `${EXEC}/map:abc`;

const report = (over: Partial<RunReport> = {}): RunReport => ({
  runId: 'jobarchive-1',
  now: '2026-05-01T00:00:00.000Z',
  cutoff: '2026-04-01T00:00:00.000Z',
  dryRun: false,
  jobsPlanned: 12,
  jobsArchived: 10,
  jobsSkipped: 1,
  jobsQuarantined: [
    { shopId: 's1', jobId: 'j1', reason: 'corrupt flush object: bad gzip' },
    { shopId: 's1', jobId: 'j2', reason: 'corrupt flush object: bad JSON' },
  ],
  jobsQuarantinedCount: 2,
  partsWritten: 3,
  bytesIn: 40_960,
  bytesOut: 10_240,
  objectsDeleted: 25,
  objectsKept: 1,
  deleteErrors: 0,
  jobsDeleted: 9,
  groupsOk: 3,
  groupsFailed: [{ shopId: 's2', month: '2026-03', error: 'VerificationError', cause: 'sha256 differs' }],
  groupsFailedCount: 1,
  pages: 1,
  requests: { s3: 120, dynamodb: 7 },
  reportKey: 'job-details-runs/jobarchive-1/report.json',
  ...over,
});

describe('summarizeRunReport', () => {
  it('says what was archived, the bytes in → out, deletes, quarantines by reason, failed groups and requests', () => {
    const text = summarizeRunReport(report(), 's3://b').join('\n');
    expect(text).toContain('12 planned: 10 archived, 1 skipped, 2 quarantined');
    expect(text).toContain('3 written, 40.0 KiB in → 10.0 KiB out (4.0× smaller)');
    expect(text).toContain('25 hot objects deleted (9 jobs fully), 1 kept, 0 errors');
    expect(text).toContain('2 × corrupt flush object');
    expect(text).toContain('s2 2026-03: VerificationError — sha256 differs');
    expect(text).toContain('S3 120, DynamoDB 7');
    expect(text).toContain('s3://b/job-details-runs/jobarchive-1/report.json');
  });

  it('names the groups whose objects an earlier attempt of the run deleted (not in the count), never as 0 deleted', () => {
    const text = summarizeRunReport(
      report({ deletedEarlier: [{ shopId: 's3', month: '2026-02', jobs: 4, parts: 1 }] }),
    );
    expect(text.join('\n')).toContain(
      "s3 2026-02: 4 jobs' objects deleted by an earlier attempt of this run, not counted (1 part(s) it settled)",
    );
    expect(summarizeRunReport(report()).join('\n')).not.toContain('earlier attempt');
    // More than the summary lists (and than the report keeps): the rest are counted, not dropped.
    const many = Array.from({ length: 100 }, (_, i) => ({
      shopId: `s${i}`,
      month: '2026-02',
      jobs: 1,
      parts: 1,
    }));
    const long = summarizeRunReport(report({ deletedEarlier: many, deletedEarlierCount: 130 })).join('\n');
    expect(long).toContain('… 120 more groups');
    // The report lists 100 of the 130: the other 30 are listed nowhere, so it must not say it lists them all.
    expect(long).not.toContain('(the report lists them)');
    expect(long).toContain('… 120 more groups (the report lists 90 of them)');
  });

  it('says an idle run filed no report (reportKey null), never a key named null', () => {
    const idle = report({ jobsPlanned: 0, jobsQuarantined: [], jobsQuarantinedCount: 0, reportKey: null });
    const text = summarizeRunReport(idle, 's3://b').join('\n');
    expect(text).toContain('report:   none filed');
    expect(text).not.toContain('null');
  });

  it('marks dry runs, and words every figure as what a real run would do', () => {
    const lines = summarizeRunReport(report({ dryRun: true }));
    expect(lines[0]).toContain('DRY RUN');
    const text = lines.join('\n');
    expect(text).toContain('12 planned: 10 would be archived, 1 skipped, 2 quarantined');
    expect(text).toContain('3 would be written, 40.0 KiB of hot objects listed');
    expect(text).toContain('25 hot objects would be deleted (9 jobs fully), 1 would be kept, 0 errors');
    expect(text).not.toMatch(/\d+ archived of|\d+ written,|out \(/);
  });
});

const event = (id: number, type: string, extra: Partial<HistoryEvent> = {}): HistoryEvent => ({
  id,
  type: type as HistoryEvent['type'],
  timestamp: new Date(0),
  ...extra,
});

describe('startAndFollow (AWS, mocked)', () => {
  const sfnMock = mockClient(SFNClient);
  afterEach(() => sfnMock.reset());

  it('starts with the run input, prints states and map run progress, and returns the output', async () => {
    sfnMock.on(StartExecutionCommand).resolves({ executionArn: EXEC, startDate: new Date() });
    sfnMock
      .on(DescribeExecutionCommand)
      .resolvesOnce({ status: 'RUNNING', executionArn: EXEC, stateMachineArn: ARN, startDate: new Date() })
      .resolves({
        status: 'SUCCEEDED',
        executionArn: EXEC,
        stateMachineArn: ARN,
        startDate: new Date(),
        output: JSON.stringify(report()),
      });
    // Newest first, as asked (reverseOrder); the second poll sees two more events.
    sfnMock
      .on(GetExecutionHistoryCommand)
      .resolvesOnce({
        events: [
          event(3, 'MapRunStarted', { mapRunStartedEventDetails: { mapRunArn: MAP_RUN } }),
          event(2, 'TaskStateEntered', { stateEnteredEventDetails: { name: 'Plan' } }),
          event(1, 'ExecutionStarted'),
        ],
      })
      .resolves({
        events: [
          event(5, 'ExecutionSucceeded'),
          event(4, 'TaskStateEntered', { stateEnteredEventDetails: { name: 'Report' } }),
          event(3, 'MapRunStarted', { mapRunStartedEventDetails: { mapRunArn: MAP_RUN } }),
        ],
      });
    sfnMock.on(DescribeMapRunCommand).resolves({
      status: 'SUCCEEDED',
      itemCounts: {
        pending: 0,
        running: 0,
        succeeded: 4,
        failed: 0,
        timedOut: 0,
        aborted: 0,
        total: 4,
        resultsWritten: 0,
      },
    } as never);

    const io = memoryOutput();
    const sleeps: number[] = [];
    const r = await startAndFollow(new SFNClient({}), ARN, { olderThanDays: 30 }, io, {
      pollMs: 1500,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });

    const start = sfnMock.commandCalls(StartExecutionCommand)[0]?.args[0].input;
    expect(start?.stateMachineArn).toBe(ARN);
    expect(JSON.parse(start?.input ?? '')).toEqual({ olderThanDays: 30 });
    expect(start?.name).toMatch(/^jobarchive-\d{8}T\d{9}Z-[0-9a-f]{6}$/);
    expect(r).toMatchObject({ status: 'SUCCEEDED', executionArn: EXEC, output: report() });
    expect(sleeps).toEqual([1500]);
    expect(io.stderr).toEqual([
      `run: started ${EXEC}`,
      '→ Plan',
      `  map run started: ${MAP_RUN}`,
      '  map run SUCCEEDED: 4/4 groups done, 0 running, 0 failed',
      '→ Report',
      'execution succeeded',
    ]);
  });

  it('a failed execution is exit code 1 with its error on stderr', async () => {
    sfnMock.on(StartExecutionCommand).resolves({ executionArn: EXEC, startDate: new Date() });
    sfnMock.on(DescribeExecutionCommand).resolves({
      status: 'FAILED',
      executionArn: EXEC,
      stateMachineArn: ARN,
      startDate: new Date(),
      error: 'States.TaskFailed',
      cause: 'plan: AccessDenied',
    });
    sfnMock.on(GetExecutionHistoryCommand).resolves({
      events: [
        event(2, 'ExecutionFailed', {
          executionFailedEventDetails: { error: 'States.TaskFailed', cause: 'plan: AccessDenied' },
        }),
        event(1, 'ExecutionStarted'),
      ],
    });
    const sfn = new SFNClient({});
    const ctx = makeContext({
      ddb: {} as never,
      s3: {} as never,
      table: 't',
      bucket: 'b',
      cfg: parseConfig({}),
      sfn: () => sfn,
    });
    const io = memoryOutput();
    const { exitCode } = await runCommand(
      ctx,
      { input: {}, stateMachineArn: ARN, pollMs: 10, json: false },
      io,
      { follow: { sleep: async () => undefined } },
    );
    expect(exitCode).toBe(1);
    expect(io.stdout).toEqual([]);
    expect(io.stderr).toContain('execution failed: States.TaskFailed plan: AccessDenied');
    expect(io.stderr[io.stderr.length - 1]).toBe(
      'run: execution FAILED: States.TaskFailed — plan: AccessDenied',
    );
  });

  it('names executions uniquely and validly', () => {
    expect(executionName(new Date('2026-05-01T02:03:04.005Z'), () => 0.5)).toBe(
      'jobarchive-20260501T020304005Z-7fffff',
    );
  });
});

describe('runCommand with a local runner', () => {
  const ctx = makeContext({
    ddb: {} as never,
    s3: {} as never,
    table: 't',
    bucket: 'b',
    cfg: parseConfig({}),
  });

  it('--json prints exactly the execution output', async () => {
    const io = memoryOutput();
    const { exitCode } = await runCommand(ctx, { input: { dryRun: true }, pollMs: 1, json: true }, io, {
      runLocally: async (_c, input) => ({
        status: 'SUCCEEDED',
        output: report({ dryRun: input.dryRun === true }),
      }),
    });
    expect(exitCode).toBe(0);
    expect(io.json()).toEqual(report({ dryRun: true }));
  });

  it('an incomplete run whose report cannot be read says so instead of "listed above"', async () => {
    const io = memoryOutput();
    const { exitCode } = await runCommand(ctx, { input: {}, pollMs: 1, json: false }, io, {
      runLocally: async () => ({
        status: 'FAILED',
        output: null,
        error: 'ArchiveRunIncomplete',
        cause: 'not the JSON cause Report writes',
      }),
    });
    expect(exitCode).toBe(1);
    expect(io.stdout).toEqual([]);
    expect(io.stderr.join('\n')).toContain(
      "some group(s) failed (the report could not be read; the execution's cause: not the JSON cause Report writes)",
    );
    expect(io.stderr.join('\n')).not.toContain('listed above');
  });

  it('refuses, before running, an --older-than-days under which rows expire before their month is archived', async () => {
    const io = memoryOutput();
    let ran = false;
    // The environment's TTL is 90 days: 57 + a whole month (31) + 1 h of grace + 2 days of margin is not below it.
    const run = runCommand(ctx, { input: { olderThanDays: 57, graceHours: 1 }, pollMs: 1, json: true }, io, {
      runLocally: async () => {
        ran = true;
        return { status: 'SUCCEEDED', output: report() };
      },
    });
    await expect(run).rejects.toMatchObject({
      name: 'TtlTooShortError',
      field: 'jobTtlDays',
      jobTtlDays: 90,
      neededDays: 57 + 31 + 1 / 24 + 2,
    });
    await expect(run).rejects.toThrow(
      /olderThanDays 57 \+ a whole month 31 \+ graceHours\/24 0\.041\d* \+ margin 2/,
    );
    expect(ran).toBe(false);
  });
});

describe('progress', () => {
  it('search, audit, forget and redact show their requests as progress (main.ts watches them)', () => {
    const watched = Object.entries(COMMANDS)
      .filter(([, c]) => c.showsRequests === true)
      .map(([name]) => name)
      .sort();
    expect(watched).toEqual(['audit', 'forget', 'redact', 'search']);
  });

  it('counts the requests a command sends, by service: a line at 100, 200, 400 … without a TTY; none after done', async () => {
    // Clients pointed at a closed port: every send fails at once, after the count (its first step).
    const endpoint = 'http://127.0.0.1:9';
    const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
    const s3 = new S3Client({
      endpoint,
      region: 'us-east-1',
      credentials,
      maxAttempts: 1,
      forcePathStyle: true,
    });
    const ddb = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint, region: 'us-east-1', credentials, maxAttempts: 1 }),
    );
    const io = memoryOutput();
    let clock = 0;
    const watch = watchRequests(io, 'audit', { s3, ddb }, () => clock);
    const send = async (n: number, which: 's3' | 'ddb') => {
      for (let i = 0; i < n; i++) {
        clock += 100;
        await (which === 's3'
          ? s3.send(new HeadBucketCommand({ Bucket: 'b' }))
          : ddb.send(new GetCommand({ TableName: 't', Key: { pk: 'x' } }))
        ).catch(() => undefined);
      }
    };
    try {
      await send(60, 's3');
      await send(39, 'ddb');
      expect(io.stderr).toEqual([]); // a quick command prints nothing
      await send(1, 'ddb');
      await send(150, 's3');
      watch.done();
      await send(300, 's3');
      expect(io.stderr).toEqual([
        'audit: 100 requests so far (S3 60, DynamoDB 40), 10 s',
        'audit: 200 requests so far (S3 160, DynamoDB 40), 20 s',
      ]);
    } finally {
      s3.destroy();
      ddb.destroy();
    }
  });

  it('prints plain lines at every 10 % without a TTY', () => {
    const io = memoryOutput();
    const p = startProgress(io, 'seed: jobs', 20);
    for (let i = 0; i < 20; i++) p.tick();
    p.done();
    expect(io.stderr).toEqual([
      'seed: jobs 0/20 (0%)',
      ...Array.from({ length: 10 }, (_, i) => `seed: jobs ${2 * (i + 1)}/20 (${10 * (i + 1)}%)`),
    ]);
  });

  it('redraws one bar in place on a TTY, throttled, ending with a newline', () => {
    const io = { ...memoryOutput(), tty: true, columns: 100 };
    const writes: string[] = [];
    io.errRaw = (t: string) => writes.push(t);
    let clock = 0;
    const p = startProgress(io, 'run: groups', 0, () => clock);
    p.grow(4);
    p.tick();
    clock += 50; // within the redraw interval: no redraw
    p.tick();
    clock += 200;
    p.tick();
    p.tick();
    p.done();
    expect(writes.every((w) => w.startsWith('\r\x1b[2K'))).toBe(true);
    expect(writes[writes.length - 1]).toBe('\r\x1b[2K[########################] run: groups 4/4\n');
    expect(writes.some((w) => w.includes(' 2/4'))).toBe(false);
  });
});
