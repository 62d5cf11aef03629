/** `s` if it fits in `max` characters, else its first `max − 1` and `…`: the one shortener for messages and ids. */
export const truncate = (s: string, max: number): string => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);
