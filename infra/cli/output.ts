import { setToJson } from '../../shared/jobs/row-json';

/**
 * Where a command writes: results on stdout, diagnostics and progress on stderr. Commands only see
 * this interface, so tests run them in-process with `memoryOutput()` and read back what they printed.
 */
export interface Output {
  /** A line (or block) of the result, on stdout. */
  out(text: string): void;
  /** A diagnostic or progress line, on stderr. */
  err(text: string): void;
  /** Raw stderr write without a newline (progress bar redraws on a TTY). */
  errRaw(text: string): void;
  /** stderr is a terminal: progress is drawn as a bar instead of plain lines. */
  readonly tty: boolean;
  readonly columns: number;
}

export const processOutput = (): Output => ({
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  errRaw: (text) => process.stderr.write(text),
  tty: process.stderr.isTTY === true,
  columns: process.stderr.columns ?? 80,
});

export interface MemoryOutput extends Output {
  readonly stdout: string[];
  readonly stderr: string[];
  /** stdout parsed as the one JSON document a `--json` command prints. */
  json<T = unknown>(): T;
}

export const memoryOutput = (): MemoryOutput => {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (text) => stdout.push(text),
    err: (text) => stderr.push(text),
    errRaw: (text) => stderr.push(text),
    tty: false,
    columns: 80,
    json: <T>() => JSON.parse(stdout.join('\n')) as T,
  };
};

/** JSON of anything a command returns: Sets become sorted arrays (row-json's order), Dates ISO strings, bigints strings. */
export const toJson = (value: unknown): string =>
  JSON.stringify(
    value,
    (_key, v: unknown) => {
      if (v instanceof Set) return setToJson(v);
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Uint8Array) return `<${v.length} bytes>`;
      return v;
    },
    2,
  );

export const printJson = (io: Output, value: unknown): void => io.out(toJson(value));

/** `1536` → `1.5 KiB`. */
export const formatBytes = (n: number): string => {
  if (!Number.isFinite(n)) return String(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
};

/** Rows as aligned text columns (first row = header). */
export const table = (rows: readonly (readonly (string | number)[])[]): string[] => {
  const cells = rows.map((r) => r.map(String));
  const widths: number[] = [];
  for (const r of cells) {
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  return cells.map((r) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
};
