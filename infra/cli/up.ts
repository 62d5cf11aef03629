import { stackEnv } from '../local/env';
import type { CommandSpec, Flags } from './args';
import { EXIT_FAILURE, EXIT_OK } from './args';
import type { CliContext } from './context';
import { type Output, printJson } from './output';

export const upSpec: CommandSpec = {
  name: 'up',
  short: 'keep the embedded stack up and print its AWS_ENDPOINT_URL_* exports, until Ctrl-C',
  summary:
    'Starts (or joins) the embedded stack of --data-dir, prints the shell exports that point awscli, boto3, ' +
    "the AWS SDKs and this package's code at it, and keeps it running until Ctrl-C (or SIGTERM). Other " +
    'jobarchive commands on the same data dir share it meanwhile.',
  options: {},
  without: { aws: 'it keeps the embedded stack up; against AWS there is nothing to start' },
  notes: [
    'eval "$(jobarchive up)" does not return; run it in its own terminal and paste the exports.',
    'Exit codes: 0 stopped by Ctrl-C / SIGTERM once up; 130 / 143 interrupted while starting; 1 the stack died (an emulator exited) or could not start.',
  ],
};

export const parseUpOptions = (flags: Flags): { json: boolean } => ({ json: flags.json === true });

/** What `up` holds: the signal that ends it, and the stack it watches. */
export interface StackHold {
  /** Resolves on the first SIGINT/SIGTERM (or the IPC parent going away). */
  readonly stopped: Promise<unknown>;
  /** The stack's processes no longer running (empty while it is up). */
  gone(): string[];
  /** Where the emulators' logs are, for the message when they die. */
  readonly logs: string;
}

/** How often `up` checks that its stack still runs. */
const WATCH_MS = 1_000;

/**
 * Prints the exports, then holds the stack until a signal (exit 0) or until the stack dies under it
 * (an emulator crashed or was killed, or someone stopped it): then it says so and exits 1, so
 * nobody keeps using exports that point at nothing.
 */
export const upCommand = async (
  ctx: CliContext,
  { json }: { json: boolean },
  io: Output,
  hold: StackHold,
): Promise<number> => {
  const env = stackEnv({
    dynamoEndpoint: ctx.cfg.dynamoEndpoint ?? '',
    s3Endpoint: ctx.cfg.s3Endpoint ?? '',
    tableName: ctx.table,
    bucketName: ctx.bucket,
  });
  if (json) printJson(io, env);
  else {
    io.out(`# ${ctx.target}: up until Ctrl-C (other commands on this data dir share it)`);
    for (const [k, v] of Object.entries(env)) io.out(`export ${k}=${v}`);
  }
  // The stack's processes are detached (nothing else keeps this process alive): the watch does.
  let watch: NodeJS.Timeout | undefined;
  const died = new Promise<string[]>((res) => {
    watch = setInterval(() => {
      const gone = hold.gone();
      if (gone.length > 0) res(gone);
    }, WATCH_MS);
  });
  try {
    const gone = await Promise.race([hold.stopped.then(() => undefined), died]);
    if (gone) {
      io.err(
        `jobarchive up: the embedded stack died (${gone.join(', ')} no longer running; logs in ${hold.logs}); exiting`,
      );
      return EXIT_FAILURE;
    }
  } finally {
    clearInterval(watch);
  }
  io.err('jobarchive up: stopping');
  return EXIT_OK;
};
