import type { RunInput } from '../../shared/archive/steps/types';
import { InvalidInputError } from '../../shared/errors';
import type { ArchiverStep } from '../construct/step-names';
import type { StepHandler } from '../local/runner';
import type { CliContext } from './context';
import type { Output } from './output';
import { startProgress } from './progress';
import type { RunOutcome } from './run-summary';

/**
 * `jobarchive run` without --state-machine-arn: the CDK-synthesized definition executed in-process
 * by infra/local/runner with the real handlers. The handlers take their table and bucket from
 * shared/config.ts, like in Lambda, so the context must point at the same ones.
 *
 * Progress comes from wrapping the handlers: each Plan result grows the bar by its page's groups,
 * each group an ArchiveBatch result reports (done or failed) advances it.
 */
export const runLocally = async (ctx: CliContext, input: RunInput, io: Output): Promise<RunOutcome> => {
  if (ctx.cfg.jobsTable !== ctx.table || ctx.cfg.detailsBucket !== ctx.bucket) {
    throw new InvalidInputError(
      '--table/--bucket',
      `a local run's handlers use ECOM_JOBS_TABLE / ECOM_JOB_DETAILS_BUCKET (${ctx.cfg.jobsTable ?? 'unset'} / ${ctx.cfg.detailsBucket ?? 'unset'}), not ${ctx.table} / ${ctx.bucket}`,
    );
  }
  io.err('run: running the archiver state machine (as CDK synthesizes it) in-process');
  // Loaded on demand: the interpreter is heavy and only this command needs it. The installed package
  // ships the synthesized definition (no CDK needed); a checkout synthesizes it.
  const { runArchiverLocally, STEP_HANDLERS } =
    require('../local/runner') as typeof import('../local/runner');

  const progress = startProgress(io, 'run: groups', 0);
  const wrap = (step: ArchiverStep, after: (out: unknown) => void): StepHandler => {
    const inner = STEP_HANDLERS[step];
    return async (event, context) => {
      const out = await inner(event, context);
      after(out);
      return out;
    };
  };
  let pages = 0;
  const handlers: Partial<Record<ArchiverStep, StepHandler>> = {
    plan: wrap('plan', (out) => {
      const groups = (out as { groups?: unknown } | null)?.groups;
      pages++;
      progress.grow(typeof groups === 'number' ? groups : 0);
      progress.tick(0, `(page ${pages})`);
    }),
    'archive-batch': wrap('archive-batch', (out) => {
      const results = (out as { results?: unknown } | null)?.results;
      progress.tick(Array.isArray(results) ? results.length : 1);
    }),
  };

  let result: Awaited<ReturnType<typeof runArchiverLocally>>;
  try {
    result = await runArchiverLocally({ input: { ...input }, handlers });
  } finally {
    progress.done();
  }
  const calls = Object.entries(result.taskInvocations)
    .map(([state, n]) => `${state} ×${n}`)
    .join(', ');
  io.err(`run: ${result.status}; task invocations: ${calls || 'none'}`);
  for (const e of result.unexpectedErrors) {
    io.err(`run: warning: unexpected ${e.name} in ${e.state} (${e.step}): ${e.message.split('\n')[0]}`);
  }
  return {
    status: result.status,
    output: result.output,
    ...(result.error ? { error: result.error.error, cause: result.error.cause } : {}),
  };
};
