import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { errorText, truncate } from '../shared/text';
import { invocationLogger } from './observability';

/**
 * Lambda turns an error a handler throws into the Task's Cause — `{errorType, errorMessage, trace}`,
 * the trace being the stack's lines. A Plan, Tally or Report Cause becomes the run's (RunFailed's
 * causePath), and a failed batch child's lands in the Map's results, which Tally reads. So what leaves
 * a handler is small: the message is capped and the stack cut to one line. The whole error is logged
 * first, so the function's log keeps the frames. `name` never changes: Retry and Catch match on it.
 */
export const ERROR_MESSAGE_MAX = 300;
export const ERROR_STACK_MAX = 120;

/** Shortens `err` in place; returns whether anything had to change. */
export const boundError = (err: Error): boolean => {
  const message = truncate(String(err.message ?? ''), ERROR_MESSAGE_MAX);
  const stack = errorText(err, ERROR_STACK_MAX); // within the capped message: ERROR_STACK_MAX < ERROR_MESSAGE_MAX
  if (message === err.message && stack === err.stack) return false;
  try {
    err.message = message;
    err.stack = stack;
  } catch {
    // A frozen error keeps its size; the page budget assumes ours, which are not frozen.
    return false;
  }
  return true;
};

/**
 * Wraps a step handler: one structured log line per invocation (run id, and shop × month for group
 * steps, on every line) and whatever it throws leaves bounded (see above), logged whole first.
 */
export const withBoundedErrors =
  <R>(
    handler: (event: unknown, logger: Logger) => Promise<R>,
  ): ((event: unknown, context?: Context) => Promise<R>) =>
  async (event, context) => {
    const logger = invocationLogger(event, context);
    const started = Date.now();
    try {
      const out = await handler(event, logger);
      logger.info('step done', { ms: Date.now() - started });
      return out;
    } catch (err) {
      if (err instanceof Error) {
        logger.error('step failed (the Task Cause carries the error shortened)', {
          ms: Date.now() - started,
          error: { name: err.name, message: err.message, stack: err.stack },
        });
        boundError(err);
      }
      throw err;
    }
  };
