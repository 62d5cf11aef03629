import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'aws-lambda';
import { ARCHIVER_STEPS, type ArchiverStep } from '../../infra/construct/step-functions';
import type { LocalRunResult, StepHandler } from '../../infra/local/runner';
import type { StepDeps } from '../../shared/archive/steps/context';

/**
 * A fault layer in front of the real handlers' S3 and DynamoDB clients (SDK middleware), scoped to one
 * Task invocation at a time (AsyncLocalStorage), and a per-Task wrapper around the real handlers that
 * the local runner binds in their place. The state machine is the synthesized one; nothing of its
 * flow is copied here.
 *
 * A fault sees every request of every invocation and may pass it on, fail it, or KILL the invocation:
 * from then on every request of that invocation fails at once (the process is gone: no cleanup, no
 * catch block gets to write anything) and the Task ends with the kill's error name — `Crash`, or
 * `Sandbox.Timedout` for a Lambda timeout — whatever the handler would have returned.
 *
 * Two places in the SDK stack: `call` faults run once per API call, before the SDK's retries (a kill
 * there is a crash; the input may be rewritten); `wire` faults run on every HTTP attempt, inside the
 * retries (a 503 or a dropped connection there is retried by the SDK as it would be in AWS).
 */

export interface Call {
  readonly service: 's3' | 'dynamodb';
  /** e.g. `PutObjectCommand`, `BatchGetItemCommand`. */
  readonly command: string;
  readonly input: Record<string, unknown>;
  readonly step: ArchiverStep;
}

export type Kill = (errorName?: string) => never;

export interface Fault {
  readonly at: 'call' | 'wire';
  /** How many times it struck (a case whose fault never struck tested nothing). */
  fired: number;
  handle(call: Call, send: () => Promise<unknown>, kill: Kill): Promise<unknown>;
}

interface Invocation {
  readonly step: ArchiverStep;
  dead: string | null;
}

const killed = (name: string): Error => Object.assign(new Error(`injected fault: ${name}`), { name });

export class FaultLayer {
  private readonly invocation = new AsyncLocalStorage<Invocation>();
  /** The armed fault (one per case). */
  fault: Fault | null = null;

  /** Adds the layer to the clients of the handlers' deps. */
  install(deps: Pick<StepDeps, 's3' | 'ddb'>): void {
    const { s3, ddb } = deps;
    this.addTo(s3 as unknown as Stackful, 's3');
    this.addTo(ddb as unknown as Stackful, 'dynamodb');
  }

  /** The handlers (the real ones), each wrapped so that an invocation the fault killed ends with the kill. */
  wrap(handlers: Readonly<Record<ArchiverStep, StepHandler>>): Record<ArchiverStep, StepHandler> {
    const one =
      (step: ArchiverStep): StepHandler =>
      (event: unknown, context: Context) => {
        const inv: Invocation = { step, dead: null };
        return this.invocation.run(inv, async () => {
          let out: unknown;
          try {
            out = await handlers[step](event, context);
          } catch (err) {
            if (inv.dead) throw killed(inv.dead);
            throw err;
          }
          // A killed process returns nothing, whatever its handler would have.
          if (inv.dead) throw killed(inv.dead);
          return out;
        });
      };
    return Object.fromEntries(ARCHIVER_STEPS.map((s) => [s, one(s)])) as Record<ArchiverStep, StepHandler>;
  }

  private addTo(client: Stackful, service: Call['service']): void {
    const layer =
      (at: Fault['at']) =>
      // biome-ignore lint/suspicious/noExplicitAny: SDK middleware is generic over every command
      (next: any, context: { commandName?: string }) =>
      // biome-ignore lint/suspicious/noExplicitAny: as above
      async (args: any) => {
        const inv = this.invocation.getStore();
        if (!inv) return next(args);
        if (inv.dead) throw killed(inv.dead);
        const fault = this.fault;
        if (!fault || fault.at !== at) return next(args);
        const kill: Kill = (errorName = 'Crash') => {
          inv.dead = errorName;
          throw killed(errorName);
        };
        const call = { service, command: context.commandName ?? '?', input: args.input, step: inv.step };
        return fault.handle(call, () => next(args), kill);
      };
    client.middlewareStack.add(layer('call'), { step: 'initialize', name: 'faultLayerCall', override: true });
    client.middlewareStack.add(layer('wire'), {
      step: 'finalizeRequest',
      priority: 'low',
      name: 'faultLayerWire',
      override: true,
    });
  }
}

