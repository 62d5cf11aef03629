/**
 * Per-key attribution of the archiver's S3 requests (issue 20): which API call went to which kind of
 * key, so a run's requests beyond the hot GETs can be named (index, part, intent, run file, …).
 * Bench-only: the handlers' meter counts by API; this adds the key, on the bench's own clients.
 */

/** One S3 request as the bench saw it (before retries: one entry per command sent). */
export interface TracedRequest {
  readonly api: string;
  readonly key: string;
}

/** The kind of key a request went to: the prefix and, under a run's scratch, its file. */
export const keyClass = (key: string): string => {
  if (key.startsWith('job-details/')) return 'hot';
  if (key.startsWith('job-details-cold/_shared/')) return 'shared part';
  if (key.startsWith('job-details-cold/')) return 'part';
  if (key.startsWith('job-details-index/_shared/')) {
    if (key.includes('/pending/')) return 'shared intent';
    if (key.endsWith('/shared.json')) return 'shared index';
    return 'shared index dir';
  }
  if (key.startsWith('job-details-index/')) {
    if (key.includes('/pending/')) return key.endsWith('.verified.json') ? 'verified' : 'intent';
    if (key.endsWith('/index.json')) return 'month index';
    return 'index dir';
  }
  if (key.startsWith('job-details-runs/')) {
    const rest = key.split('/').slice(2);
    const head = rest[0] ?? '';
    if (head === 'plan') return `run plan/${rest.at(-1) ?? ''}`;
    if (head === '') return 'runs (list)';
    return `run ${head.replace(/\.json$/, '')}`;
  }
  if (key.startsWith('job-details-state/')) return 'state';
  if (key.startsWith('job-details-erasure/')) return 'erasure';
  return key === '' ? '(bucket)' : 'other';
};

/** Adds a middleware to `client` that pushes each command and its key (or LIST prefix) to `into`. */
export const traceS3 = (client: { middlewareStack: unknown }, into: { list: TracedRequest[] }): void => {
  // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
  (client.middlewareStack as any).add(
    // biome-ignore lint/suspicious/noExplicitAny: generic pass-through middleware
    (next: any, context: { commandName?: string }) => async (args: any) => {
      const input = args.input ?? {};
      const key = String(input.Key ?? input.Prefix ?? input.Delete?.Objects?.[0]?.Key ?? '');
      into.list.push({ api: (context.commandName ?? '?').replace(/Command$/, ''), key });
      return next(args);
    },
    { step: 'initialize', name: 'benchRequestTrace' },
  );
};

/** `api class` → count, sorted by count. */
export const byKeyClass = (list: readonly TracedRequest[]): [string, number][] => {
  const m = new Map<string, number>();
  for (const r of list) {
    const k = `${r.api} ${keyClass(r.key)}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  return [...m].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
};
