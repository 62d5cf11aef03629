/**
 * Lambda turns an error a handler throws into the Task's Cause — `{errorType, errorMessage, trace}`,
 * the trace being the stack's lines — and a group's Catch copies that Cause into the Map's results,
 * which share one 256 KB state with the rest of the page (shared/config.ts PLAN_PAGE_GROUPS_MAX). So
 * what leaves a handler is small: the message is capped and the stack cut to one line. The whole error
 * is logged first, so the function's log keeps the frames. `name` never changes: Retry and Catch
 * match on it.
 */
export const ERROR_MESSAGE_MAX = 300;
export const ERROR_STACK_MAX = 120;

const cut = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** Shortens `err` in place; returns whether anything had to change. */
export const boundError = (err: Error): boolean => {
  const message = cut(String(err.message ?? ''), ERROR_MESSAGE_MAX);
  const stack = cut(`${err.name}: ${message}`, ERROR_STACK_MAX);
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

/** Wraps a handler so whatever it throws leaves bounded (see above). */
export const withBoundedErrors =
  <R>(handler: (event: unknown) => Promise<R>): ((event: unknown) => Promise<R>) =>
  async (event) => {
    try {
      return await handler(event);
    } catch (err) {
      if (err instanceof Error) {
        const full = { name: err.name, message: err.message, stack: err.stack };
        if (boundError(err)) console.error('handler error (the Task Cause carries it shortened)', full);
      }
      throw err;
    }
  };
