/** `s` if it fits in `max` characters, else its first `max − 1` and `…`: the one shortener for messages and ids. */
export const truncate = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** The name and message of anything thrown (an error-like object's own; anything else: `Error` and its text). */
export const errorParts = (err: unknown): { name: string; message: string } =>
  typeof err === 'object' && err !== null
    ? {
        name: String((err as { name?: unknown }).name ?? 'Error'),
        message: String((err as { message?: unknown }).message ?? ''),
      }
    : { name: 'Error', message: String(err) };

/**
 * The one error shortener: `Name: message` in at most `max` characters, for payloads, reports and
 * Task Causes. A thrown non-object is its own text.
 */
export const errorText = (err: unknown, max: number): string => {
  if (typeof err !== 'object' || err === null) return truncate(String(err), max);
  const { name, message } = errorParts(err);
  return truncate(`${name}: ${message}`, max);
};