interface Stackful {
  // biome-ignore lint/suspicious/noExplicitAny: SDK middleware stack
  readonly middlewareStack: { add(mw: any, opts: Record<string, unknown>): void };
}

/** Requests of `step` matching `pred`, the `nth` of them (1-based). */
export const nthCall = (step: ArchiverStep, pred: (c: Call) => boolean, nth = 1) => {
  let seen = 0;
  return (c: Call): boolean => c.step === step && pred(c) && ++seen === nth;
};

/** Kills the invocation just before the matching call reaches S3 / DynamoDB. */
export const crashBefore = (match: (c: Call) => boolean, errorName?: string): Fault => {
  const f: Fault = {
    at: 'call',
    fired: 0,
    handle: async (c, send, kill) => {
      if (f.fired === 0 && match(c)) {
        f.fired++;
        kill(errorName);
      }
      return send();
    },
  };
  return f;
};

/** Lets the matching call take effect, then kills the invocation before it hears the answer. */
export const crashAfter = (match: (c: Call) => boolean, errorName?: string): Fault => {
  const f: Fault = {
    at: 'call',
    fired: 0,
    handle: async (c, send, kill) => {
      const out = await send();
      if (f.fired === 0 && match(c)) {
        f.fired++;
        kill(errorName);
      }
      return out;
    },
  };
  return f;
};

/** The matching DeleteObjects removes the first half of its keys, then the invocation dies. */
export const crashMidDelete = (match: (c: Call) => boolean): Fault => {
  const f: Fault = {
    at: 'call',
    fired: 0,
    handle: async (c, send, kill) => {
      if (f.fired > 0 || c.command !== 'DeleteObjectsCommand' || !match(c)) return send();
      f.fired++;
      const del = c.input.Delete as { Objects: unknown[] };
      c.input.Delete = { ...del, Objects: del.Objects.slice(0, Math.ceil(del.Objects.length / 2)) };
      await send();
      return kill();
    },
  };
  return f;
};

/** The first `count` HTTP attempts matching `match` fail with `error()` (the SDK retries them). */
export const burst = (count: number, match: (c: Call) => boolean, error: () => Error): Fault => {
  const f: Fault = {
    at: 'wire',
    fired: 0,
    handle: async (c, send) => {
      if (f.fired < count && match(c)) {
        f.fired++;
        throw error();
      }
      return send();
    },
  };
  return f;
};

/** The matching attempt reaches the service, then its connection drops (the SDK retries the call). */
export const dropAfterSend = (match: (c: Call) => boolean): Fault => {
  const f: Fault = {
    at: 'wire',
    fired: 0,
    handle: async (c, send) => {
      const out = await send();
      if (f.fired === 0 && match(c)) {
        f.fired++;
        throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: {} });
      }
      return out;
    },
  };
  return f;
};

/** S3's answer to too many requests. */
export const slowDown = (): Error =>
  Object.assign(new Error('Please reduce your request rate.'), {
    name: 'SlowDown',
    $fault: 'server',
    $metadata: { httpStatusCode: 503 },
  });

/** DynamoDB's throttling answer. */
export const throttled = (): Error =>
  Object.assign(new Error('The level of configured provisioned throughput for the table was exceeded.'), {
    name: 'ProvisionedThroughputExceededException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
  });

/** A run as a fault matrix shows it: SUCCEEDED, or its status and the error it ended with. */
export const runStatus = (r: LocalRunResult): string =>
  r.status === 'SUCCEEDED'
    ? 'SUCCEEDED'
    : `${r.status} (${String((r.error as { error?: string })?.error ?? '')})`;

/** Prints a fault matrix under its title: the header row, then one row per case, in aligned columns. */
export const printMatrix = (title: string, rows: readonly (readonly string[])[]): void => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  const text = rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
  process.stdout.write(`\n${title}\n${text}\n\n`);
};
