/**
 * Runs ONE archiver step handler in its own process, as Lambda would, so its peak RSS is the step's
 * alone: `tsx step-child.ts <step|noop> <event.json> <out.json>`. The table, bucket and endpoints come
 * from the environment (the parent's embedded stack). Writes `{result | error, maxRssMb, seconds}`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const [step, eventFile, outFile] = process.argv.slice(2) as [string, string, string];

const load = async (s: string): Promise<(event: unknown) => Promise<unknown>> => {
  switch (s) {
    case 'archive-batch':
      return (
        require('../../../functions/archive-batch') as typeof import('../../../functions/archive-batch')
      ).handler;
    case 'noop':
      // The same imports, no work: the process's own floor.
      require('../../../functions/archive-batch');
      return async () => null;
    default:
      throw new Error(`unknown step ${s}`);
  }
};

const main = async () => {
  const handler = await load(step);
  const event: unknown = JSON.parse(readFileSync(eventFile, 'utf8'));
  const t0 = performance.now();
  let out: Record<string, unknown>;
  try {
    out = { result: await handler(event) };
  } catch (err) {
    const e = err as Error;
    out = { error: { name: e.name, message: e.message } };
  }
  out.seconds = (performance.now() - t0) / 1000;
  out.maxRssMb = process.resourceUsage().maxRSS / 1024;
  writeFileSync(outFile, JSON.stringify(out));
};

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
