import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Output } from './output';

/**
 * Progress of a long step. On a TTY a bar redrawn in place on stderr (throttled to ~10 redraws/s);
 * elsewhere (CI, pipes) a plain line every 10 % so logs stay short and readable.
 */
export interface Progress {
  /** `n` more units done; `note` replaces the bar's trailing text. */
  tick(n?: number, note?: string): void;
  /** `n` more units to do (steps whose size is learnt on the way, like a run's plan pages). */
  grow(n: number): void;
  /** Ends the bar (a final line either way). */
  done(summary?: string): void;
}

const BAR_WIDTH = 24;
const REDRAW_MS = 100;

export const startProgress = (
  io: Output,
  label: string,
  initialTotal: number,
  now: () => number = Date.now,
): Progress => {
  let total = initialTotal;
  let count = 0;
  let note = '';
  let lastDraw = 0;
  let lastDecile = -1;
  let finished = false;

  const line = (): string => {
    const pct = total > 0 ? Math.min(1, count / total) : 1;
    const text = `${label} ${count}/${total}${note ? ` ${note}` : ''}`;
    if (!io.tty) return `${text} (${Math.round(pct * 100)}%)`;
    const filled = Math.round(pct * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`;
    return `${bar} ${text}`.slice(0, Math.max(20, io.columns - 1));
  };

  const draw = (force: boolean): void => {
    if (io.tty) {
      const t = now();
      if (!force && t - lastDraw < REDRAW_MS) return;
      lastDraw = t;
      io.errRaw(`\r\x1b[2K${line()}`);
      return;
    }
    const decile = total > 0 ? Math.floor((10 * count) / total) : 10;
    if (force || decile > lastDecile) {
      lastDecile = decile;
      io.err(line());
    }
  };

  // A step of unknown size (grown later) starts silent instead of claiming 0/0 = 100 %.
  if (initialTotal > 0) draw(true);
  return {
    tick: (n = 1, text) => {
      if (finished) return;
      count += n;
      if (text !== undefined) note = text;
      draw(false);
    },
    grow: (n) => {
      if (finished || n === 0) return;
      total += n;
      lastDecile = total > 0 ? Math.floor((10 * count) / total) : 10;
      draw(false);
    },
    done: (summary) => {
      if (finished) return;
      finished = true;
      if (io.tty) {
        io.errRaw(`\r\x1b[2K${line()}\n`);
      } else if (lastDecile < 10 || count !== total) {
        io.err(line());
      }
      if (summary) io.err(summary);
    },
  };
};

/** Off a TTY, the request counts at which a line is printed: 100, 200, 400, … (a long run's log stays short). */
const FIRST_LINE_AT = 100;
const MIDDLEWARE = 'jobarchiveActivity';

/**
 * Progress of a command whose size is not known up front (`search`, `audit`, `forget`, `redact`
 * walk listings and indexes as they find them): the requests it has sent so far, by service, and
 * the time taken. Counted by a middleware on the context's clients, so the commands themselves do
 * not change. On a TTY one line redrawn in place (cleared at the end); elsewhere a plain line at
 * 100, 200, 400 … requests — a quick command prints nothing.
 */
export const watchRequests = (
  io: Output,
  label: string,
  clients: { readonly s3: S3Client; readonly ddb: DynamoDBDocumentClient },
  now: () => number = Date.now,
): { done(): void } => {
  const counts: Record<string, number> = { S3: 0, DynamoDB: 0 };
  const started = now();
  let total = 0;
  let nextLine = FIRST_LINE_AT;
  let lastDraw = 0;
  let drawn = false;
  const line = (): string => {
    const by = Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n.toLocaleString('en-US')}`)
      .join(', ');
    const s = Math.round((now() - started) / 1000);
    return `${label}: ${total.toLocaleString('en-US')} requests so far (${by}), ${s} s`;
  };
  const seen = (service: string): void => {
    counts[service] = (counts[service] ?? 0) + 1;
    total++;
    if (io.tty) {
      const t = now();
      if (t - lastDraw < REDRAW_MS) return;
      lastDraw = t;
      drawn = true;
      io.errRaw(`\r\x1b[2K${line().slice(0, Math.max(20, io.columns - 1))}`);
    } else if (total >= nextLine) {
      nextLine *= 2;
      io.err(line());
    }
  };
  const at = { step: 'initialize', name: MIDDLEWARE } as const;
  clients.s3.middlewareStack.add(
    (next) => async (args) => {
      seen('S3');
      return next(args);
    },
    at,
  );
  clients.ddb.middlewareStack.add(
    (next) => async (args) => {
      seen('DynamoDB');
      return next(args);
    },
    at,
  );
  return {
    done: () => {
      clients.s3.middlewareStack.remove(MIDDLEWARE);
      clients.ddb.middlewareStack.remove(MIDDLEWARE);
      if (drawn) io.errRaw('\r\x1b[2K');
    },
  };
};
