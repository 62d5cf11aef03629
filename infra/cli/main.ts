import { relative, resolve } from 'node:path';
import { config } from '../../shared/config';
import { InvalidInputError } from '../../shared/errors';
import { applyStackEnv, defaultDataDir, type LocalStack, startLocalStack } from '../local/stack';
import { packageVersion } from '../package-root';
import {
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  helpText,
  isUsageError,
  parseFlags,
  stringFlag,
  UsageError,
  usageLine,
} from './args';
import { COMMANDS, generalHelp } from './commands';
import { contextFromConfig, type OwnedContext, targetKind } from './context';
import { dataDirProblem } from './data-dir';
import { type Output, processOutput } from './output';
import { watchRequests } from './progress';

/**
 * `jobarchive <command> [options]`: parse, pick the target, run, exit. The only place that decides
 * to start the embedded local stack — and that stops it again, also on SIGINT/SIGTERM.
 *
 * Exit codes: 0 ok · 1 the command failed · 2 bad arguments (one line on stderr) · 130/143 interrupted
 * (SIGINT/SIGTERM; `up` ends 0 on its first one once the stack is up, 1 when its stack dies).
 */
export const runCli = async (argv: readonly string[], io: Output = processOutput()): Promise<number> => {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.err(
      usageLine(
        undefined,
        new InvalidInputError('command', `missing; one of ${Object.keys(COMMANDS).join(', ')}`),
      ),
    );
    return EXIT_USAGE;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    io.out(packageVersion());
    return EXIT_OK;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const cmd = name === 'help' && rest[0] !== undefined ? COMMANDS[rest[0]] : undefined;
    io.out(cmd ? helpText(cmd.spec) : generalHelp());
    return EXIT_OK;
  }
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) {
    const known = Object.keys(COMMANDS).join(', ');
    io.err(
      usageLine(
        undefined,
        new InvalidInputError('command', `unknown command ${JSON.stringify(name)}; one of ${known}`),
      ),
    );
    return EXIT_USAGE;
  }

  let opts: unknown;
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(cmd.spec, rest);
    if (flags.help === true) {
      io.out(helpText(cmd.spec));
      return EXIT_OK;
    }
    opts = cmd.parse(flags);
  } catch (err) {
    if (!isUsageError(err)) throw err;
    io.err(usageLine(name, err));
    return EXIT_USAGE;
  }

  if (cmd.offline) {
    try {
      return await cmd.offline(opts, io);
    } catch (err) {
      if (isUsageError(err)) {
        io.err(usageLine(name, err));
        return EXIT_USAGE;
      }
      io.err(`jobarchive ${name}: ${(err as Error).name}: ${(err as Error).message.split('\n')[0]}`);
      return EXIT_FAILURE;
    }
  }

  let stack: LocalStack | undefined;
  let ctx: OwnedContext | undefined;
  // Registered with `on` (not `once`) so it stays the deciding listener: the stack's own signal hook
  // (owner-hooks) then only signals the emulators instead of re-raising the signal at us.
  let interrupted: { sig: NodeJS.Signals; at: number } | undefined;
  const interruptCode = (sig: NodeJS.Signals): number => (sig === 'SIGINT' ? 130 : 143);
  // Set while the embedded stack starts: an interrupt then abandons the start (which stops whatever it
  // spawned) and the command ends with 130/143 — a start can take tens of seconds on a loaded machine.
  let starting: AbortController | undefined;
  // Aborted on the first interrupt: the command's work in native code stops (CliContext.interrupted).
  const aborted = new AbortController();
  let signalled: (sig: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((res) => {
    signalled = res;
  });
  const stopOnSignal = (sig: NodeJS.Signals): void => {
    if (interrupted) {
      // One Ctrl-C can arrive twice (the terminal signals the whole group, and npm forwards it too).
      if (interrupted.sig === sig && Date.now() - interrupted.at < 1_000) return;
      process.exit(interruptCode(sig)); // a second Ctrl-C: stop waiting
    }
    interrupted = { sig, at: Date.now() };
    if (starting) {
      io.err(`jobarchive ${name}: interrupted (${sig}) while the embedded stack was starting; stopping it`);
      starting.abort();
      return;
    }
    // A command that runs until a signal (`up`) ends normally on its first one.
    if (cmd.untilSignal) {
      signalled(sig);
      return;
    }
    io.err(`jobarchive ${name}: interrupted (${sig}), stopping`);
    aborted.abort();
    ctx?.close();
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(interruptCode(sig)));
  };
  process.on('SIGINT', stopOnSignal);
  process.on('SIGTERM', stopOnSignal);
  // Spawned with an IPC channel (by a test or a dev tool), `up` also ends when that parent goes away:
  // a parent that crashes leaves no stack behind.
  const parentGone = (): void => stopOnSignal('SIGTERM');
  if (cmd.untilSignal && process.channel) process.once('disconnect', parentGone);
  try {
    try {
      const table = stringFlag(flags, 'table');
      const bucket = stringFlag(flags, 'bucket');
      const kind = targetKind(config(), flags.aws === true || cmd.awsOnly(opts));
      if (cmd.embeddedOnly && kind !== 'embedded') {
        throw new InvalidInputError(
          'environment',
          `${name} runs on the embedded stack only: unset AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL_DYNAMODB`,
        );
      }
      const dataDirFlag = stringFlag(flags, 'data-dir');
      if (kind === 'external' && dataDirFlag !== undefined) {
        // The flag would be ignored: the command talks to the endpoints or AWS, not to that folder.
        const cfg = config();
        const why =
          cfg.s3Endpoint !== undefined || cfg.dynamoEndpoint !== undefined
            ? `AWS_ENDPOINT_URL_* are set (${cfg.dynamoEndpoint ?? 'AWS'} / ${cfg.s3Endpoint ?? 'AWS'}, e.g. \`jobarchive up\`'s exports), so ${name} talks to them; unset them to use the embedded stack in ${dataDirFlag}, or drop --data-dir`
            : `${name} talks to AWS here (${flags.aws === true ? '--aws' : 'a deployed state machine'}); drop --data-dir`;
        throw new InvalidInputError('--data-dir', `is not used: ${why}`);
      }
      if (kind === 'embedded') {
        const dataDir = resolve(dataDirFlag ?? defaultDataDir());
        const problem = dataDirProblem(dataDir);
        if (problem) throw new InvalidInputError('--data-dir', problem);
        starting = new AbortController();
        try {
          stack = await startLocalStack({
            dataDir,
            signal: starting.signal,
            ...(table !== undefined ? { tableName: table } : {}),
            ...(bucket !== undefined ? { bucketName: bucket } : {}),
          });
        } finally {
          starting = undefined;
        }
        // Interrupted just as the start finished (a reused stack is not abandoned midway): let go of it.
        if (interrupted) return interruptCode(interrupted.sig);
        applyStackEnv(stack);
        const rel = relative(process.cwd(), stack.dataDir);
        const where = rel === '' ? '.' : rel.startsWith('..') ? stack.dataDir : rel;
        const { supervisor, dynamodb, s3rver } = stack.pids;
        io.err(
          `jobarchive: embedded stack in ${where} (${stack.owned ? '' : 'already running, reused; '}pids supervisor ${supervisor}, dynamodb ${dynamodb}, s3rver ${s3rver})`,
        );
        ctx = {
          ...contextFromConfig(
            config(),
            { table: stack.tableName, bucket: stack.bucketName },
            `embedded stack in ${where}`,
          ),
          interrupted: aborted.signal,
        };
      } else {
        const cfg = config();
        const target =
          cfg.s3Endpoint || cfg.dynamoEndpoint
            ? `endpoints ${cfg.dynamoEndpoint ?? 'AWS'} / ${cfg.s3Endpoint ?? 'AWS'}`
            : `AWS ${cfg.region}`;
        ctx = {
          ...contextFromConfig(cfg, { table, bucket }, target, cmd.needs(opts)),
          interrupted: aborted.signal,
        };
      }
    } catch (err) {
      if (!isUsageError(err)) throw err;
      io.err(usageLine(name, err));
      return EXIT_USAGE;
    }
    const held = stack;
    if (cmd.untilSignal) {
      return await cmd.untilSignal(ctx, opts, io, {
        stopped,
        gone: () => held?.gone() ?? [],
        logs: held ? `${held.dataDir}/logs` : '',
      });
    }
    const requests = cmd.showsRequests ? watchRequests(io, name, { s3: ctx.s3, ddb: ctx.ddb }) : undefined;
    try {
      return await cmd.run(ctx, opts, io);
    } finally {
      requests?.done();
    }
  } catch (err) {
    // Requests cut off by an interrupt fail on the way out; the interrupt is the story, not them.
    if (interrupted) return interruptCode(interrupted.sig);
    if (err instanceof UsageError) {
      io.err(usageLine(name, err));
      return EXIT_USAGE;
    }
    const e = err as Error;
    io.err(`jobarchive ${name}: ${e?.name ?? 'Error'}: ${(e?.message ?? String(err)).split('\n')[0]}`);
    return EXIT_FAILURE;
  } finally {
    ctx?.close();
    await stack?.stop();
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    process.off('disconnect', parentGone);
  }
};

/** Runs the CLI as the process: exit once stdout has been flushed. */
export const main = (argv: readonly string[] = process.argv.slice(2)): void => {
  // A reader that stops reading (`| head`) closes the pipe: the rest of the result has nowhere to go,
  // so it is dropped and the command ends as it would have (its stack stopped), not with an EPIPE trace.
  // The same on stderr (`2>&1 | head`: progress, warnings and usage lines meet the closed pipe too).
  const dropOnEpipe = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  };
  process.stdout.on('error', dropOnEpipe);
  process.stderr.on('error', dropOnEpipe);
  runCli(argv).then(
    (code) => {
      process.stdout.write('', () => process.exit(code));
    },
    (err: unknown) => {
      process.stderr.write(
        `jobarchive: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(EXIT_FAILURE);
    },
  );
};

if (require.main === module) main();
