import { buildStepDeps } from '../../functions/deps';
import type { RunInput } from '../../shared/archive/steps/types';
import { s3ClientFrom } from '../../shared/clients';
import type { ArchiverStep } from '../construct/step-names';
import type { StepHandler } from '../local/runner';
import type { CliContext } from './context';
import type { Output } from './output';
import { startProgress } from './progress';
import type { RunOutcome } from './run-summary';

/**
 * `jobarchive run` without --state-machine-arn: the CDK-synthesized definition executed in-process
 * by infra/local/runner with the real handlers, wired to this context's table, bucket and settings
 * (Lambda wires the same factories from its environment: functions/deps.ts).
 *
 * Progress comes from wrapping the handlers: each Plan result grows the bar by its page's groups,
 * each group an ArchiveBatch result reports (done or failed) advances it.
 */
export const runLocally = async (ctx: CliContext, input: RunInput, io: Output): Promise<RunOutcome> => {
  io.err('run: running the archiver state machine (as CDK synthesizes it) in-process');
  // Loaded on demand: the interpreter is heavy and only this command needs it. The installed package
  // ships the synthesized definition (no CDK needed); a checkout synthesizes it.
  const { runArchiverLocally, stepHandlers } = require('../local/runner') as typeof import('../local/runner');

  const progress = startProgress(io, 'run: groups', 0);
  const after =
    (inner: StepHandler, seen: (out: unknown) => void): StepHandler =>
    async (event, context) => {
      const out = await inner(event, context);
      seen(out);
      return out;
    };
  let pages = 0;
  const withProgress = (h: Record<ArchiverStep, StepHandler>): Record<ArchiverStep, StepHandler> => ({
    ...h,
    plan: after(h.plan, (out) => {
      const groups = (out as { groups?: unknown } | null)?.groups;
      pages++;
      progress.grow(typeof groups === 'number' ? groups : 0);
      progress.tick(0, `(page ${pages})`);
    }),
    'archive-batch': after(h['archive-batch'], (out) => {
      const results = (out as { results?: unknown } | null)?.results;
      progress.tick(Array.isArray(results) ? results.length : 1);
    }),
  });

  const deps = buildStepDeps(ctx.cfg, { bucket: ctx.bucket, table: ctx.table });
  let result: Awaited<ReturnType<typeof runArchiverLocally>>;
  try {
    result = await runArchiverLocally({
      input: { ...input },
      handlers: (sink) => withProgress(stepHandlers(() => deps, sink)),
      bucket: ctx.bucket,
      mapS3: () => s3ClientFrom(ctx.cfg),
    });
  } finally {
    progress.done();
    deps.destroy();
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
