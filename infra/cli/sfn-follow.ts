import {
  DescribeExecutionCommand,
  DescribeMapRunCommand,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  type SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { Output } from './output';

/**
 * Starts an execution of the deployed archiver and follows it to the end: new history events are
 * read newest-first down to the last one already seen (so each poll costs one page, however long
 * the history), states entered and map runs are printed, and each Distributed Map run's item counts
 * are printed when they change.
 */
export interface FollowOptions {
  /** Between polls (default 2000 ms). */
  readonly pollMs?: number;
  /** Injectable for tests; the default waits `ms` on a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Execution name (default `jobarchive-<time>-<random>`). */
  readonly name?: string;
}

export interface FollowResult {
  readonly executionArn: string;
  readonly status: string;
  /** Parsed execution output when it succeeded. */
  readonly output: unknown;
  readonly error?: string;
  readonly cause?: string;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);

export const executionName = (at: Date, random: () => number = Math.random): string =>
  `jobarchive-${at.toISOString().replace(/[-:.]/g, '')}-${Math.floor(random() * 0xffffff)
    .toString(16)
    .padStart(6, '0')}`;

/** The text printed for one history event, or null for events not worth a line. */
export const describeEvent = (e: HistoryEvent): string | null => {
  const t = e.type ?? '';
  if (t.endsWith('StateEntered')) return `→ ${e.stateEnteredEventDetails?.name ?? t}`;
  if (t === 'MapRunStarted') return `  map run started: ${e.mapRunStartedEventDetails?.mapRunArn ?? ''}`;
  if (t === 'MapRunFailed') {
    const d = e.mapRunFailedEventDetails;
    return `  map run failed: ${d?.error ?? ''} ${d?.cause ?? ''}`.trimEnd();
  }
  if (t === 'MapRunSucceeded') return '  map run succeeded';
  if (t === 'TaskFailed') {
    const d = e.taskFailedEventDetails;
    return `  task failed: ${d?.error ?? ''} ${(d?.cause ?? '').slice(0, 300)}`.trimEnd();
  }
  if (t === 'LambdaFunctionFailed') {
    const d = e.lambdaFunctionFailedEventDetails;
    return `  lambda failed: ${d?.error ?? ''} ${(d?.cause ?? '').slice(0, 300)}`.trimEnd();
  }
  if (t === 'ExecutionFailed') {
    const d = e.executionFailedEventDetails;
    return `execution failed: ${d?.error ?? ''} ${(d?.cause ?? '').slice(0, 500)}`.trimEnd();
  }
  if (t === 'ExecutionTimedOut') return 'execution timed out';
  if (t === 'ExecutionAborted') return 'execution aborted';
  if (t === 'ExecutionSucceeded') return 'execution succeeded';
  return null;
};

/** Events with id > `after`, oldest first, reading newest-first pages only as far back as needed. */
const newEvents = async (sfn: SFNClient, executionArn: string, after: number): Promise<HistoryEvent[]> => {
  const out: HistoryEvent[] = [];
  let token: string | undefined;
  do {
    const page = await sfn.send(
      new GetExecutionHistoryCommand({
        executionArn,
        reverseOrder: true,
        maxResults: 1000,
        nextToken: token,
      }),
    );
    for (const e of page.events ?? []) {
      if ((e.id ?? 0) <= after) return out.reverse();
      out.push(e);
    }
    token = page.nextToken;
  } while (token);
  return out.reverse();
};

export const startAndFollow = async (
  sfn: SFNClient,
  stateMachineArn: string,
  input: unknown,
  io: Output,
  opts: FollowOptions = {},
): Promise<FollowResult> => {
  const pollMs = opts.pollMs ?? 2000;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const started = await sfn.send(
    new StartExecutionCommand({
      stateMachineArn,
      name: opts.name ?? executionName(new Date()),
      input: JSON.stringify(input),
    }),
  );
  const executionArn = started.executionArn ?? '';
  io.err(`run: started ${executionArn}`);

  let lastId = 0;
  const mapRuns = new Map<string, string>(); // arn → last printed counts
  for (;;) {
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    // History after Describe: once the status is terminal, this read includes the final events.
    for (const e of await newEvents(sfn, executionArn, lastId)) {
      lastId = Math.max(lastId, e.id ?? 0);
      const arn = e.mapRunStartedEventDetails?.mapRunArn;
      if (arn) mapRuns.set(arn, '');
      const line = describeEvent(e);
      if (line) io.err(line);
    }
    for (const [arn, last] of mapRuns) {
      const run = await sfn.send(new DescribeMapRunCommand({ mapRunArn: arn }));
      const c = run.itemCounts;
      const text = `  map run ${run.status ?? ''}: ${c?.succeeded ?? 0}/${c?.total ?? 0} groups done, ${c?.running ?? 0} running, ${c?.failed ?? 0} failed`;
      if (text !== last) io.err(text);
      if (run.status !== 'RUNNING') mapRuns.delete(arn);
      else mapRuns.set(arn, text);
    }
    const status = described.status ?? 'UNKNOWN';
    if (TERMINAL.has(status)) {
      let output: unknown = null;
      if (described.output !== undefined) {
        try {
          output = JSON.parse(described.output);
        } catch {
          output = described.output;
        }
      }
      return {
        executionArn,
        status,
        output,
        ...(described.error !== undefined ? { error: described.error } : {}),
        ...(described.cause !== undefined ? { cause: described.cause } : {}),
      };
    }
    await sleep(pollMs);
  }
};
