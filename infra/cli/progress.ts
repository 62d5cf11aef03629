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
