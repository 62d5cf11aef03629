import type { CommandSpec, Flags } from './args';
import { EXIT_OK } from './args';
import type { CliContext } from './context';
import { type Output, printJson } from './output';
import { stackEnv } from '../local/env';

export const upSpec: CommandSpec = {
  name: 'up',
  short: 'keep the embedded stack up and print its AWS_ENDPOINT_URL_* exports, until Ctrl-C',
  summary:
    'Starts (or joins) the embedded stack of --data-dir, prints the shell exports that point awscli, boto3, ' +
    "the AWS SDKs and this package's code at it, and keeps it running until Ctrl-C (or SIGTERM). Other " +
    'jobarchive commands on the same data dir share it meanwhile.',
  options: {},
  notes: ['eval "$(jobarchive up)" does not return; run it in its own terminal and paste the exports.'],
};

export const parseUpOptions = (flags: Flags): { json: boolean } => ({ json: flags.json === true });

/** Prints the exports, then holds the stack until `stopped` resolves (a signal). */
export const upCommand = async (
  ctx: CliContext,
  { json }: { json: boolean },
  io: Output,
  stopped: Promise<unknown>,
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
  // Nothing else keeps the process alive (the stack's processes are detached): wait for the signal.
  const alive = setInterval(() => undefined, 1 << 30);
  try {
    await stopped;
  } finally {
    clearInterval(alive);
  }
  io.err('jobarchive up: stopping');
  return EXIT_OK;
};
